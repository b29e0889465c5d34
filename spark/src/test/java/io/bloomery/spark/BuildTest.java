package io.bloomery.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.filter.MembershipFilter;
import io.bloomery.format.FilterFormat;
import java.io.IOException;
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

  static FilterSpec spec(FilterSpec.Kind kind) {
    return kind == FilterSpec.Kind.CLASSIC ? FilterSpec.classic(25_000, 0.01) : FilterSpec.blocked(25_000, 0.01);
  }

  @ParameterizedTest
  @EnumSource(FilterSpec.Kind.class)
  void oneOrderedPartitionIsByteIdenticalToTheCliBuild(FilterSpec.Kind kind) throws IOException {
    Path file = TestItems.itemsFile(dir, 20_000);
    byte[] cli = TestItems.singleMachine(spec(kind), TestItems.cliItems(file));
    Dataset<Row> lines = spark.read().text(file.toString()).coalesce(1);
    byte[] ours = FilterFormat.toBytes(BloomerySpark.build(lines, "value", spec(kind)));
    assertThat(ours).isEqualTo(cli);
  }

  @ParameterizedTest
  @EnumSource(FilterSpec.Kind.class)
  void manyPartitionsSetTheSameBitsAndCountAtLeastTheChangingAdds(FilterSpec.Kind kind) throws IOException {
    Path file = TestItems.itemsFile(dir, 20_000);
    List<byte[]> items = TestItems.cliItems(file);
    byte[] cli = TestItems.singleMachine(spec(kind), items);
    Dataset<Row> lines = spark.read().text(file.toString()).repartition(5);
    byte[] ours = FilterFormat.toBytes(BloomerySpark.build(lines, "value", spec(kind)));
    assertThat(TestItems.withoutCount(ours)).isEqualTo(TestItems.withoutCount(cli));
    // Sum over partitions of changing adds: at least the sequential count, at most the items offered.
    assertThat(TestItems.count(ours)).isBetween(TestItems.count(cli), (long) items.size());
  }

  @ParameterizedTest
  @EnumSource(FilterSpec.Kind.class)
  void aLongColumnEncodesAsTheLibrarysAddLong(FilterSpec.Kind kind) {
    List<Long> values = new ArrayList<>();
    for (long i = -500; i < 3_000; i++) {
      values.add(i * 1_000_003L);
    }
    values.add(Long.MIN_VALUE);
    values.add(Long.MAX_VALUE);
    MembershipFilter expected = spec(kind).newFilter();
    values.forEach(expected::add);
    Dataset<Row> numbers = spark.createDataset(values, Encoders.LONG()).toDF("n").coalesce(1);
    MembershipFilter ours = BloomerySpark.build(numbers, "n", spec(kind));
    assertThat(FilterFormat.toBytes(ours)).isEqualTo(FilterFormat.toBytes(expected));
  }

  @Test
  void aBinaryColumnIsItsBytes() {
    List<byte[]> items = new ArrayList<>();
    for (int i = 0; i < 2_000; i++) {
      items.add(new byte[] {(byte) i, (byte) (i >>> 8), 0, (byte) 0xFF});
    }
    items.add(new byte[0]);
    Dataset<Row> binary = spark.createDataset(items, Encoders.BINARY()).toDF("b").coalesce(1);
    FilterSpec spec = FilterSpec.classic(5_000, 0.001);
    assertThat(FilterFormat.toBytes(BloomerySpark.build(binary, "b", spec)))
        .isEqualTo(TestItems.singleMachine(spec, items));
  }

  @ParameterizedTest
  @EnumSource(FilterSpec.Kind.class)
  void anEmptyDatasetAndEmptyPartitionsGiveTheEmptyOrSameFilter(FilterSpec.Kind kind) {
    Dataset<Row> none = spark.createDataset(List.<String>of(), Encoders.STRING()).toDF("u");
    assertThat(FilterFormat.toBytes(BloomerySpark.build(none, "u", spec(kind))))
        .isEqualTo(FilterFormat.toBytes(spec(kind).newFilter()));
    Dataset<Row> zeroPartitions = spark.emptyDataFrame().selectExpr("'x' AS u");
    assertThat(FilterFormat.toBytes(BloomerySpark.build(zeroPartitions, "u", spec(kind))))
        .isEqualTo(FilterFormat.toBytes(spec(kind).newFilter()));
    // Three rows over eight partitions: five of them empty.
    Dataset<Row> sparse = spark.createDataset(List.of("a", "b", "c"), Encoders.STRING()).toDF("u").repartition(8);
    MembershipFilter expected = spec(kind).newFilter();
    List.of("a", "b", "c").forEach(expected::add);
    assertThat(FilterFormat.toBytes(BloomerySpark.build(sparse, "u", spec(kind))))
        .isEqualTo(FilterFormat.toBytes(expected));
  }
}
