package io.bloomery.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.testkit.FprAssert;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * keepAbsent, keepMaybe and confirm on a frontier with known duplicates: 10,000 seen URLs, an
 * incoming batch of 5,000 of them again plus 5,000 new ones.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ApplyTest {
  private static final int SEEN = 10_000;
  private static final int NEW = 5_000;

  private final SparkSession spark = SharedSpark.session();
  private Dataset<Row> seen;
  private Dataset<Row> incoming;
  private Set<String> newUrls;

  @BeforeAll
  void data() {
    List<String> seenUrls = new ArrayList<>();
    for (int i = 0; i < SEEN; i++) {
      seenUrls.add(TestItems.url(i));
    }
    List<String> batch = new ArrayList<>();
    newUrls = new HashSet<>();
    for (int i = 0; i < NEW; i++) {
      batch.add(TestItems.url(2 * i)); // seen before
      String fresh = TestItems.url(SEEN + i);
      batch.add(fresh);
      newUrls.add(fresh);
    }
    seen = spark.createDataset(seenUrls, Encoders.STRING()).toDF("url").repartition(3).cache();
    incoming = spark.createDataset(batch, Encoders.STRING()).toDF("url").repartition(4).cache();
  }

  private static Set<String> urls(Dataset<Row> rows) {
    Set<String> urls = new HashSet<>();
    for (Row row : rows.collectAsList()) {
      urls.add(row.getString(0));
    }
    return urls;
  }

  @Test
  void keepAbsentIsOnlyNewItemsMissingAtMostTheModelsShareAndConfirmRecoversExactlyTheRest() {
    BloomFilter filter = (BloomFilter) BloomerySpark.build(seen, "url", FilterSpec.classic(SEEN, 0.01));
    Set<String> absent = urls(BloomerySpark.keepAbsent(incoming, "url", filter));
    assertThat(newUrls).containsAll(absent); // no seen URL is ever reported absent
    long falsePositives = NEW - absent.size();
    double model = io.bloomery.sizing.BloomMath.falsePositiveRate(filter.bitSize(), filter.hashCount(), SEEN);
    long[] bounds = FprAssert.interval(NEW, model, 0.999);
    assertThat(falsePositives).as("new URLs the filter called maybe (model %.4f)", model).isBetween(bounds[0], bounds[1]);

    Dataset<Row> maybe = BloomerySpark.keepMaybe(incoming, "url", filter);
    assertThat(maybe.count()).isEqualTo(NEW + falsePositives); // every seen URL, plus the false positives
    Set<String> confirmedNew = urls(BloomerySpark.confirm(maybe, seen, "url"));
    assertThat(confirmedNew).hasSize((int) falsePositives).doesNotContainAnyElementsOf(absent);
    Set<String> all = new HashSet<>(absent);
    all.addAll(confirmedNew);
    assertThat(all).isEqualTo(newUrls);
  }

  @Test
  void aBlockedFilterAppliesTheSameWayWithNoFalseNegatives() {
    MembershipFilter filter = BloomerySpark.build(seen, "url", FilterSpec.blocked(SEEN, 0.01));
    Set<String> absent = urls(BloomerySpark.keepAbsent(incoming, "url", filter));
    assertThat(newUrls).containsAll(absent);
    assertThat(absent.size()).isGreaterThan(NEW * 95 / 100);
    Set<String> all = new HashSet<>(absent);
    all.addAll(urls(BloomerySpark.confirm(BloomerySpark.keepMaybe(incoming, "url", filter), seen, "url")));
    assertThat(all).isEqualTo(newUrls);
  }
}
