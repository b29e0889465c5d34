package io.bloomery.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.counting.CountingBloomFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.format.FilterFormat;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Nulls, wrong columns and filter files that are not what they should be: one clear error, nothing written. */
class HostileInputTest {
  private final SparkSession spark = SharedSpark.session();

  @TempDir Path dir;

  private Dataset<Row> withNull() {
    return spark.createDataset(Arrays.asList("a", null, "b"), Encoders.STRING()).toDF("url").repartition(2);
  }

  @Test
  void aNullIsRefusedNamingTheColumnAndNoShardedOutputIsLeft() throws IOException {
    FilterSpec spec = FilterSpec.classic(100, 0.01);
    assertThatThrownBy(() -> BloomerySpark.build(withNull(), "url", spec))
        .isInstanceOf(BloomerySparkException.class).hasMessageStartingWith("column 'url' holds a null");
    Path out = dir.resolve("f.blmf");
    assertThatThrownBy(() -> BloomerySpark.buildSharded(withNull(), "url", spec, out.toString(), 2))
        .isInstanceOf(BloomerySparkException.class).hasMessageContaining("column 'url' holds a null");
    try (var left = Files.list(dir)) {
      assertThat(left).isEmpty();
    }
    MembershipFilter filter = BloomerySpark.build(spark.createDataset(List.of("a"), Encoders.STRING()).toDF("url"), "url", spec);
    // The caller's own action fails; Spark's wrapper quotes our one-line message.
    assertThatThrownBy(() -> BloomerySpark.keepAbsent(withNull(), "url", filter).count())
        .hasMessageContaining("column 'url' holds a null");
  }

  @Test
  void nullsAreSkippedOnlyWhenAskedAndKeptOutOfBothResults() {
    FilterSpec spec = FilterSpec.classic(100, 0.01).withNulls(FilterSpec.Nulls.SKIP);
    MembershipFilter filter = BloomerySpark.build(withNull(), "url", spec);
    BloomFilter expected = BloomFilter.create(100, 0.01);
    expected.add("a");
    expected.add("b");
    assertThat(FilterFormat.toBytes(filter)).isEqualTo(FilterFormat.toBytes(expected));
    assertThat(BloomerySpark.keepAbsent(withNull(), "url", filter, FilterSpec.Nulls.SKIP).count()).isZero();
    assertThat(BloomerySpark.keepMaybe(withNull(), "url", filter, FilterSpec.Nulls.SKIP).count()).isEqualTo(2);
  }

  @Test
  void aMissingColumnOrAnUnsupportedTypeIsNamed() {
    Dataset<Row> ints = spark.range(3).selectExpr("CAST(id AS INT) AS n", "CAST(id AS DOUBLE) AS d");
    assertThatThrownBy(() -> BloomerySpark.build(ints, "url", FilterSpec.classic(10, 0.01)))
        .isInstanceOf(BloomerySparkException.class).hasMessage("no column 'url' in the dataset (columns: n, d)");
    assertThatThrownBy(() -> BloomerySpark.build(ints, "d", FilterSpec.classic(10, 0.01)))
        .isInstanceOf(BloomerySparkException.class).hasMessageStartingWith("column 'd' is of type double");
  }

  @Test
  void aFilterFileOfTheWrongKindOrProtocolOrDamagedIsRefusedWithItsPath() throws IOException {
    Path counting = dir.resolve("counting.blmf");
    FilterFormat.write(CountingBloomFilter.create(100, 0.01), counting);
    assertThatThrownBy(() -> BloomerySpark.readFilter(spark, counting.toString()))
        .isInstanceOf(BloomerySparkException.class)
        .hasMessageContaining("counting.blmf").hasMessageContaining("needs a classic or blocked Bloom filter, found a counting filter");

    byte[] blocked = FilterFormat.toBytes(FilterSpec.blocked(100, 0.01).newFilter());
    blocked[6] = 1; // protocol byte: xxh3-edh-v1 under a blocked body
    Path wrongProtocol = dir.resolve("wrong-protocol.blmf");
    Files.write(wrongProtocol, blocked);
    assertThatThrownBy(() -> BloomerySpark.readFilter(spark, wrongProtocol.toString()))
        .isInstanceOf(BloomerySparkException.class)
        .hasMessageContaining("wrong-protocol.blmf: not a valid Bloomery filter file").hasMessageContaining("xxh3-blocked-v1");

    byte[] classic = FilterFormat.toBytes(BloomFilter.create(100, 0.01));
    Path truncated = dir.resolve("truncated.blmf");
    Files.write(truncated, Arrays.copyOf(classic, classic.length - 3));
    assertThatThrownBy(() -> BloomerySpark.readFilter(spark, truncated.toString()))
        .isInstanceOf(BloomerySparkException.class).hasMessageContaining("truncated.blmf: not a valid Bloomery filter file");
    assertThatThrownBy(() -> BloomerySpark.readFilter(spark, dir.resolve("absent.blmf").toString()))
        .isInstanceOf(BloomerySparkException.class).hasMessageStartingWith("no such filter file");
  }

  @Test
  void applyingAFilterOfAnotherKindIsRefused() {
    Dataset<Row> urls = spark.createDataset(List.of("a"), Encoders.STRING()).toDF("url");
    assertThatThrownBy(() -> BloomerySpark.keepAbsent(urls, "url", CountingBloomFilter.create(10, 0.01)))
        .isInstanceOf(BloomerySparkException.class).hasMessageContaining("found a counting filter");
  }

