package io.bloomery.server.persistence.load;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.filter.Summary;
import io.bloomery.format.FilterFormat;
import io.bloomery.hash.Protocols;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * BF.SCANDUMP's slices of a fixed key read the payload straight from the filter's words (a chunk costs its own size,
 * not the file's): every range, at every boundary (header, fixed fields, payload, a partial last word, the CRC), must
 * equal the same bytes of the whole serialized file.
 */
class FileLoadsSliceTest {

  private static Summary filled(MembershipFilter f, int n) {
    for (int i = 0; i < n; i++) {
      f.add(("item-" + i).getBytes(StandardCharsets.UTF_8));
    }
    return (Summary) f;
  }

  private static List<Summary> filters() {
    return List.of(
        filled(BloomFilter.create(Protocols.defaultProtocol(), new byte[0], 1000, 7), 80), // m not a multiple of 64
        filled(BloomFilter.create(Protocols.defaultProtocol(), "seed".getBytes(StandardCharsets.UTF_8), 64 * 40, 5),
            200),
        filled(BlockedBloomFilter.create("s".getBytes(StandardCharsets.UTF_8), 9, 6), 300),
        filled(BloomFilter.create(Protocols.defaultProtocol(), new byte[0], 1, 1), 1));
  }

  @Test
  void everyRangeEqualsTheSameBytesOfTheWholeFile() {
    long seed = System.nanoTime();
    SplittableRandom random = new SplittableRandom(seed);
    for (Summary f : filters()) {
      byte[] whole = FilterFormat.toBytes(f);
      int header = FileLoads.headerLengthOf(f);
      int[] edges = {0, 1, header - 1, header, header + 19, header + 20, header + 21, header + 27, header + 28,
          whole.length - 5, whole.length - 4, whole.length - 3, whole.length - 1, whole.length};
      for (int from : edges) {
        for (int to : edges) {
          if (from >= 0 && from < to && to <= whole.length) {
            assertThat(FileLoads.slice(f, from, to)).as("%s [%d, %d)", f, from, to)
                .isEqualTo(Arrays.copyOfRange(whole, from, to));
          }
        }
      }
      for (int i = 0; i < 200; i++) {
        int from = random.nextInt(whole.length);
        int to = from + 1 + random.nextInt(whole.length - from);
        assertThat(FileLoads.slice(f, from, to)).as("%s [%d, %d), seed %d", f, from, to, seed)
            .isEqualTo(Arrays.copyOfRange(whole, from, to));
      }
    }
  }
}
