package io.bloomery.cli;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.BlockedBloomMath;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.filter.UnfoldableFilterException;
import io.bloomery.format.FilterFormat;
import io.bloomery.sizing.BloomMath;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code bloomery shrink}: folds an over-provisioned filter file in half, in place, while its rate allows. */
@Command(
    name = "shrink",
    mixinStandardHelpOptions = true,
    header = "Fold an over-provisioned filter in half, in place, without losing an item.",
    description = {
      "A classic filter (protocol xxh3-edh-v1) whose bit count is a power of two, or a",
      "blocked filter whose block count is, folds in half by OR-ing neighbouring bits",
      "(blocks): no rehash, and every item added still answers 'maybe'. The file is",
      "folded again and again while the folded filter's estimated false-positive rate",
      "(from its set bits) stays at most the target, then replaced atomically.",
      "Other filters (another size or protocol, another kind) are refused (exit 1);",
      "A file built with --bits set to a power of two (and --hashes) folds."
    })
final class ShrinkCommand implements Callable<Integer> {
  @ParentCommand BloomeryCommand root;

  @Parameters(paramLabel = "FILE", description = "The Bloomery filter file to shrink; replaced atomically.")
  Path file;

  @Option(names = "--target-fpp", paramLabel = "P", converter = ProbabilityConverter.class,
      description = "Highest estimated false-positive rate after folding (default: the filter's design rate,"
          + " its model rate at capacity).")
  Double targetFpp;

  @Override
  public Integer call() throws IOException {
    Object read = FilterFiles.read(file, FileFormat.BLOOMERY);
    MembershipFilter before;
    MembershipFilter after;
    double target;
    try {
      if (read instanceof BloomFilter classic) {
        target = targetFpp != null ? targetFpp : BloomMath.designRate(classic.bitSize(), classic.hashCount());
        after = classic.foldWhile(target, Long.MAX_VALUE);
      } else if (read instanceof BlockedBloomFilter blocked) {
        target = targetFpp != null ? targetFpp : BlockedBloomMath.blockedDesignRate(blocked.blockCount(),
            blocked.hashCount());
        after = blocked.foldWhile(target, Long.MAX_VALUE);
      } else {
        throw CliException.failure(file + ": holds a " + FilterFiles.kindName(read)
            + " filter, which cannot be folded; only classic and blocked filters can");
      }
      before = (MembershipFilter) read;
    } catch (UnfoldableFilterException e) {
      throw CliException.failure(file + ": " + e.getMessage(), e);
    }
    if (after == before) {
      root.out().printf(Locale.ROOT, "%s unchanged: one fold would raise the estimated false-positive rate above %s%n",
          file, Units.probability(target));
      root.out().flush();
      return BloomeryCommand.EXIT_OK;
    }
    long bytes = AtomicFile.write(file, out -> FilterFormat.write(after, out));
    root.out().printf(Locale.ROOT, "wrote %s: folded %d times to %s bits; estimated false-positive rate %s; %s%n",
        file, Long.numberOfTrailingZeros(bitSize(before)) - Long.numberOfTrailingZeros(bitSize(after)),
        Units.grouped(bitSize(after)), Units.probability(after instanceof BloomFilter c ? c.estimatedFpp()
            : ((BlockedBloomFilter) after).estimatedFpp()), Units.bytes(bytes));
    root.out().flush();
    return BloomeryCommand.EXIT_OK;
  }

  private static long bitSize(MembershipFilter f) {
    return f instanceof BloomFilter c ? c.bitSize() : ((BlockedBloomFilter) f).bitSize();
  }
}
