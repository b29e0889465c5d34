package io.bloomery.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.util.sketch.BloomFilter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** SparkSketch answers exactly as Spark's own sketch: golden files, live sketches, 10^5 probes. */
class SparkSketchTest {

  private static SparkSketch golden(String version, String seed) throws IOException {
    String name = "/spark-sketch/spark-sketch-" + version + "-n1000-p0.01-strings-golden-0..999-longs-" + seed + ".bin";
    try (InputStream in = SparkSketchTest.class.getResourceAsStream(name)) {
      return SparkSketch.fromBytes(in.readAllBytes());
    }
  }

  @ParameterizedTest
  @CsvSource({"v1, seed0, 1, 0, 178, 150", "v2, seed7, 2, 7, 166, 185"})
  void goldenFilesWrittenBySparkGiveSparksKnownAnswers(String version, String seedName, int number, int seed,
      int stringMaybes, int longMaybes) throws IOException {
    SparkSketch sketch = golden(version, seedName);
    assertThat(sketch.version()).isEqualTo(number);
    assertThat(sketch.seed()).isEqualTo(seed);
    assertThat(sketch.bitSize()).isEqualTo(9600);
    for (int i = 0; i < 1000; i++) {
      assertThat(sketch.mightContain("golden-" + i)).as("golden-%d", i).isTrue();
    }
    for (long i = 0; i < 100; i++) {
      assertThat(sketch.mightContain(i * 1_000_003L)).isTrue();
    }
    int strings = 0;
    int longs = 0;
    for (int i = 0; i < 10_000; i++) {
      strings += sketch.mightContain("absent-" + i) ? 1 : 0;
      longs += sketch.mightContain(-1L - i) ? 1 : 0;
    }
    assertThat(strings).isEqualTo(stringMaybes);
    assertThat(longs).isEqualTo(longMaybes);
  }

  @ParameterizedTest
  @CsvSource({"V1, 0", "V2, 0", "V2, -12345"})
  void liveSketchesAnswerIdenticallyOnAHundredThousandProbes(BloomFilter.Version version, int seed) throws IOException {
    long seedOfData = 0x5eedL + seed;
    SplittableRandom random = new SplittableRandom(seedOfData);
    BloomFilter spark = BloomFilter.create(version, 20_000, BloomFilter.optimalNumOfBits(20_000, 0.02), seed);
    for (int i = 0; i < 20_000; i++) {
      switch (i % 3) {
        case 0 -> spark.putString(TestItems.url(i) + "\u00e9");
        case 1 -> spark.putLong(random.nextLong());
        default -> spark.putBinary(bytes(random));
      }
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    spark.writeTo(out);
    SparkSketch ours = SparkSketch.fromBytes(out.toByteArray());
    SplittableRandom probes = new SplittableRandom(seedOfData);
    int agreements = 0;
    for (int i = 0; i < 100_000; i++) {
      boolean theirs;
      boolean mine;
      switch (i % 3) {
        case 0 -> {
          String text = TestItems.url(i) + "\u00e9";
          theirs = spark.mightContainString(text);
          mine = ours.mightContain(text);
        }
        case 1 -> {
          long value = probes.nextLong();
          theirs = spark.mightContainLong(value);
          mine = ours.mightContain(value);
        }
        default -> {
          byte[] item = bytes(probes);
          theirs = spark.mightContainBinary(item);
          mine = ours.mightContain(item);
        }
      }
      assertThat(mine).as("probe %d (data seed %d)", i, seedOfData).isEqualTo(theirs);
      agreements++;
    }
    assertThat(agreements).isEqualTo(100_000);
  }

  private static byte[] bytes(SplittableRandom random) {
    byte[] item = new byte[random.nextInt(0, 13)];
    for (int j = 0; j < item.length; j++) {
      item[j] = (byte) random.nextInt(256);
    }
    return item;
  }

  @Test
  void aDataFramesStatBloomFilterIsReadAsV2AndAnswersLikeIt() throws IOException {
    SparkSession session = SharedSpark.session();
    List<String> urls = new ArrayList<>();
    for (int i = 0; i < 5_000; i++) {
      urls.add(TestItems.url(i));
    }
    Dataset<Row> df = session.createDataset(urls, Encoders.STRING()).toDF("url");
    BloomFilter spark = df.stat().bloomFilter("url", 5_000, 0.01);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    spark.writeTo(out);
    SparkSketch ours = SparkSketch.fromBytes(out.toByteArray());
    assertThat(ours.version()).isEqualTo(2);
    for (int i = 0; i < 20_000; i++) {
      String url = TestItems.url(i);
      assertThat(ours.mightContain(url)).as(url).isEqualTo(spark.mightContainString(url));
    }
  }

  @Test
  void malformedSketchesAreRefusedNamingTheField() {
    assertThatThrownBy(() -> SparkSketch.fromBytes(ByteBuffer.allocate(16).putInt(3).array()))
        .isInstanceOf(IOException.class).hasMessageContaining("version: expected 1 or 2, found 3");
    assertThatThrownBy(() -> SparkSketch.fromBytes(ByteBuffer.allocate(16).putInt(2).putInt(0).array()))
        .hasMessageContaining("hash count: expected 1 <= k <= 65536, found 0");
    assertThatThrownBy(() -> SparkSketch.fromBytes(ByteBuffer.allocate(16).putInt(1).putInt(3).putInt(Integer.MAX_VALUE).array()))
        .hasMessageContaining("needs 17179869176 bytes, only 4 available");
    assertThatThrownBy(() -> SparkSketch.fromBytes(ByteBuffer.allocate(12).putInt(1).putInt(3).putInt(-1).array()))
        .hasMessageContaining("word count: expected >= 1, found -1");
    assertThatThrownBy(() -> SparkSketch.fromBytes(Arrays.copyOf(ByteBuffer.allocate(12).putInt(2).putInt(3).array(), 10)))
        .hasMessageContaining("truncated");
    assertThatThrownBy(() -> SparkSketch.fromBytes("BLMF and more bytes".getBytes(StandardCharsets.US_ASCII)))
        .hasMessageContaining("a Bloomery filter file, not a Spark sketch");
  }
}
