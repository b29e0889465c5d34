package io.bloomery.cuckoo;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.filter.FilterFullException;
import io.bloomery.format.RedisBloomDump;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * {@link CuckooFilter#addAsSoleWriter} and {@link CuckooFilter#insertAsSoleWriter} (the server's path, under its key
 * lock) answer, fill, kick out, grow and refuse exactly as {@code add}, {@code addIfAbsent} and {@code insert}: the
 * same answer for every call and the same bytes in {@code CF.SCANDUMP} after each run, over filters small enough
 * that kick-out chains, growth, the sub-filter limit and a full filter with expansion 0 all happen.
 */
class CuckooSoleWriterTest {

  @Property(tries = 300)
  void soleWriterCallsBuildTheSameFilterAsTheLockedOnes(@ForAll @IntRange(min = 8, max = 300) int capacity,
      @ForAll @IntRange(min = 1, max = 4) int bucketSize, @ForAll @IntRange(min = 1, max = 40) int maxIterations,
      @ForAll @IntRange(min = 0, max = 2) int expansion, @ForAll @IntRange(min = 1, max = 12) int maxExpansions,
      @ForAll long seed) {
    CuckooFilter locked = CuckooFilter.create(capacity, bucketSize, maxIterations, expansion);
    CuckooFilter sole = CuckooFilter.create(capacity, bucketSize, maxIterations, expansion);
    locked.setMaxExpansions(maxExpansions);
    sole.setMaxExpansions(maxExpansions);
    SplittableRandom random = new SplittableRandom(seed);
    int distinct = 1 + random.nextInt(4 * capacity + 8); // repeats make duplicates and ADDNX refusals
    for (int op = 0; op < 6 * capacity + 50; op++) {
      boolean nx = random.nextBoolean();
      if (random.nextInt(4) == 0) {
        List<byte[]> items = new ArrayList<>();
        for (int i = random.nextInt(1, 6); i > 0; i--) {
          items.add(item(random.nextInt(distinct)));
        }
        assertThat(answer(() -> sole.insertAsSoleWriter(items, nx).toString()))
            .as("op %d: insert %s", op, nx).isEqualTo(answer(() -> locked.insert(items, nx).toString()));
      } else {
        byte[] item = item(random.nextInt(distinct));
        assertThat(answer(() -> Boolean.toString(sole.addAsSoleWriter(item, nx))))
            .as("op %d: add %s", op, nx)
            .isEqualTo(answer(() -> Boolean.toString(nx ? locked.addIfAbsent(item) : locked.add(item))));
      }
    }
    assertThat(sole.insertedCount()).isEqualTo(locked.insertedCount());
    assertThat(sole.memoryBytes()).isEqualTo(locked.info().size()).isEqualTo(sole.info().size());
    assertThat(sole.debug()).isEqualTo(locked.debug());
    List<RedisBloomDump.Chunk> expected = RedisBloomDump.scanDumpAll(locked);
    List<RedisBloomDump.Chunk> actual = RedisBloomDump.scanDumpAll(sole);
    assertThat(actual).hasSameSizeAs(expected);
    for (int i = 0; i < expected.size(); i++) {
      assertThat(actual.get(i).iterator()).isEqualTo(expected.get(i).iterator());
      assertThat(actual.get(i).data()).as("chunk %d", i).isEqualTo(expected.get(i).data());
    }
  }

  private static byte[] item(int i) {
    return ("item-" + i).getBytes(StandardCharsets.UTF_8);
  }

  /** The call's result, or the reason of the FilterFullException it threw. */
  private static String answer(java.util.function.Supplier<String> call) {
    try {
      return call.get();
    } catch (FilterFullException e) {
      return e.reason().name();
    }
  }
}
