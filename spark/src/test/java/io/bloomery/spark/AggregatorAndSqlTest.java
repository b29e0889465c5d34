package io.bloomery.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.filter.MembershipFilter;
import io.bloomery.format.FilterFormat;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The typed Aggregator and the SQL functions against the library's own filters. */
class AggregatorAndSqlTest {
  private final SparkSession spark = SharedSpark.session();
  @TempDir
  Path dir;

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

  /**
   * Text read by Spark keeps a line's bytes even when they are not UTF-8; the SQL functions hash those
   * bytes, so the aggregate writes the file the real CLI wrote over the same lines
   * ({@code cli-build-2000.blmf}, see its README) and every line, the one that is not UTF-8 included,
   * is found in it.
   */
  @Test
  void sqlHashesTheBytesOfTextThatIsNotUtf8AsBloomeryBuildDoes() throws IOException {
    SqlFunctions.register(spark);
    byte[] golden;
    try (var in = AggregatorAndSqlTest.class.getResourceAsStream("/cli-build-2000.blmf")) {
      golden = in.readAllBytes();
    }
    Path file = TestItems.itemsFile(dir, 2_000);
    List<byte[]> lines = TestItems.cliItems(file);
    byte[] invalid = {'b', 'a', 'd', (byte) 0xFF, (byte) 0xC0};
    assertThat(lines).anySatisfy(line -> assertThat(line).isEqualTo(invalid));
    // Decoded and re-encoded, that line is another item: a build over decoded strings differs.
    List<byte[]> decoded = new ArrayList<>();
    lines.forEach(line -> decoded.add(new String(line, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8)));
    assertThat(TestItems.singleMachine(FilterSpec.classic(2_500, 0.01), decoded)).isNotEqualTo(golden);

    spark.read().text(file.toString()).repartition(3).createOrReplaceTempView("raw_lines");
    byte[] sql = spark.sql("SELECT bloomery_build(value, 2500, 0.01) FROM raw_lines").first().getAs(0);
    assertThat(sql).isEqualTo(golden);
    byte[] fromBinary = spark.sql("SELECT bloomery_build(CAST(value AS BINARY), 2500, 0.01) FROM raw_lines").first().getAs(0);
    assertThat(fromBinary).isEqualTo(golden);
    FilterSpec blocked = FilterSpec.blocked(2_500, 0.01);
    byte[] blockedSql = spark.sql("SELECT bloomery_build_blocked(value, 2500, 0.01) FROM raw_lines").first().getAs(0);
    assertThat(blockedSql).isEqualTo(TestItems.singleMachine(blocked, lines));

    for (String function : List.of("bloomery_build", "bloomery_build_blocked")) {
      Row found = spark.sql("SELECT count_if(bloomery_might_contain(s.f, l.value)), count_if(CAST(l.value AS BINARY) = X'626164FFC0'"
          + " AND bloomery_might_contain(s.f, l.value)) FROM raw_lines l CROSS JOIN (SELECT " + function
          + "(value, 2500, 0.01) AS f FROM raw_lines) s").first();
      assertThat(found.getLong(0)).as(function).isEqualTo(lines.size());
      assertThat(found.getLong(1)).as(function).isEqualTo(1);
    }
    // A DataFrame column through call_function takes the same path.
    Dataset<Row> text = spark.read().text(file.toString());
    byte[] viaColumn = text.select(org.apache.spark.sql.functions.call_function("bloomery_build", text.col("value"),
        org.apache.spark.sql.functions.lit(2_500), org.apache.spark.sql.functions.lit(0.01))).first().getAs(0);
    assertThat(viaColumn).isEqualTo(golden);
  }

  @Test
  void sqlBuildTakesBigintItemsAsTheLibrarysLongsAndRefusesOtherTypes() {
    SqlFunctions.register(spark);
    List<Long> longs = List.of(0L, -1L, 42L, Long.MIN_VALUE, Long.MAX_VALUE);
    spark.createDataset(longs, Encoders.LONG()).toDF("n").repartition(2).createOrReplaceTempView("bigints");
    MembershipFilter expected = FilterSpec.blocked(100, 0.01).newFilter();
    longs.forEach(expected::add);
    byte[] blocked = spark.sql("SELECT bloomery_build_blocked(n, 100, 0.01) FROM bigints").first().getAs(0);
    assertThat(blocked).isEqualTo(Filters.toBytes(expected, longs.size()));
    MembershipFilter classic = FilterSpec.classic(100, 0.01).newFilter();
    longs.forEach(classic::add);
    byte[] built = spark.sql("SELECT bloomery_build(n, 100, 0.01) FROM bigints").first().getAs(0);
    assertThat(built).isEqualTo(Filters.toBytes(classic, longs.size()));
    Row probes = spark.sql("SELECT count_if(bloomery_might_contain(f, n)), count_if(bloomery_might_contain(f, CAST(NULL AS BIGINT)) IS NULL)"
        + " FROM bigints CROSS JOIN (SELECT bloomery_build(n, 100, 0.01) AS f FROM bigints)").first();
    assertThat(probes.getLong(0)).isEqualTo(longs.size());
    assertThat(probes.getLong(1)).isEqualTo(longs.size());

    assertThatThrownBy(() -> spark.sql("SELECT bloomery_build(CAST(n AS INT), 100, 0.01) FROM bigints").first())
        .hasMessageContaining("bloomery_build's item is of type int");
    assertThatThrownBy(() -> spark.sql("SELECT bloomery_might_contain(X'00', 1.5D)").first())
        .hasMessageContaining("bloomery_might_contain's item is of type double");
  }
}
