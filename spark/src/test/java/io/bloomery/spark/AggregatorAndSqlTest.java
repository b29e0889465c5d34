package io.bloomery.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.filter.MembershipFilter;
import io.bloomery.format.FilterFormat;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/** The typed Aggregator and the SQL functions against the library's own filters. */
class AggregatorAndSqlTest {
  private final SparkSession spark = SharedSpark.session();

  private static List<String> urls(int from, int to) {
    List<String> urls = new ArrayList<>();
    for (int i = from; i < to; i++) {
      urls.add(TestItems.url(i));
    }
    return urls;
  }

  private static byte[] library(FilterSpec spec, List<String> items) {
    List<byte[]> bytes = new ArrayList<>();
    items.forEach(item -> bytes.add(item.getBytes(StandardCharsets.UTF_8)));
    return TestItems.singleMachine(spec, bytes);
  }

  @Test
  void theTypedAggregatorBuildsTheLibrarysFilter() {
    FilterSpec spec = FilterSpec.blocked(5_000, 0.01);
    Dataset<String> one = spark.createDataset(urls(0, 5_000), Encoders.STRING()).coalesce(1);
    byte[] file = one.select(FilterAggregator.of(spec, Encoders.STRING()).toColumn()).first();
    assertThat(file).isEqualTo(library(spec, urls(0, 5_000)));
    Dataset<String> three = spark.createDataset(urls(0, 5_000), Encoders.STRING()).repartition(3);
    byte[] merged = three.select(FilterAggregator.of(spec, Encoders.STRING()).toColumn()).first();
    assertThat(merged).isEqualTo(file);
  }

  @Test
  void sqlBuildsAndProbesAndRefusesNulls() throws Exception {
    SqlFunctions.register(spark);
    spark.createDataset(urls(0, 5_000), Encoders.STRING()).toDF("url").repartition(2).createOrReplaceTempView("seen");
    spark.createDataset(urls(2_500, 7_500), Encoders.STRING()).toDF("url").createOrReplaceTempView("incoming");

    byte[] file = spark.sql("SELECT bloomery_build(url, 5000, 0.01) FROM seen").first().getAs(0);
    byte[] expected = library(FilterSpec.classic(5_000, 0.01), urls(0, 5_000));
    assertThat(file).isEqualTo(expected);

    Row counts = spark.sql("SELECT count_if(NOT bloomery_might_contain(s.f, i.url)), count_if(bloomery_might_contain(s.f, i.url))"
        + " FROM incoming i CROSS JOIN (SELECT bloomery_build(url, 5000, 0.01) AS f FROM seen) s").first();
    MembershipFilter filter = FilterFormat.readBloom(file);
    long absent = urls(2_500, 7_500).stream().filter(u -> !filter.mightContain(u)).count();
    assertThat(counts.getLong(0)).isEqualTo(absent);
    assertThat(counts.getLong(1)).isEqualTo(5_000 - absent);
    assertThat(absent).isGreaterThan(2_400); // 2,500 new URLs, about 1% false positives

    List<Long> longs = List.of(0L, -1L, 42L, Long.MAX_VALUE);
    spark.createDataset(longs, Encoders.LONG()).toDF("n").createOrReplaceTempView("numbers");
    byte[] longFile = spark.sql("SELECT bloomery_build_long(n, 100, 0.01) FROM numbers").first().getAs(0);
    MembershipFilter longFilter = FilterSpec.classic(100, 0.01).newFilter();
    longs.forEach(longFilter::add);
    assertThat(longFile).isEqualTo(Filters.toBytes(longFilter, longs.size()));
    assertThat(spark.sql("SELECT bloomery_might_contain(bloomery_build_long(n, 100, 0.01), 42L) FROM numbers").first().getBoolean(0))
        .isTrue();

    spark.createDataset(java.util.Arrays.asList("a", null), Encoders.STRING()).toDF("url").createOrReplaceTempView("holes");
    assertThatThrownBy(() -> spark.sql("SELECT bloomery_build(url, 10, 0.01) FROM holes").first())
        .hasMessageContaining("bloomery_build's item holds a null");
  }
}