  private static List<String> sorted(Dataset<Row> rows) {
    List<String> out = new java.util.ArrayList<>(rows.toDF().as(Encoders.STRING()).collectAsList());
    out.sort(null);
    return out;
  }

  @Test
  void emptyDatasetsAndEmptyPartitionsGiveEmptyAnswersAndTheEmptyFilter() throws IOException {
    Dataset<Row> none = spark.createDataset(List.<String>of(), Encoders.STRING()).toDF("u");
    // Three rows over eight partitions: five of them empty.
    Dataset<Row> sparse = spark.createDataset(List.of("a", "b", "c"), Encoders.STRING()).toDF("u").repartition(8);
    for (FilterSpec spec : List.of(FilterSpec.classic(1_000, 0.01), FilterSpec.blocked(1_000, 0.01))) {
      MembershipFilter filter = spec.newFilter();
      filter.add("a");
      Path file = dir.resolve(spec.kind() + ".blmf");
      BloomerySpark.writeFilter(spark, filter, file.toString());
      assertThat(BloomerySpark.keepAbsent(none, "u", filter).count()).isZero();
      assertThat(BloomerySpark.keepAbsentSharded(none, "u", file.toString(), FilterSpec.Nulls.REFUSE, 3).count()).isZero();
      assertThat(BloomerySpark.keepMaybeSharded(none, "u", file.toString(), FilterSpec.Nulls.REFUSE, 3).count()).isZero();
      List<String> absent = sorted(BloomerySpark.keepAbsent(sparse, "u", filter));
      assertThat(absent).containsExactly("b", "c");
      assertThat(sorted(BloomerySpark.keepAbsentSharded(sparse, "u", file.toString(), FilterSpec.Nulls.REFUSE, 3)))
          .isEqualTo(absent);
      assertThat(sorted(BloomerySpark.keepMaybeSharded(sparse, "u", file.toString(), FilterSpec.Nulls.REFUSE, 3)))
          .containsExactly("a");

      Dataset<String> noStrings = spark.createDataset(List.<String>of(), Encoders.STRING());
      byte[] aggregated = noStrings.select(FilterAggregator.of(spec, Encoders.STRING()).toColumn()).first();
      assertThat(aggregated).isEqualTo(FilterFormat.toBytes(spec.newFilter()));
    }
    SqlFunctions.register(spark);
    none.createOrReplaceTempView("nothing");
    Row empty = spark.sql("SELECT bloomery_build(u, 10, 0.01), bloomery_build_blocked(u, 10, 0.01) FROM nothing").first();
    assertThat(empty.isNullAt(0)).isTrue(); // a group without rows has no n and p to size a filter by
    assertThat(empty.isNullAt(1)).isTrue();
  }

  @Test
  void sqlFunctionsRefuseBytesThatAreNotAClassicOrBlockedFilterAndBadSizes() {
    SqlFunctions.register(spark);
    byte[] blocked = FilterFormat.toBytes(FilterSpec.blocked(100, 0.01).newFilter());
    byte[] wrongProtocol = blocked.clone();
    wrongProtocol[6] = 1; // xxh3-edh-v1 under a blocked body
    byte[] truncated = Arrays.copyOf(FilterFormat.toBytes(BloomFilter.create(100, 0.01)), 40);
    List<byte[]> bad = List.of("not a filter".getBytes(java.nio.charset.StandardCharsets.UTF_8), wrongProtocol, truncated,
        FilterFormat.toBytes(CountingBloomFilter.create(100, 0.01)));
    List<String> messages = List.of("bloomery_might_contain's filter is not a valid Bloomery filter",
        "bloomery_might_contain's filter is not a valid Bloomery filter", "bloomery_might_contain's filter is not a valid Bloomery filter",
        "bloomery_might_contain's filter needs a classic or blocked Bloom filter, found a counting filter");
    for (int i = 0; i < bad.size(); i++) {
      spark.createDataset(List.of(bad.get(i)), Encoders.BINARY()).toDF("f").createOrReplaceTempView("bad_filter");
      assertThatThrownBy(() -> spark.sql("SELECT bloomery_might_contain(f, 'a') FROM bad_filter").first())
          .as("filter %d", i).hasMessageContaining(messages.get(i));
    }
    spark.createDataset(List.of(blocked), Encoders.BINARY()).toDF("f").createOrReplaceTempView("good_filter");
    assertThat(spark.sql("SELECT bloomery_might_contain(f, 'a') FROM good_filter").first().getBoolean(0)).isFalse();

    spark.createDataset(List.of("a"), Encoders.STRING()).toDF("u").createOrReplaceTempView("one_row");
    assertThatThrownBy(() -> spark.sql("SELECT bloomery_build(u, CAST(NULL AS BIGINT), 0.01) FROM one_row").first())
        .hasMessageContaining("bloomery_build(item, n, p): n and p must not be null");
    assertThatThrownBy(() -> spark.sql("SELECT bloomery_build(u, 10, 1.5) FROM one_row").first())
        .hasMessageContaining("bloomery_build(item, n, p): false-positive rate p must be in (0, 1)");
  }
}
