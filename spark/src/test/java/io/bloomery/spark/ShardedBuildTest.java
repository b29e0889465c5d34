package io.bloomery.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.filter.FilterKind;
import io.bloomery.format.FilterFormat;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The sliced build against the direct one, byte for byte, and what a damaged slice does. */
class ShardedBuildTest {
  private final SparkSession spark = SharedSpark.session();

  @TempDir Path dir;

  private Dataset<Row> lines() throws IOException {
    return spark.read().text(TestItems.itemsFile(dir, 12_000).toString()).repartition(3);
  }

  private static Path local(List<ShardedBuild.Slice> slices, int index) {
    String file = slices.stream().filter(s -> s.index() == index).findFirst().orElseThrow().file();
    return Path.of(new org.apache.hadoop.fs.Path(file).toUri().getPath());
  }

  @ParameterizedTest
  @CsvSource({"CLASSIC_BLOOM, 5", "CLASSIC_BLOOM, 1", "BLOCKED_BLOOM, 3", "BLOCKED_BLOOM, 0"})
  void slicesAssembleIntoTheDirectBuildsBits(FilterKind kind, int slices) throws IOException {
    FilterSpec spec = kind == FilterKind.CLASSIC_BLOOM ? FilterSpec.classic(15_000, 0.01) : FilterSpec.blocked(15_000, 0.01);
    Dataset<Row> lines = lines();
    byte[] direct = FilterFormat.toBytes(BloomerySpark.build(lines, "value", spec));
    Path out = dir.resolve("sharded.blmf");
    ShardedBuild.Result result = BloomerySpark.buildSharded(lines, "value", spec, out.toString(), slices);
    byte[] sharded = Files.readAllBytes(out);
    assertThat(sharded).isEqualTo(direct); // the whole file, inserted count and CRC included
    assertThat(TestItems.count(sharded)).isEqualTo(result.items()).isEqualTo(lines.count());
    assertThat(result.fileBytes()).isEqualTo(sharded.length);
    assertThat(FilterFormat.fromBytes(sharded)).isNotNull(); // a valid file: header, payload and CRC agree
    try (Stream<Path> left = Files.list(dir)) {
      assertThat(left.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("items.txt", "sharded.blmf");
    }
  }

  @Test
  void anEmptyDatasetGivesTheEmptyFilter() throws IOException {
    for (FilterSpec spec : List.of(FilterSpec.classic(1_000, 0.01), FilterSpec.blocked(1_000, 0.01))) {
      Dataset<Row> none = spark.createDataset(List.<String>of(), org.apache.spark.sql.Encoders.STRING()).toDF("u");
      Path out = dir.resolve("empty.blmf");
      assertThat(BloomerySpark.buildSharded(none, "u", spec, out.toString(), 2).items()).isZero();
      assertThat(Files.readAllBytes(out)).isEqualTo(FilterFormat.toBytes(spec.newFilter()));
    }
  }

  @Test
  void aTruncatedOrCorruptedSliceFailsTheAssemblyAndLeavesNoOutput() throws IOException {
    FilterSpec spec = FilterSpec.blocked(15_000, 0.01);
    Dataset<Row> lines = lines();
    ShardedBuild.Layout layout = new ShardedBuild.Layout(spec, 3);
    Configuration conf = spark.sparkContext().hadoopConfiguration();
    ItemColumn items = ItemColumn.resolve(lines, "value", spec.nulls());
    Path out = dir.resolve("out.blmf");

    List<ShardedBuild.Slice> slices = ShardedBuild.writeSlices(lines, items, layout, dir.resolve("s1").toString(), conf);
    Path second = local(slices, 1);
    try (RandomAccessFile file = new RandomAccessFile(second.toFile(), "rw")) {
      file.seek(100);
      int b = file.read();
      file.seek(100);
      file.write(b ^ 0x10);
    }
    assertThatThrownBy(() -> ShardedBuild.assemble(conf, layout, slices, out.toString()))
        .isInstanceOf(BloomerySparkException.class).hasMessageContaining("slice 1").hasMessageContaining("corrupt");
    assertThat(out).doesNotExist();

    List<ShardedBuild.Slice> again = ShardedBuild.writeSlices(lines, items, layout, dir.resolve("s2").toString(), conf);
    Path last = local(again, 2);
    try (RandomAccessFile file = new RandomAccessFile(last.toFile(), "rw")) {
      file.setLength(file.length() - 8);
    }
    assertThatThrownBy(() -> ShardedBuild.assemble(conf, layout, again, out.toString()))
        .isInstanceOf(BloomerySparkException.class).hasMessageContaining("slice 2").hasMessageContaining("expected");
    assertThat(out).doesNotExist();
    try (Stream<Path> left = Files.list(dir)) {
      assertThat(left.filter(p -> p.getFileName().toString().endsWith(".tmp"))).isEmpty();
    }
  }
}
