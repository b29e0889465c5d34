package io.bloomery.internal;

import io.bloomery.hash.DoubleHashingPlacement;
import io.bloomery.hash.EnhancedDoubleHashing;
import io.bloomery.hash.HashProtocol;
import java.util.Arrays;
import java.util.Objects;

/*
 * The classic kind's batched probe, shared by the heap filter and the read-only mapped one; each
 * supplies only its round of word loads (Gather), so the loads stay a tight loop over its own storage.
 *
 * A classic lookup of a member pays k independent cache misses, so what bounds a batch is how many
 * misses the core keeps in flight, and that is bounded by how many instructions sit between two loads
 * (the reorder window). Hence the shape: all k positions of a group of keys are computed while hashing
 * (arithmetic only, no memory wait), and the gather loops that follow are a few instructions per load
 * with no branch on what a load returns. Walking each key's positions in place from its hash while
 * reading would put the hashing between the loads and keep fewer misses in flight.
 *
 * Non-members mostly fail at their first or second bit, so a group that is mostly non-members is
 * compacted after each of the first COMPACTING_ROUNDS rounds (keys found absent drop out; the
 * compaction is a separate pass after the round's loads, so no load waits on an earlier one); the rest
 * of the survivors' rounds are then read without compaction. A group that is mostly members would only
 * pay for the compaction, so when the previous group found more than half of its keys, the next reads
 * all k rounds of every key. Either way the answers are exactly those of the one-key lookup.
 */
/** The classic Bloom filter's grouped batch probe over any word storage (see the block comment). */
public final class ClassicProbe {

  /** Keys per group of the batched probe and insert: enough misses in flight, small enough for L1. */
  public static final int BATCH = 32;

  /** Rounds after which a mostly-absent group drops the keys found absent (7/8 of them at the optimal fill). */
  static final int COMPACTING_ROUNDS = 3;

  /** Above this k the batch calls go key by key (a group's positions, 32 × k longs, would outgrow L1). */
  public static final int MAX_HASHES = 32;

  /** A filter's round of loads over its own words. */
  @FunctionalInterface
  public interface Gather {
    /**
     * {@code hit[a] &= word >>> position} for the position at {@code positions[base + alive[a]]} (or
     * {@code base + a} when {@code alive} is null), a &lt; live: bit 0 of {@code hit[a]} is then whether
     * every bit read so far for that key was set.
     */
    void gather(long[] positions, int base, int[] alive, int live, long[] hit);
  }

  private final DoubleHashingPlacement hashing;
  private final long bits;
  private final int hashes;

  private ClassicProbe(DoubleHashingPlacement hashing, long bits, int hashes) {
    this.hashing = hashing;
    this.bits = bits;
    this.hashes = hashes;
  }

  /**
   * The batched probe for a filter placed by {@code placement}, or null when it must query key by key
   * (a protocol whose positions do not come from one 64-bit hash, or k above {@value #MAX_HASHES}).
   */
  public static ClassicProbe of(HashProtocol.Placement placement, long bits, int hashes) {
    return placement instanceof DoubleHashingPlacement && hashes <= MAX_HASHES
        ? new ClassicProbe((DoubleHashingPlacement) placement, bits, hashes) : null;
  }

  /**
   * Sets {@code out[i]} for {@code i} in {@code [from, to)} to whether every bit of {@code items[i]} is
   * set, reading the words through {@code words}; returns the number of {@code true} answers.
   */
  public int probe(byte[][] items, int from, int to, boolean[] out, Gather words) {
    long[] positions = new long[BATCH * hashes];
    long[] hit = new long[BATCH];
    int[] alive = new int[BATCH];
    boolean mostlyMembers = false;
    int maybe = 0;
    for (int start = from; start < to; start += BATCH) {
      int size = Math.min(BATCH, to - start);
      place(items, start, size, positions);
      Arrays.fill(hit, 0, size, 1L);
      int found = 0;
      if (mostlyMembers) {
        for (int i = 0; i < hashes; i++) {
          words.gather(positions, i * BATCH, null, size, hit);
        }
        for (int j = 0; j < size; j++) {
          int answer = (int) (hit[j] & 1);
          out[start + j] = answer != 0;
          found += answer;
        }
      } else {
        for (int j = 0; j < size; j++) {
          alive[j] = j;
          out[start + j] = false;
        }
        int live = size;
        for (int i = 0; i < hashes && live > 0; i++) {
          words.gather(positions, i * BATCH, alive, live, hit);
          if (i < COMPACTING_ROUNDS || i == hashes - 1) {
            live = compact(alive, hit, live);
          }
        }
        for (int a = 0; a < live; a++) {
          out[start + alive[a]] = true;
        }
        found = live;
      }
      mostlyMembers = 2 * found > size;
      maybe += found;
    }
    return maybe;
  }

  /**
   * Hashes {@code items[start, start + size)} and writes position i of key j to {@code positions[i *
   * BATCH + j]}: round-major, so each round of the gather reads one run.
   */
  public void place(byte[][] items, int start, int size, long[] positions) {
    for (int j = 0; j < size; j++) {
      byte[] item = Objects.requireNonNull(items[start + j], "items[]");
      long x = hashing.hash(item, 0, item.length);
      long y = EnhancedDoubleHashing.stride(x);
      long d = EnhancedDoubleHashing.CUBIC_SCALE;
      for (int i = 0, slot = j; i < hashes; i++, slot += BATCH) {
        positions[slot] = EnhancedDoubleHashing.reduce(x, bits);
        x += y;
        y += d;
        d += EnhancedDoubleHashing.CUBIC_SCALE;
      }
    }
  }

  /** Keeps the keys whose hit bit is set, in order, in {@code alive[0, kept)}; returns kept. */
  private static int compact(int[] alive, long[] hit, int live) {
    int kept = 0;
    for (int a = 0; a < live; a++) {
      long h = hit[a];
      alive[kept] = alive[a];
      hit[kept] = h;
      kept += (int) (h & 1);
    }
    return kept;
  }
}
