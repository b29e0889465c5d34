package io.bloomery.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.filter.FilterKind;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.format.FilterFormat;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** BloomerySpark.build against the single-machine build of bloomery build and the library. */
class BuildTest {
  private final SparkSession spark = SharedSpark.session();

  @TempDir Path dir;

  static FilterSpec spec(FilterKind kind) {
    return kind == FilterKind.CLASSIC_BLOOM ? FilterSpec.classic(25_000, 0.01) : FilterSpec.blocked(25_000, 0.01);
  }

  @ParameterizedTest
  @EnumSource(value = FilterKind.class, names = {"CLASSIC_BLOOM", "BLOCKED_BLOOM"})
  void everyPartitioningWritesTheCliBuildsFileByteForByte(FilterKind kind) throws IOException {
    Path file = TestItems.itemsFile(dir, 20_000);
    List<byte[]> items = TestItems.cliItems(file);
    byte[] cli = TestItems.singleMachine(spec(kind), items);
    Dataset<Row> lines = spark.read().text(file.toString());
    // One partition in file order, several in a shuffled order, and more partitions than cores: the
    // duplicates land in different partitions and arrive in different orders, the file does not change.
    for (Dataset<Row> partitioned : List.of(lines.coalesce(1), lines.repartition(5), lines.repartition(11))) {
      byte[] ours = FilterFormat.toBytes(BloomerySpark.build(partitioned, "value", spec(kind)));
      assertThat(ours).as("%d partitions", partitioned.rdd().getNumPartitions()).isEqualTo(cli);
    }
    assertThat(TestItems.count(cli)).isEqualTo(items.size());
  }

  /**
   * {@code cli-build-2000.blmf} was written by {@code bloomery build --expected 2500 --fpp 0.01} over
   * {@link TestItems#itemsFile}{@code (dir, 2000)} (see its README): the real CLI's file, not a model of it.
   */
  @Test
  void aFileWrittenByBloomeryBuildIsWhatBothSparkBuildsWrite() throws IOException {
    byte[] golden;
    try (var in = BuildTest.class.getResourceAsStream("/cli-build-2000.blmf")) {
      golden = in.readAllBytes();
    }
    FilterSpec spec = FilterSpec.classic(2_500, 0.01);
    Path file = TestItems.itemsFile(dir, 2_000);
    Dataset<Row> lines = spark.read().text(file.toString()).repartition(4);
    assertThat(FilterFormat.toBytes(BloomerySpark.build(lines, "value", spec))).isEqualTo(golden);
    Path sharded = dir.resolve("sharded.blmf");
    BloomerySpark.buildSharded(lines, "value", spec, sharded.toString(), 3);
    assertThat(Files.readAllBytes(sharded)).isEqualTo(golden);
    assertThat(TestItems.singleMachine(spec, TestItems.cliItems(file))).isEqualTo(golden);
  }

  @ParameterizedTest
  @EnumSource(value = FilterKind.class, names = {"CLASSIC_BLOOM", "BLOCKED_BLOOM"})
  void aLongColumnEncodesAsTheLibrarysAddLong(FilterKind kind) {
    List<Long> values = new ArrayList<>();
    for (long i = -500; i < 3_000; i++) {
      values.add(i * 1_000_003L);
    }
    values.add(Long.MIN_VALUE);
    values.add(Long.MAX_VALUE);
    MembershipFilter expected = spec(kind).newFilter();
    values.forEach(expected::add);
    Dataset<Row> numbers = spark.createDataset(values, Encoders.LONG()).toDF("n").repartition(3);
    MembershipFilter ours = BloomerySpark.build(numbers, "n", spec(kind));
    assertThat(FilterFormat.toBytes(ours)).isEqualTo(Filters.toBytes(expected, values.size()));
  }

  @Test
  void aBinaryColumnIsItsBytes() {
    List<byte[]> items = new ArrayList<>();
    for (int i = 0; i < 2_000; i++) {
      items.add(new byte[] {(byte) i, (byte) (i >>> 8), 0, (byte) 0xFF});
    }
    items.add(new byte[0]);
    Dataset<Row> binary = spark.createDataset(items, Encoders.BINARY()).toDF("b").repartition(3);
    FilterSpec spec = FilterSpec.classic(5_000, 0.001);
    assertThat(FilterFormat.toBytes(BloomerySpark.build(binary, "b", spec)))
        .isEqualTo(TestItems.singleMachine(spec, items));
  }

  @ParameterizedTest
  @EnumSource(value = FilterKind.class, names = {"CLASSIC_BLOOM", "BLOCKED_BLOOM"})
  void anEmptyDatasetAndEmptyPartitionsGiveTheEmptyOrSameFilter(FilterKind kind) {
    Dataset<Row> none = spark.createDataset(List.<String>of(), Encoders.STRING()).toDF("u");
    assertThat(FilterFormat.toBytes(BloomerySpark.build(none, "u", spec(kind))))
        .isEqualTo(FilterFormat.toBytes(spec(kind).newFilter()));
    Dataset<Row> zeroPartitions = spark.emptyDataFrame().selectExpr("'x' AS u");
    assertThat(FilterFormat.toBytes(BloomerySpark.build(zeroPartitions, "u", spec(kind))))
        .isEqualTo(FilterFormat.toBytes(spec(kind).newFilter()));
    // Three rows over eight partitions: five of them empty.
    Dataset<Row> sparse = spark.createDataset(List.of("a", "b", "c"), Encoders.STRING()).toDF("u").repartition(8);
    List<byte[]> abc = List.of("a".getBytes(StandardCharsets.UTF_8), "b".getBytes(StandardCharsets.UTF_8),
        "c".getBytes(StandardCharsets.UTF_8));
    assertThat(FilterFormat.toBytes(BloomerySpark.build(sparse, "u", spec(kind))))
        .isEqualTo(TestItems.singleMachine(spec(kind), abc));
  }
}
