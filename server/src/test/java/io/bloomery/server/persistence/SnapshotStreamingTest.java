package io.bloomery.server.persistence;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.aging.AgePartitionedFilter;
import io.bloomery.cuckoo.CuckooFilter;
import io.bloomery.filter.Summary;
import io.bloomery.format.FilterFormat;
import io.bloomery.scalable.ScalableBloomFilter;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The snapshot writer streams every key from the live value: for the kinds whose format writer used to take a
 * whole copy first (scalable Bloom, cuckoo, age-partitioned), writing a key of tens of MB allocates a small fraction
 * of it, measured with the JVM's per-thread allocation counter, and the snapshot reads back equal.
 */
class SnapshotStreamingTest {
  @TempDir Path dir;

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void writingABigKeyOfEveryCopyingKindAllocatesNoCopyOfIt() throws Exception {
    ScalableBloomFilter scalable = ScalableBloomFilter.create(20_000_000, 0.01);
    CuckooFilter cuckoo = CuckooFilter.create(32_000_000);
    AgePartitionedFilter aging = AgePartitionedFilter.create(Duration.ofMinutes(4), 4, 20_000_000, 0.01, () -> 0L);
    for (int i = 0; i < 1000; i++) {
      scalable.add(utf8("s" + i));
      cuckoo.add(utf8("c" + i));
      aging.add(utf8("a" + i));
    }
    Map<String, Summary> keys = new LinkedHashMap<>();
    keys.put("scalable", scalable);
    keys.put("cuckoo", cuckoo);
    keys.put("aging", aging);
    com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long thread = Thread.currentThread().getId();
    for (int round = 0; round < 2; round++) { // the first round warms the code up
      Path file = dir.resolve("snapshot." + round + ".snap");
      try (SnapshotFormat.Writer writer = new SnapshotFormat.Writer(file)) {
        writer.begin(1_764_460_800_000L, 3);
        for (Map.Entry<String, Summary> key : keys.entrySet()) {
          long size = FilterFormat.serializedLength(key.getValue());
          assertThat(size).as(key.getKey()).isGreaterThan(24L << 20);
          long before = threads.getThreadAllocatedBytes(thread);
          writer.accept(utf8(key.getKey()), key.getValue(), -1);
          long allocated = threads.getThreadAllocatedBytes(thread) - before;
          if (round == 1) {
            assertThat(allocated).as("bytes allocated writing the %s key of %d bytes", key.getKey(), size)
                .isLessThan(size / 8);
          }
        }
        writer.publish();
      }
      Map<String, byte[]> read = new LinkedHashMap<>();
      SnapshotFormat.read(file, (key, value, expireAt) -> {
        // an age-partitioned filter reads back on the system clock; compare it on the test's fixed one
        Object fixed = value instanceof AgePartitionedFilter a ? a.copy(() -> 0L) : value;
        read.put(new String(key, StandardCharsets.UTF_8), FilterFormat.toBytes((Summary) fixed));
      });
      assertThat(read.keySet()).containsExactlyElementsOf(keys.keySet());
      for (Map.Entry<String, Summary> key : keys.entrySet()) {
        assertThat(read.get(key.getKey())).as(key.getKey()).isEqualTo(FilterFormat.toBytes(key.getValue()));
      }
      Files.delete(file);
    }
  }
}
