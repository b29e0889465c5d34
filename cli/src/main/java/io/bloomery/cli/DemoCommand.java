package io.bloomery.cli;

import io.bloomery.filter.BloomFilter;
import io.bloomery.sizing.BloomMath;
import io.bloomery.sizing.BloomSizing;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.lang.ref.Reference;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/**
 * {@code bloomery demo}: the crawler walkthrough on generated URLs. Plan a filter for N URLs, build
 * it, probe known members and known non-members, and compare with what an exact {@code
 * HashSet<String>} of the same URLs costs.
 *
 * <p>Measurements, stated as such in the output: lookups per second are wall-clock over pre-generated
 * byte arrays on one thread after a short warm-up; the HashSet's memory is the difference in used heap
 * after full garbage collections with and without the set (so it counts the String objects, their byte
 * arrays, the hash nodes and the table: everything the set retains).
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    header = "The crawler walkthrough on generated URLs (10M by default).",
    description = {
      "Synthetic URLs of about 80 bytes: plan a classic filter, build it, probe",
      "1M known members and 1M known non-members, and report lookups/s, bits per",
      "key, the realized false-positive rate beside the model's, and the heap an",
      "exact HashSet<String> of the same URLs takes (measured). The default 10M",
      "URLs need about 3 GB of heap (./bloomery gives the JVM 6 GB)."
    })
final class DemoCommand implements Callable<Integer> {
  /** Probes per class (members, non-members): 1M, or N members when N is smaller. */
  static final long PROBES = 1_000_000;

  @ParentCommand BloomeryCommand root;

  @Option(names = "--urls", paramLabel = "N", defaultValue = "10000000", converter = CountConverter.class,
      description = "How many URLs the crawler has seen (default: ${DEFAULT-VALUE}).")
  long urls;

  @Option(names = "--fpp", paramLabel = "P", defaultValue = "0.01", converter = ProbabilityConverter.class,
      description = "Target false-positive rate (default: ${DEFAULT-VALUE}).")
  double fpp;

  @Option(names = "--seed", paramLabel = "S", defaultValue = "42",
      description = "Seed of the URL generator (default: ${DEFAULT-VALUE}); the filter itself uses the empty seed.")
  long seed;

  @Option(names = "--json", description = "Print the figures as JSON (snake_case keys) at the end, instead of text.")
  boolean json;

  @Override
  public Integer call() {
    PrintWriter out = root.out();
    Report report = new Report();
    report.urls = urls;
    report.fppTarget = fpp;
    SyntheticUrls generator = new SyntheticUrls(seed);
    if (urls > Integer.MAX_VALUE - 2 * PROBES) {
      throw CliException.usage("--urls " + urls + " is more than this demo holds in memory; try 10M");
    }
    say(out, "Bloomery demo: a crawler that must not re-fetch URLs");
    say(out, String.format(Locale.ROOT, "  %s synthetic URLs, e.g. %s", Units.grouped(urls), generator.url(0)));
    double load = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    say(out, String.format(Locale.ROOT, "  Java %s, %d CPUs available, max heap %s, system load average %s",
        Runtime.version(), Runtime.getRuntime().availableProcessors(), Units.bytesShort(Runtime.getRuntime().maxMemory()),
        load < 0 ? "n/a" : String.format(Locale.ROOT, "%.1f (timings are shared with whatever else runs)", load)));
    report.loadAverage = load;

    // 1. Plan.
    BloomSizing plan = BloomMath.sizing(urls, fpp);
    report.bits = plan.bits();
    report.hashes = plan.hashes();
    report.bitsPerKey = plan.bitsPerKey();
    report.bitmapBytes = plan.bitmapBytes();
    say(out, String.format(Locale.ROOT, "%n1. plan    m = %s bits (%s bitmap), k = %d: %.2f bits per URL for a %s false-positive rate",
        Units.grouped(plan.bits()), Units.bytesShort(plan.bitmapBytes()), plan.hashes(), plan.bitsPerKey(), Units.probability(fpp)));

    // 2. Build.
    BloomFilter filter = BloomFilter.create(urls, fpp);
    long totalBytes = 0;
    long start = System.nanoTime();
    try (ProgressBar progress = new ProgressBar(root.err(), root.terminal() && !json, "   build", urls, "URLs")) {
      for (long i = 0; i < urls; i++) {
        byte[] url = generator.urlBytes(i);
        totalBytes += url.length;
        filter.add(url);
        progress.update(i + 1);
      }
    }
    report.buildSeconds = seconds(start);
    report.meanUrlBytes = (double) totalBytes / urls;
    say(out, String.format(Locale.ROOT,
        "2. build   %s URLs (mean %.1f bytes) generated and added in %.1f s; fill %.1f%%, estimated fpp %s",
        Units.grouped(urls), report.meanUrlBytes, report.buildSeconds, filter.fillRatio() * 100,
        Units.probability(filter.estimatedFpp())));

    // 3. Probe members and known non-members (indexes past N: never inserted).
    long memberProbes = Math.min(PROBES, urls);
    byte[][] members = new byte[(int) memberProbes][];
    long stride = Math.max(1, urls / memberProbes);
    for (int i = 0; i < members.length; i++) {
      members[i] = generator.urlBytes(i * stride);
    }
    byte[][] nonMembers = new byte[(int) PROBES][];
    for (int i = 0; i < nonMembers.length; i++) {
      nonMembers[i] = generator.urlBytes(urls + i);
    }
    warmUp(filter, members, nonMembers);
    start = System.nanoTime();
    long memberHits = countMaybe(filter, members);
    double memberSeconds = seconds(start);
    start = System.nanoTime();
    long falsePositives = countMaybe(filter, nonMembers);
    double nonMemberSeconds = seconds(start);
    double probeSeconds = memberSeconds + nonMemberSeconds;
    report.memberLookupsPerSecond = members.length / memberSeconds;
    report.nonMemberLookupsPerSecond = nonMembers.length / nonMemberSeconds;
    report.memberProbes = members.length;
    report.falseNegatives = members.length - memberHits;
    report.nonMemberProbes = nonMembers.length;
    report.falsePositives = falsePositives;
    report.realizedFpp = (double) falsePositives / nonMembers.length;
    report.modelFpp = BloomMath.falsePositiveRate(plan.bits(), plan.hashes(), urls);
    double spread = 3.29 * Math.sqrt(report.modelFpp * (1 - report.modelFpp) / nonMembers.length);
    report.fppLow = Math.max(0, report.modelFpp - spread);
    report.fppHigh = report.modelFpp + spread;
    report.lookupsPerSecond = (members.length + nonMembers.length) / probeSeconds;
    say(out, String.format(Locale.ROOT, "3. probe   %s known members: %s false negatives (must be 0)",
        Units.grouped(members.length), Units.grouped(report.falseNegatives)));
    say(out, String.format(Locale.ROOT,
        "          %s known non-members: %s said maybe = realized FPR %s; model %s (99.9%% binomial range %s..%s)%s",
        Units.grouped(nonMembers.length), Units.grouped(falsePositives), Units.probability(report.realizedFpp),
        Units.probability(report.modelFpp), Units.probability(report.fppLow), Units.probability(report.fppHigh),
        report.realizedFpp >= report.fppLow && report.realizedFpp <= report.fppHigh ? "" : "  OUTSIDE the range"));
    say(out, String.format(Locale.ROOT,
        "          %s lookups in %.2f s = %s lookups/s (members %s/s, non-members %s/s; measured: one thread, wall clock, after warm-up)",
        Units.grouped(members.length + nonMembers.length), probeSeconds, Units.count(report.lookupsPerSecond),
        Units.count(report.memberLookupsPerSecond), Units.count(report.nonMemberLookupsPerSecond)));
    members = null;
    nonMembers = null;

    // 4. What an exact in-memory set of the same URLs costs.
    measureHashSet(generator, report);
    if (report.hashSetBytes > 0) {
      say(out, String.format(Locale.ROOT,
          "4. exact   HashSet<String> of the same %s URLs: %s of heap = %.0f bytes per URL (measured: used heap",
          Units.grouped(urls), Units.bytesShort(report.hashSetBytes), (double) report.hashSetBytes / urls));
      say(out, "          after full GC with the set reachable minus before it was built)");
      say(out, String.format(Locale.ROOT,
          "          the same %s probes against the set: %s lookups/s (the filter: %s lookups/s, same conditions)",
          Units.grouped(Math.min(PROBES, urls) + PROBES), Units.count(report.hashSetLookupsPerSecond),
          Units.count(report.lookupsPerSecond)));
      say(out, String.format(Locale.ROOT,
          "          the filter's bitmap is %s: %.0fx smaller; it answers 'absent' for ~%.0f%% of new URLs without asking the store",
          Units.bytesShort(plan.bitmapBytes()), (double) report.hashSetBytes / plan.bitmapBytes(), (1 - report.realizedFpp) * 100));
    } else {
      say(out, "4. exact   HashSet<String> not measured: " + report.hashSetNote);
    }
    say(out, "");
    say(out, "A 'maybe' is only a candidate: the crawler confirms it against its record of visited URLs.");
    if (json) {
      report.write(new JsonWriter(out));
    }
    out.flush();
    if (report.falseNegatives > 0) {
      throw CliException.failure(report.falseNegatives + " false negatives: the filter lost members; this is a bug");
    }
    return BloomeryCommand.EXIT_OK;
  }

  private void say(PrintWriter out, String line) {
    PrintWriter target = json ? root.err() : out;
    target.println(line);
    target.flush();
    StandardOutput.requireWritable(target); // a demo nobody can read stops at once
  }

  private void measureHashSet(SyntheticUrls generator, Report report) {
    Set<String> exact = null;
    long before = usedHeapAfterGc();
    long estimate = hashSetBytesEstimate(urls, report.meanUrlBytes);
    long maxHeap = Runtime.getRuntime().maxMemory();
    long wanted = heapForHashSet(before, estimate);
    if (wanted > maxHeap) {
      // Building it anyway would run the heap full and spend minutes collecting before the OOM.
      report.hashSetNote = "it would need about " + Units.bytesShort(estimate) + " of heap and only "
          + Units.bytesShort(Math.max(0, maxHeap - before)) + " of the " + Units.bytesShort(maxHeap)
          + " maximum is free; rerun with BLOOMERY_JAVA_OPTS=" + CliErrors.heapOption(wanted)
          + " to measure it";
      return;
    }
    try (ProgressBar progress = new ProgressBar(root.err(), root.terminal() && !json, "   exact", urls, "URLs")) {
      exact = new HashSet<>();
      for (long i = 0; i < urls; i++) {
        exact.add(generator.url(i));
        progress.update(i + 1);
      }
      progress.close(); // off the screen before the heap is measured
      long after = usedHeapAfterGc();
      report.hashSetBytes = after - before;
      report.hashSetLookupsPerSecond = hashSetLookupsPerSecond(exact, generator);
      Reference.reachabilityFence(exact);
    } catch (OutOfMemoryError e) {
      exact = null;
      report.hashSetNote = "the heap (" + Units.bytesShort(maxHeap) + ") ran out while building it (estimated "
          + Units.bytesShort(estimate) + "); rerun with BLOOMERY_JAVA_OPTS="
          + CliErrors.heapOption(Math.max(heapForHashSet(before, estimate), 2 * maxHeap));
    }
  }

  /**
   * A lower estimate of what a {@code HashSet<String>} of {@code urls} Latin-1 strings of mean length
   * {@code meanBytes} retains, with compressed references: per entry the String (24 bytes), its byte
   * array (16-byte header plus the bytes, padded to 8), the HashMap node (32) and its share of the
   * table at load factor 0.75 (about 4 / 0.75 bytes, doubled while the table is being resized).
   */
  static long hashSetBytesEstimate(long urls, double meanBytes) {
    long array = (long) Math.ceil((16 + meanBytes) / 8) * 8;
    double perUrl = 24 + array + 32 + 2 * 4 / 0.75;
    return (long) Math.min(Long.MAX_VALUE, urls * perUrl);
  }

  /**
   * The maximum heap the set needs: what is in use now plus the set, with a quarter more so the
   * collector is not left thrashing a near-full heap.
   */
  static long heapForHashSet(long usedBefore, long estimate) {
    return (long) Math.min(Long.MAX_VALUE, (usedBefore + estimate) * 1.25);
  }

  /** The same probes as step 3 (1M members, 1M non-members) against the exact set, as Strings. */
  private long hashSetLookupsPerSecond(Set<String> exact, SyntheticUrls generator) {
    long memberProbes = Math.min(PROBES, urls);
    long stride = Math.max(1, urls / memberProbes);
    String[] probes = new String[(int) (memberProbes + PROBES)];
    for (int i = 0; i < memberProbes; i++) {
      probes[i] = generator.url(i * stride);
    }
    for (int i = 0; i < PROBES; i++) {
      probes[(int) memberProbes + i] = generator.url(urls + i);
    }
    long hits = 0;
    for (int i = 0; i < Math.min(200_000, probes.length); i++) {
      hits += exact.contains(probes[i]) ? 1 : 0; // warm-up
    }
    long start = System.nanoTime();
    for (String probe : probes) {
      hits += exact.contains(probe) ? 1 : 0;
    }
    double elapsed = seconds(start);
    if (hits < 0) {
      throw new AssertionError(hits);
    }
    return Math.round(probes.length / elapsed);
  }

  private static long usedHeapAfterGc() {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  private static void warmUp(BloomFilter filter, byte[][] members, byte[][] nonMembers) {
    int rounds = Math.min(200_000, Math.min(members.length, nonMembers.length));
    long sink = 0;
    for (int i = 0; i < rounds; i++) {
      sink += filter.mightContain(members[i]) ? 1 : 0;
      sink += filter.mightContain(nonMembers[i]) ? 1 : 0;
    }
    if (sink < 0) {
      throw new AssertionError(sink);
    }
  }

  private static long countMaybe(BloomFilter filter, byte[][] items) {
    long maybe = 0;
    for (byte[] item : items) {
      if (filter.mightContain(item)) {
        maybe++;
      }
    }
    return maybe;
  }

  private static double seconds(long startNanos) {
    return (System.nanoTime() - startNanos) / 1e9;
  }

  /** The demo's figures, for --json. */
  private static final class Report {
    long urls;
    double fppTarget;
    long bits;
    int hashes;
    double bitsPerKey;
    long bitmapBytes;
    double meanUrlBytes;
    double buildSeconds;
    long memberProbes;
    long falseNegatives;
    long nonMemberProbes;
    long falsePositives;
    double realizedFpp;
    double modelFpp;
    double fppLow;
    double fppHigh;
    double lookupsPerSecond;
    double memberLookupsPerSecond;
    double nonMemberLookupsPerSecond;
    long hashSetBytes;
    long hashSetLookupsPerSecond;
    String hashSetNote = "";
    double loadAverage;

    void write(JsonWriter w) {
      w.beginObject()
          .field("urls", urls)
          .field("mean_url_bytes", meanUrlBytes)
          .field("fpp_target", fppTarget)
          .field("bits", bits)
          .field("hashes", hashes)
          .field("bits_per_key", bitsPerKey)
          .field("bitmap_bytes", bitmapBytes)
          .field("build_seconds", buildSeconds)
          .field("member_probes", memberProbes)
          .field("false_negatives", falseNegatives)
          .field("nonmember_probes", nonMemberProbes)
          .field("false_positives", falsePositives)
          .field("realized_fpp", realizedFpp)
          .field("model_fpp", modelFpp)
          .field("model_fpp_999_low", fppLow)
          .field("model_fpp_999_high", fppHigh)
          .field("lookups_per_second", lookupsPerSecond)
          .field("member_lookups_per_second", memberLookupsPerSecond)
          .field("nonmember_lookups_per_second", nonMemberLookupsPerSecond)
          .field("lookups_measurement", "one thread, wall clock over pre-generated byte arrays, after warm-up")
          .field("hashset_bytes", hashSetBytes)
          .field("hashset_lookups_per_second", hashSetLookupsPerSecond)
          .field("hashset_bytes_per_url", hashSetBytes > 0 ? (double) hashSetBytes / urls : Double.NaN)
          .field("hashset_measurement", hashSetBytes > 0
              ? "used heap after full GC with the HashSet<String> reachable, minus before it was built"
              : hashSetNote)
          .field("available_processors", Runtime.getRuntime().availableProcessors())
          .field("system_load_average", loadAverage)
          .field("java", Runtime.version().toString())
          .endObject()
          .finish();
    }
  }
}
