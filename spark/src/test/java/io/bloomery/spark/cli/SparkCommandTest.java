package io.bloomery.spark.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.filter.MembershipFilter;
import io.bloomery.format.FilterFormat;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** `bloomery spark build` and `dedup`, run in-process on the module's shared session. */
class SparkCommandTest {
  private final SparkSession spark = io.bloomery.spark.SharedSparkAccess.session();

  @TempDir Path dir;

  private record Run(int code, String out, String err) {}

  private Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine line = SparkCommand.commandLine(new SparkCommand(master -> spark));
    line.setOut(new PrintWriter(out, true));
    line.setErr(new PrintWriter(err, true));
    int code = line.execute(args);
    return new Run(code, out.toString(), err.toString());
  }

  private Path items(int from, int to) throws IOException {
    List<String> lines = new ArrayList<>();
    for (int i = from; i < to; i++) {
      lines.add("https://example.com/page/" + i);
    }
    Path file = dir.resolve("items-" + from + "-" + to + ".txt");
    Files.write(file, lines, StandardCharsets.UTF_8);
    return file;
  }

  /** The file bloomery build writes: every line added in order, the lines read recorded as the count. */
  private static byte[] bloomeryBuild(Path items, boolean blocked) throws IOException {
    List<String> lines = Files.readAllLines(items, StandardCharsets.UTF_8);
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    if (blocked) {
      io.bloomery.blocked.BlockedBloomFilter filter = io.bloomery.blocked.BlockedBloomFilter.create(2_000, 0.01);
      lines.forEach(filter::add);
      FilterFormat.write(filter, lines.size(), out);
    } else {
      io.bloomery.filter.BloomFilter filter = io.bloomery.filter.BloomFilter.create(
          io.bloomery.hash.Protocols.defaultProtocol(), new byte[0],
          io.bloomery.sizing.BloomMath.sizing(2_000, 0.01).bits(), io.bloomery.sizing.BloomMath.sizing(2_000, 0.01).hashes());
      lines.forEach(filter::add);
      FilterFormat.write(filter, lines.size(), out);
    }
    return out.toByteArray();
  }

  @Test
  void buildWritesWhatBloomeryBuildWritesForBothKindsAndSharded() throws IOException {
    Path items = items(0, 2_000);
    Path classic = dir.resolve("classic.blmf");
    Run built = run("build", "--input", items.toString(), "--output", classic.toString(), "--expected", "2000", "--fpp", "0.01");
    assertThat(built.code()).as(built.err()).isZero();
    assertThat(built.out()).startsWith("wrote " + classic + ": classic filter");
    // The very bytes of bloomery build (the count is the items read, so partitioning does not matter).
    assertThat(Files.readAllBytes(classic)).isEqualTo(bloomeryBuild(items, false));

    Path blocked = dir.resolve("blocked.blmf");
    assertThat(run("build", "--input", items.toString(), "--output", blocked.toString(), "--expected", "2000",
        "--fpp", "0.01", "--kind", "blocked").code()).isZero();
    assertThat(Files.readAllBytes(blocked)).isEqualTo(bloomeryBuild(items, true));

    Path sharded = dir.resolve("sharded.blmf");
    Run slices = run("build", "--input", items.toString(), "--output", sharded.toString(), "--expected", "2000",
        "--fpp", "0.01", "--kind", "blocked", "--sharded");
    assertThat(slices.code()).as(slices.err()).isZero();
    assertThat(slices.out()).contains("2000 items offered");
    assertThat(Files.readAllBytes(sharded)).isEqualTo(Files.readAllBytes(blocked)); // the whole file, count included
  }

  @Test
  void dedupWritesExactlyTheRowsTheFilterCallsAbsent() throws IOException {
    Path seen = items(0, 2_000);
    Path filter = dir.resolve("seen.blmf");
    assertThat(run("build", "--input", seen.toString(), "--output", filter.toString(), "--expected", "2000", "--fpp", "0.01").code())
        .isZero();
    Path incoming = items(1_000, 3_000);
    Path out = dir.resolve("new");
    Run dedup = run("dedup", "--input", incoming.toString(), "--filter", filter.toString(), "--output", out.toString());
    assertThat(dedup.code()).as(dedup.err()).isZero();
    Set<String> written = new HashSet<>();
    try (Stream<Path> parts = Files.list(out)) {
      for (Path part : parts.filter(p -> p.getFileName().toString().startsWith("part-")).toList()) {
        written.addAll(Files.readAllLines(part, StandardCharsets.UTF_8));
      }
    }
    MembershipFilter seenFilter = FilterFormat.readBloom(filter);
    Set<String> expected = new HashSet<>();
    for (String line : Files.readAllLines(incoming, StandardCharsets.UTF_8)) {
      if (!seenFilter.mightContain(line)) {
        expected.add(line);
      }
    }
    assertThat(written).isEqualTo(expected).hasSizeGreaterThan(950); // 1,000 new URLs, about 1% false positives

    Run again = run("dedup", "--input", incoming.toString(), "--filter", filter.toString(), "--output", out.toString());
    assertThat(again.code()).isEqualTo(1);
    assertThat(again.err()).startsWith("bloomery spark: ").contains("already exists");
  }

  @Test
  void usageAndBadFilesGetOneLineAndTheirExitCode() throws IOException {
    Run missing = run("build", "--input", "x.txt", "--expected", "10", "--fpp", "0.01");
    assertThat(missing.code()).isEqualTo(2);
    assertThat(missing.err()).contains("Missing required option: '--output=F'");
    Run both = run("build", "--input", "x", "--output", "y", "--expected", "10", "--fpp", "0.01", "--bits", "64", "--hashes", "2");
    assertThat(both.code()).isEqualTo(2);
    Run badRate = run("build", "--input", items(0, 3).toString(), "--output", dir.resolve("f").toString(), "--expected", "10", "--fpp", "2");
    assertThat(badRate.code()).isEqualTo(2);
    assertThat(badRate.err()).startsWith("bloomery spark: false-positive rate p must be in (0, 1)");

    Path counting = dir.resolve("counting.blmf");
    FilterFormat.write(io.bloomery.counting.CountingBloomFilter.create(10, 0.01), counting);
    Run wrongKind = run("dedup", "--input", items(0, 3).toString(), "--filter", counting.toString(), "--output", dir.resolve("o").toString());
    assertThat(wrongKind.code()).isEqualTo(1);
    assertThat(wrongKind.err().strip()).isEqualTo("bloomery spark: " + counting
        + ": needs a classic or blocked Bloom filter, found a counting filter");
    assertThat(dir.resolve("o")).doesNotExist();
  }

  @Test
  void aNullItemFailsTheBuildNamingTheColumnAndLeavesNoOutputUnlessSkipped() throws IOException {
    Path csv = Files.writeString(dir.resolve("holes.csv"), "id,url\n1,https://a.example/\n2,\n3,https://c.example/\n");
    for (boolean sharded : List.of(false, true)) {
      Path out = dir.resolve("holes-" + sharded + ".blmf");
      List<String> args = new ArrayList<>(List.of("build", "--input", csv.toString(), "--format", "csv", "--column", "url",
          "--output", out.toString(), "--expected", "10", "--fpp", "0.01"));
      if (sharded) {
        args.add("--sharded");
      }
      Run refused = run(args.toArray(String[]::new));
      assertThat(refused.code()).as(refused.err()).isEqualTo(1);
      assertThat(refused.err()).startsWith("bloomery spark: ").contains("column 'url' holds a null");
      try (Stream<Path> left = Files.list(dir)) {
        assertThat(left.map(p -> p.getFileName().toString())).containsExactly("holes.csv");
      }
      args.add("--skip-nulls");
      Run skipped = run(args.toArray(String[]::new));
      assertThat(skipped.code()).as(skipped.err()).isZero();
      MembershipFilter filter = (MembershipFilter) FilterFormat.read(out);
      assertThat(filter.mightContain("https://a.example/")).isTrue();
      assertThat(filter.mightContain("https://c.example/")).isTrue();
      Files.delete(out);
    }
  }
}
