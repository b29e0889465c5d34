package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.format.FilterFormat;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bloomery shrink}: folds a file in place to exactly core's folded filter, with every item still answering
 * "maybe"; the target bounds the folds; files that cannot fold are refused and left as they were.
 */
class ShrinkCommandTest {
  @TempDir Path dir;

  @Test
  void shrinkFoldsAClassicFileInPlaceWithoutLosingAnItem() throws IOException {
    List<String> words = IntStream.range(0, 200).mapToObj(i -> "item-" + i).toList();
    String items = Cli.lines(dir.resolve("items.txt"), words);
    Path file = Path.of(Cli.build(items, dir.resolve("f.blmf"), "--bits", "65536", "--hashes", "7"));
    BloomFilter original = (BloomFilter) FilterFormat.read(file);

    Cli.Result shrunk = Cli.run("shrink", file.toString(), "--target-fpp", "0.01");

    assertThat(shrunk.exitCode()).as(shrunk.toString()).isZero();
    BloomFilter expected = original.foldWhile(0.01, Long.MAX_VALUE);
    assertThat(expected.bitSize()).isLessThan(original.bitSize());
    assertThat(Files.readAllBytes(file)).isEqualTo(FilterFormat.toBytes(expected));
    assertThat(shrunk.out()).contains("wrote " + file + ": folded "
        + Long.numberOfTrailingZeros(original.bitSize() / expected.bitSize()) + " times");
    Cli.Result query = Cli.run("query", file.toString(), "--input", items);
    assertThat(query.exitCode()).as(query.toString()).isZero();
    assertThat(query.out()).contains("maybe\titem-199").doesNotContain("absent");
    assertThat(Files.list(dir).map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("items.txt", "f.blmf");
  }

  @Test
  void aBlockedFileFoldsAndATightTargetLeavesItUnchanged() throws IOException {
    BlockedBloomFilter blocked = BlockedBloomFilter.create(new byte[0], 64, 8);
    IntStream.range(0, 300).forEach(i -> blocked.add("b" + i));
    Path file = dir.resolve("b.blmf");
    FilterFormat.write(blocked, file);
    byte[] before = Files.readAllBytes(file);

    Cli.Result unchanged = Cli.run("shrink", file.toString(), "--target-fpp", "1e-12");
    assertThat(unchanged.exitCode()).as(unchanged.toString()).isZero();
    assertThat(unchanged.out()).contains("unchanged");
    assertThat(Files.readAllBytes(file)).isEqualTo(before);

    Cli.Result shrunk = Cli.run("shrink", file.toString());
    assertThat(shrunk.exitCode()).as(shrunk.toString()).isZero();
    assertThat(Files.readAllBytes(file)).isEqualTo(FilterFormat.toBytes(blocked.foldWhile(
        io.bloomery.blocked.BlockedBloomMath.blockedDesignRate(64, 8), Long.MAX_VALUE)));
    BlockedBloomFilter read = (BlockedBloomFilter) FilterFormat.read(file);
    assertThat(read.blockCount()).isLessThan(64);
    IntStream.range(0, 300).forEach(i -> assertThat(read.mightContain("b" + i)).isTrue());
  }

  @Test
  void refusesFilesThatCannotFoldAndLeavesThemAlone() throws IOException {
    String items = Cli.lines(dir.resolve("items.txt"), List.of("a", "b", "c"));
    Path odd = Path.of(Cli.build(items, dir.resolve("odd.blmf"), "--bits", "1000", "--hashes", "3"));
    byte[] before = Files.readAllBytes(odd);
    Cli.Result refused = Cli.run("shrink", odd.toString());
    assertThat(refused.exitCode()).isEqualTo(BloomeryCommand.EXIT_FAILURE);
    assertThat(refused.err()).contains(odd + ": a classic filter of 1000 bits cannot be folded");
    assertThat(Files.readAllBytes(odd)).isEqualTo(before);

    Path sha = Path.of(Cli.build(items, dir.resolve("sha.blmf"), "--bits", "1024", "--hashes", "3",
        "--protocol", "sha256-doc-v1"));
    Cli.Result protocol = Cli.run("shrink", sha.toString());
    assertThat(protocol.exitCode()).isEqualTo(BloomeryCommand.EXIT_FAILURE);
    assertThat(protocol.err()).contains("protocol sha256-doc-v1 cannot be folded");

    Path cms = dir.resolve("cms.blmf");
    FilterFormat.write(io.bloomery.sketch.CountMinSketch.initByDimensions(64, 4), cms);
    Cli.Result kind = Cli.run("shrink", cms.toString());
    assertThat(kind.exitCode()).isEqualTo(BloomeryCommand.EXIT_FAILURE);
    assertThat(kind.err()).contains("cannot be folded; only classic and blocked filters can");
  }
}
