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
}
