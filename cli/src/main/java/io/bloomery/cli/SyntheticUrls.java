package io.bloomery.cli;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

/**
 * A deterministic generator of crawler-like URLs, about 80 bytes each: the canonical copy behind the
 * benchmarks' crawler workload and {@code bloomery demo}/{@code bloomery bench}. {@code url(i)} depends
 * only on the seed and {@code i}, so "the first N URLs" and "N known non-members" (indexes N, N+1, …)
 * are reproducible anywhere. Byte-identical to the generator the CLI's demo shipped with.
 *
 * <p>Distinct indexes always give distinct URLs: the index is written in base 36 as the last
 * hyphen-separated token before {@code .html}, and nothing after the last hyphen is anything else.
 * The rest (host, section, date, slug words) is drawn from a SplitMix64 hash of (seed, index), so the
 * bytes look like real crawl frontiers: shared prefixes, varied lengths, ASCII.
 */
public final class SyntheticUrls {
  private static final String[] TLDS = {"com", "org", "net", "io", "de", "co.uk", "fr", "info", "news", "dev"};
  private static final String[] HOST_WORDS = {
    "daily", "metro", "global", "tech", "open", "civic", "green", "harbor", "north", "summit",
    "pixel", "river", "atlas", "maple", "cedar", "signal", "market", "review", "press", "journal"
  };
  private static final String[] SECTIONS = {
    "news", "world", "business", "science", "sport", "culture", "opinion", "travel", "health", "tech",
    "blog", "docs", "products", "forum", "events", "jobs"
  };
  private static final String[] SLUG_WORDS = {
    "city", "council", "votes", "new", "budget", "storm", "season", "record", "market", "rally",
    "study", "finds", "early", "signs", "local", "team", "wins", "final", "guide", "best",
    "review", "update", "launch", "report", "plans", "open", "data", "rules", "water", "energy",
    "school", "prices", "rise", "fall", "summer", "winter", "festival", "museum", "bridge", "trail"
  };

  private final long seed;

  /** URLs for {@code seed}; the same seed always gives the same sequence. */
  public SyntheticUrls(long seed) {
    this.seed = seed;
  }

  /** The URL with this index (index >= 0). */
  public String url(long index) {
    if (index < 0) {
      throw new IllegalArgumentException("index must be >= 0, got " + index);
    }
    long h = mix(seed ^ mix(index + 0x9E3779B97F4A7C15L));
    StringBuilder url = new StringBuilder(96).append("https://");
    if ((h & 3) != 0) {
      url.append("www.");
    }
    int host = (int) ((h >>> 2) & 0x3FFF); // 16,384 hosts: realistic prefix sharing
    url.append(HOST_WORDS[host % HOST_WORDS.length])
        .append('-')
        .append(HOST_WORDS[(host / HOST_WORDS.length) % HOST_WORDS.length])
        .append(host / (HOST_WORDS.length * HOST_WORDS.length))
        .append('.')
        .append(TLDS[(int) ((h >>> 16) % TLDS.length)]);
    url.append('/').append(SECTIONS[(int) ((h >>> 20) & 15)]);
    url.append('/').append(2015 + (int) ((h >>> 24) % 11));
    int month = 1 + (int) ((h >>> 28) % 12);
    url.append('/').append(month < 10 ? "0" : "").append(month).append('/');
    long words = mix(h);
    int wordCount = 3 + (int) ((words >>> 60) % 4);
    for (int i = 0; i < wordCount; i++) {
      url.append(SLUG_WORDS[(int) ((words >>> (i * 8)) & 0xFF) % SLUG_WORDS.length]).append('-');
    }
    url.append(Long.toString(index, 36)).append(".html");
    return url.toString();
  }

  /** The seed the benchmarks use. */
  public static final long BENCH_SEED = 2026;

  /** The URL's bytes (ASCII, so its UTF-8 encoding). */
  public byte[] urlBytes(long index) {
    return url(index).getBytes(StandardCharsets.US_ASCII);
  }

  /**
   * The query set every lookup benchmark uses, so their figures are comparable: {@code absent[i]} is
   * the known non-member {@code url(members + i)}, {@code present[i]} a member {@code url(j)} with j
   * drawn uniformly from [0, members) by a SplittableRandom seeded 42. Strings and their UTF-8 bytes
   * (Guava hashes the string, Bloomery the bytes).
   */
  public record Probes(String[] absentStrings, String[] presentStrings, byte[][] absent, byte[][] present) {}

  /** {@link Probes} of {@code queries} non-members and members for a filter of the first {@code members} URLs. */
  public Probes probes(long members, int queries) {
    String[] absentStrings = new String[queries];
    String[] presentStrings = new String[queries];
    byte[][] absent = new byte[queries][];
    byte[][] present = new byte[queries][];
    SplittableRandom random = new SplittableRandom(42);
    for (int i = 0; i < queries; i++) {
      absentStrings[i] = url(members + i);
      presentStrings[i] = url(random.nextLong(members));
      absent[i] = absentStrings[i].getBytes(StandardCharsets.UTF_8);
      present[i] = presentStrings[i].getBytes(StandardCharsets.UTF_8);
    }
    return new Probes(absentStrings, presentStrings, absent, present);
  }

  /** SplitMix64's finalizer: a bijective 64-bit mix. */
  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }
}
