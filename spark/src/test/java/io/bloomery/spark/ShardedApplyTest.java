package io.bloomery.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.counting.CountingBloomFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.format.FilterFormat;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** keepAbsentSharded / keepMaybeSharded: the filter read slice by slice from its file, against the broadcast path. */
class ShardedApplyTest {
  private final SparkSession spark = SharedSpark.session();

  @TempDir Path dir;

  /** The rows' items, sorted, duplicates kept: a multiset to compare answers row for row. */
  private static List<String> items(Dataset<Row> rows) {
    List<String> out = new ArrayList<>();
    for (Row row : rows.collectAsList()) {
      out.add(row.get(0) + "|" + row.get(1));
    }
    out.sort(null);
    return out;
  }

  @ParameterizedTest
  @CsvSource({"CLASSIC_BLOOM, 1", "CLASSIC_BLOOM, 7", "BLOCKED_BLOOM, 4"})
  void answersExactlyAsTheBroadcastPath(FilterKind kind, int slices) throws IOException {
    // Members: a text file's lines (duplicates, the empty line, a line that is not UTF-8); probes:
    // every member again plus as many new URLs, with a second column carried through.
    Path file = TestItems.itemsFile(dir, 3_000);
    Dataset<Row> seen = spark.read().text(file.toString()).repartition(3);
    FilterSpec spec = kind == FilterKind.CLASSIC_BLOOM ? FilterSpec.classic(3_000, 0.05) : FilterSpec.blocked(3_000, 0.05);
    MembershipFilter filter = BloomerySpark.build(seen, "value", spec);
    Path filterFile = dir.resolve("seen.blmf");
    BloomerySpark.writeFilter(spark, filter, filterFile.toString());
    List<String> fresh = new ArrayList<>();
    for (int i = 0; i < 3_000; i++) {
      fresh.add(TestItems.url(1_000_000 + i));
    }
    Dataset<Row> incoming = seen.withColumn("n", org.apache.spark.sql.functions.lit(1))
        .union(spark.createDataset(fresh, Encoders.STRING()).toDF("value").withColumn("n", org.apache.spark.sql.functions.lit(2)))
        .repartition(4);

    List<String> absent = items(BloomerySpark.keepAbsent(incoming, "value", filter));
    List<String> maybe = items(BloomerySpark.keepMaybe(incoming, "value", filter));
    List<String> shardedAbsent = items(BloomerySpark.keepAbsentSharded(incoming, "value", filterFile.toString(), FilterSpec.Nulls.REFUSE, slices));
    List<String> shardedMaybe = items(BloomerySpark.keepMaybeSharded(incoming, "value", filterFile.toString(), FilterSpec.Nulls.REFUSE, slices));
    assertThat(shardedAbsent).isEqualTo(absent);
    assertThat(shardedMaybe).isEqualTo(maybe);
    assertThat(absent.size() + maybe.size()).isEqualTo(incoming.count());
    // No member is ever absent (the non-UTF-8 line included); about 5% of the new URLs are maybe.
    assertThat(absent).allMatch(row -> row.endsWith("|2"));
    assertThat(maybe.stream().filter(row -> row.endsWith("|1")).count()).isEqualTo(seen.count());
    assertThat(absent.size()).isBetween(3_000 * 90 / 100, 3_000);
  }

  @Test
  void aLongColumnAndSkippedNullsAnswerAsBroadcast() {
    List<Long> members = new ArrayList<>();
    List<Long> probes = new ArrayList<>();
    for (long i = 0; i < 2_000; i++) {
      members.add(i * 7919);
      probes.add(i * 7919 + (i % 2)); // half members, half not
    }
    probes.add(null);
    FilterSpec spec = FilterSpec.classic(2_000, 0.01);
    MembershipFilter filter = BloomerySpark.build(spark.createDataset(members, Encoders.LONG()).toDF("n"), "n", spec);
    Path filterFile = dir.resolve("longs.blmf");
    BloomerySpark.writeFilter(spark, filter, filterFile.toString());
    Dataset<Row> rows = spark.createDataset(probes, Encoders.LONG()).toDF("n").repartition(3).withColumn("m", org.apache.spark.sql.functions.lit(0));
    FilterSpec.Nulls skip = FilterSpec.Nulls.SKIP;
    assertThat(sorted(BloomerySpark.keepAbsentSharded(rows, "n", filterFile.toString(), skip, 4)))
        .isEqualTo(sorted(BloomerySpark.keepAbsent(rows, "n", filter, skip)));
    assertThat(sorted(BloomerySpark.keepMaybeSharded(rows, "n", filterFile.toString(), skip, 4)))
        .isEqualTo(sorted(BloomerySpark.keepMaybe(rows, "n", filter, skip)));
    assertThatThrownBy(() -> BloomerySpark.keepAbsentSharded(rows, "n", filterFile.toString()).count())
        .hasMessageContaining("column 'n' holds a null");
  }

  private static List<Long> sorted(Dataset<Row> rows) {
    List<Long> out = new ArrayList<>();
    rows.collectAsList().forEach(row -> out.add(row.getLong(0)));
    out.sort(null);
    return out;
  }

  @Test
  void aDamagedTruncatedMissingOrForeignFileIsRefusedBeforeAnyJob() throws IOException {
    Dataset<Row> rows = spark.createDataset(List.of("a", "b"), Encoders.STRING()).toDF("u");
    Path good = dir.resolve("good.blmf");
    MembershipFilter filter = FilterSpec.blocked(1_000, 0.01).newFilter();
    filter.add("a");
    BloomerySpark.writeFilter(spark, filter, good.toString());

    Path flipped = Files.copy(good, dir.resolve("flipped.blmf"));
    try (RandomAccessFile raf = new RandomAccessFile(flipped.toFile(), "rw")) {
      raf.seek(100);
      int b = raf.read();
      raf.seek(100);
      raf.write(b ^ 1);
    }
    assertThatThrownBy(() -> BloomerySpark.keepAbsentSharded(rows, "u", flipped.toString()))
        .isInstanceOf(BloomerySparkException.class).hasMessageContaining("flipped.blmf").hasMessageContaining("CRC-32C");

    Path truncated = dir.resolve("truncated.blmf");
    byte[] bytes = Files.readAllBytes(good);
    Files.write(truncated, Arrays.copyOf(bytes, bytes.length - 64));
    assertThatThrownBy(() -> BloomerySpark.keepMaybeSharded(rows, "u", truncated.toString()))
        .isInstanceOf(BloomerySparkException.class).hasMessageContaining("truncated");

    assertThatThrownBy(() -> BloomerySpark.keepMaybeSharded(rows, "u", dir.resolve("none.blmf").toString()))
        .isInstanceOf(BloomerySparkException.class).hasMessageContaining("no such filter file");

    Path counting = dir.resolve("counting.blmf");
    Files.write(counting, FilterFormat.toBytes(CountingBloomFilter.create(1_000, 0.01)));
    assertThatThrownBy(() -> BloomerySpark.keepAbsentSharded(rows, "u", counting.toString()))
        .isInstanceOf(BloomerySparkException.class).hasMessageContaining("needs a classic or blocked Bloom filter");

    Path text = Files.writeString(dir.resolve("text.blmf"), "not a filter at all");
    assertThatThrownBy(() -> BloomerySpark.keepAbsentSharded(rows, "u", text.toString()))
        .isInstanceOf(BloomerySparkException.class).hasMessageContaining("not a valid Bloomery filter file");
  }
}
