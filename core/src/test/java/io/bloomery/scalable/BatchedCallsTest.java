package io.bloomery.scalable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.filter.FilterFullException;
import io.bloomery.format.FilterFormat;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * {@link ScalableBloomFilter#addAllAsSoleWriter} and {@link ScalableBloomFilter#mightContainAll} answer exactly as
 * the one-item calls in order do: duplicates within a run, groups of {@value ScalableBloomFilter#BATCH}, a chain
 * that grows mid-run and a NONSCALING filter that fills mid-run, the filter's bytes and count included.
 */
class BatchedCallsTest {

  /** What a caller's loop records per item: "1", "0", or the FilterFullException's reason; "stop" ends the run. */
  private static List<String> oneByOne(ScalableBloomFilter f, byte[][] items) {
    List<String> answers = new ArrayList<>();
    for (byte[] item : items) {
      try {
        answers.add(f.addAsSoleWriter(item, 0, item.length) ? "1" : "0");
      } catch (FilterFullException e) {
        answers.add(e.reason().name());
        if (e.reason() == FilterFullException.Reason.AT_CAPACITY) {
          break;
        }
      }
    }
    return answers;
  }

  /** The same run through the batched call, handing the items it stops at to addAsSoleWriter, as the server does. */
  private static List<String> batched(ScalableBloomFilter f, byte[][] items) {
    List<String> answers = new ArrayList<>();
    boolean[] added = new boolean[items.length];
    int i = 0;
    while (i < items.length) {
      int stop = f.addAllAsSoleWriter(items, i, items.length, added);
      assertThat(stop).isBetween(i, items.length);
      for (; i < stop; i++) {
        answers.add(added[i] ? "1" : "0");
      }
      if (i == items.length) {
        break;
      }
      try {
        answers.add(f.addAsSoleWriter(items[i], 0, items[i].length) ? "1" : "0");
      } catch (FilterFullException e) {
        answers.add(e.reason().name());
        if (e.reason() == FilterFullException.Reason.AT_CAPACITY) {
          break;
        }
      }
      i++;
    }
    return answers;
  }

  private static byte[][] items(long seed, int count, int distinct) {
    java.util.Random random = new java.util.Random(seed);
    byte[][] items = new byte[count][];
    for (int i = 0; i < count; i++) {
      items[i] = ("item-" + random.nextInt(distinct)).getBytes(StandardCharsets.UTF_8);
    }
    return items;
  }

  private static byte[][] bytes(String... words) {
    byte[][] items = new byte[words.length][];
    for (int i = 0; i < words.length; i++) {
      items[i] = words[i].getBytes(StandardCharsets.UTF_8);
    }
    return items;
  }

  private static ScalableBloomFilter filter(int capacity, boolean nonScaling, int expansion) {
    return nonScaling ? ScalableBloomFilter.createNonScaling(capacity, 0.01)
        : ScalableBloomFilter.create(capacity, 0.01, expansion);
  }

  @Property(tries = 300)
  void batchedAddsAnswerAndChangeTheFilterAsOneByOneAdds(@ForAll @IntRange(min = 1, max = 60) int capacity,
      @ForAll boolean nonScaling, @ForAll @IntRange(min = 1, max = 4) int expansion,
      @ForAll @IntRange(max = 200) int count, @ForAll @IntRange(min = 1, max = 300) int distinct,
      @ForAll @IntRange(max = 3) int runs, @ForAll long seed) {
    ScalableBloomFilter single = filter(capacity, nonScaling, expansion);
    ScalableBloomFilter batch = filter(capacity, nonScaling, expansion);
    for (int run = 0; run <= runs; run++) {
      byte[][] items = items(seed + run, count, distinct);
      byte[] before = FilterFormat.toBytes(batch);
      try (ScalableBloomFilter.Frozen view = batch.freeze()) {
        assertThat(batched(batch, items)).isEqualTo(oneByOne(single, items));
        assertThat(FilterFormat.toBytes(view)).isEqualTo(before);
      }
      assertThat(batch.insertedCount()).isEqualTo(single.insertedCount());
      assertThat(FilterFormat.toBytes(batch)).isEqualTo(FilterFormat.toBytes(single));
      byte[][] probes = items(seed - run, count + 40, distinct * 2);
      boolean[] found = new boolean[probes.length + 2];
      int maybe = batch.mightContainAll(probes, 0, probes.length, found);
      int expected = 0;
      for (int i = 0; i < probes.length; i++) {
        assertThat(found[i]).as("probe %d", i).isEqualTo(single.mightContain(probes[i]));
        expected += found[i] ? 1 : 0;
      }
      assertThat(maybe).isEqualTo(expected);
    }
  }

  @Test
  void duplicatesWithinOneRunAnswerOneThenZero() {
    ScalableBloomFilter f = ScalableBloomFilter.create(1000, 0.01);
    byte[][] items = bytes("a", "a", "b", "a");
    boolean[] added = new boolean[4];
    assertThat(f.addAllAsSoleWriter(items, 0, 4, added)).isEqualTo(4);
    assertThat(added).containsExactly(true, false, true, false);
    assertThat(f.insertedCount()).isEqualTo(2);
  }

  @Test
  void aFullNonScalingFilterStopsTheRunAtTheFirstNewItemAndStillAnswersKnownOnes() {
    ScalableBloomFilter f = ScalableBloomFilter.createNonScaling(2, 0.01);
    byte[][] items = bytes("a", "b", "a", "c");
    boolean[] added = new boolean[4];
    assertThat(f.addAllAsSoleWriter(items, 0, 4, added)).isEqualTo(3);
    assertThat(added).startsWith(true, true, false);
    assertThatThrownBy(() -> f.addAsSoleWriter(items[3], 0, 1)).isInstanceOf(FilterFullException.class);
  }

  @Test
  void rangesOutsideTheArraysAreRefused() {
    ScalableBloomFilter f = ScalableBloomFilter.create(100, 0.01);
    byte[][] items = bytes("a");
    assertThatThrownBy(() -> f.addAllAsSoleWriter(items, 0, 2, new boolean[2]))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> f.mightContainAll(items, 0, 1, new boolean[0]))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThat(f.mightContainAll(items, 1, 1, new boolean[1])).isZero();
  }
}
