package io.bloomery.cli;

import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.hash.HashProtocol;
import io.bloomery.hash.ProtocolId;
import io.bloomery.hash.Protocols;
import io.bloomery.plan.FilterPlan;
import io.bloomery.sizing.BloomMath;
import io.bloomery.sizing.BloomSizing;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Option;

/**
 * The options that say what classic filter to build, parsed into core's one plan type: {@link #plan} gives the
 * {@link FilterPlan} (planned from N and P, or given as m and k), and {@link #newFilter} builds it with the hash
 * protocol and seed these options name. Shared by {@code build}; a mixin so other commands that create filters can
 * reuse it.
 */
final class FilterPlanOptions {

  @ArgGroup(exclusive = true, multiplicity = "1", heading = "Size (one of):%n")
  Size size;

  @Option(names = "--protocol", paramLabel = "NAME",
      description = "Hash protocol: xxh3-edh-v1 (the default), sha256-doc-v1, sha256-index8, sha256-index16,"
          + " guava-murmur128-mitz64 (the default with --output-format guava), redisbloom-murmur64a.")
  String protocol;

  @Option(names = "--seed", paramLabel = "TEXT",
      description = "Seed (domain prefix) as UTF-8 text. Default: empty, so filters built from the same input can be merged.")
  String seedText;

  @Option(names = "--seed-hex", paramLabel = "HEX", description = "Seed as hex bytes, e.g. 6c6162.")
  String seedHex;

  static final class Size {
    @ArgGroup(exclusive = false, multiplicity = "1")
    Planned planned;

    @ArgGroup(exclusive = false, multiplicity = "1")
    Explicit explicit;
  }

  /** N and P for {@link io.bloomery.sizing.BloomMath#sizing}; also {@code bloomery plan}'s options. */
  static final class Planned {
    @Option(names = "--expected", required = true, paramLabel = "N", converter = CountConverter.class,
        description = "Number of distinct items to size for (1000000, 1_000_000, 1e6, 1M; with --fpp).")
    long expected;

    @Option(names = "--fpp", required = true, paramLabel = "P", converter = ProbabilityConverter.class,
        description = "Target false-positive rate on non-members, in (0, 1): 0.01 or 1%%.")
    double fpp;
  }

  static final class Explicit {
    @Option(names = "--bits", required = true, paramLabel = "M", converter = CountConverter.class,
        description = "Exactly M bits (with --hashes).")
    long bits;

    @Option(names = "--hashes", required = true, paramLabel = "K", description = "Exactly K hash positions per item.")
    int hashes;
  }

  /**
   * The protocol named by {@code --protocol}, else the default for the output format; an unknown name
   * is a usage error listing the known ones.
   */
  HashProtocol hashProtocol(FileFormat outputFormat) {
    if (protocol == null) {
      return outputFormat == FileFormat.GUAVA
          ? Protocols.of(ProtocolId.GUAVA_MURMUR128_MITZ64)
          : Protocols.defaultProtocol();
    }
    try {
      return Protocols.byName(protocol);
    } catch (IllegalArgumentException e) {
      throw CliException.usage("--protocol: '" + protocol + "' is not a protocol build can use (it accepts: "
          + String.join(", ", buildableProtocolNames()) + ")", e);
    }
  }

  /**
   * The protocols a classic filter can be built with, in code order: exactly the general position
   * functions ({@link Protocols#implemented()}); kind-bound ones (Parquet split-block, blocked,
   * RedisBloom CMS/TOPK) are not offered.
   */
  static java.util.List<String> buildableProtocolNames() {
    return Protocols.implemented().stream().map(ProtocolId::protocolName).toList();
  }

  byte[] seedBytes() {
    if (seedText != null && seedHex != null) {
      throw CliException.usage("--seed and --seed-hex are mutually exclusive (specify only one)");
    }
    if (seedHex != null) {
      return Hex.decodeOption("--seed-hex", seedHex);
    }
    return seedText == null ? new byte[0] : seedText.getBytes(StandardCharsets.UTF_8);
  }

  /**
   * The classic filter these options describe: {@link BloomMath#sizing} of N and P, or exactly m and k. A planned
   * size for Guava's protocol is rounded up to whole 64-bit words, as Guava itself does. Its model rate is taken at
   * N, or for an explicit size at the capacity (m, k) are optimal for.
   */
  FilterPlan plan(HashProtocol hashProtocol) {
    if (size.planned != null) {
      long n = size.planned.expected;
      BloomSizing sizing = BloomMath.sizing(n, size.planned.fpp);
      long bits = sizing.bits();
      String reason = "classic sizing for " + n + " items at " + size.planned.fpp;
      if (hashProtocol.id() == ProtocolId.GUAVA_MURMUR128_MITZ64) {
        bits = Math.ceilDiv(bits, Long.SIZE) * Long.SIZE;
        reason += ", rounded up to whole 64-bit words as Guava does";
      }
      return classicPlan(bits, sizing.hashes(), n, reason);
    }
    long bits = size.explicit.bits;
    int hashes = size.explicit.hashes;
    long n = Math.max(1, BloomMath.capacityForHashes(bits, hashes));
    return classicPlan(bits, hashes, n, "the size given: --bits " + bits + " --hashes " + hashes);
  }

  private static FilterPlan classicPlan(long bits, int hashes, long n, String reason) {
    return new FilterPlan(FilterKind.CLASSIC_BLOOM, bits, hashes, Math.ceilDiv(bits, Long.SIZE) * Long.BYTES,
        bits / (double) n, BloomMath.falsePositiveRate(bits, hashes, n), reason);
  }

  /**
   * An empty filter of {@link #plan} with these options' protocol and seed; parameters the protocol cannot express
   * are a usage error.
   */
  BloomFilter newFilter(FileFormat outputFormat) {
    HashProtocol hashProtocol = hashProtocol(outputFormat);
    byte[] seedBytes = seedBytes();
    if (outputFormat == FileFormat.GUAVA && hashProtocol.id() != ProtocolId.GUAVA_MURMUR128_MITZ64) {
      throw CliException.usage("--output-format guava needs --protocol "
          + ProtocolId.GUAVA_MURMUR128_MITZ64.protocolName() + " (Guava's file records no protocol)");
    }
    try {
      FilterPlan plan = plan(hashProtocol);
      CliErrors.requireHeap("a filter of " + Units.count(plan.bits(), "bit", "bits"), plan.bitmapBytes());
      return BloomFilter.create(hashProtocol, seedBytes, plan.bits(), plan.hashes());
    } catch (IllegalArgumentException e) {
      throw CliException.usage(e.getMessage(), e);
    }
  }
}
