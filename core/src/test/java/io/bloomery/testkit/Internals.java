package io.bloomery.testkit;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.ScalableBlockedBloomFilter;
import io.bloomery.blocked.SplitBlockBloomFilter;
import io.bloomery.counting.CountingBloomFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.fuse.BinaryFuseFilter;
import io.bloomery.internal.KindAccess;
import io.bloomery.sketch.CountMinSketch;
import io.bloomery.sketch.DecayRandom;
import io.bloomery.sketch.TopK;

/** The kinds' non-public state for tests outside the kind's package, through core's {@link KindAccess}. */
public final class Internals {
  private Internals() {}

  public static long wordCount(BloomFilter filter) {
    return KindAccess.classic(BloomFilter.class).wordCount(filter);
  }

  public static long word(BloomFilter filter, long index) {
    return KindAccess.classic(BloomFilter.class).word(filter, index);
  }

  public static long wordCount(BlockedBloomFilter filter) {
    return KindAccess.blocked(BlockedBloomFilter.class).wordCount(filter);
  }

  public static long word(BlockedBloomFilter filter, long index) {
    return KindAccess.blocked(BlockedBloomFilter.class).word(filter, index);
  }

  /** Every layer's words, oldest layer first. */
  public static java.util.List<java.util.List<Long>> layerWords(ScalableBlockedBloomFilter chain) {
    java.util.List<java.util.List<Long>> layers = new java.util.ArrayList<>();
    for (BlockedBloomFilter layer : KindAccess.scalableBlocked(ScalableBlockedBloomFilter.class, BlockedBloomFilter.class).layers(chain).layers()) {
      java.util.List<Long> words = new java.util.ArrayList<>();
      for (long j = 0; j < wordCount(layer); j++) {
        words.add(word(layer, j));
      }
      layers.add(words);
    }
    return layers;
  }

  public static long wordCount(SplitBlockBloomFilter filter) {
    return KindAccess.splitBlock(SplitBlockBloomFilter.class).wordCount(filter);
  }

  public static long word(SplitBlockBloomFilter filter, long index) {
    return KindAccess.splitBlock(SplitBlockBloomFilter.class).word(filter, index);
  }

  public static long wordCount(CountingBloomFilter filter) {
    return KindAccess.counting(CountingBloomFilter.class).wordCount(filter);
  }

  public static long word(CountingBloomFilter filter, long index) {
    return KindAccess.counting(CountingBloomFilter.class).word(filter, index);
  }

  public static int fingerprint(BinaryFuseFilter filter, long index) {
    return KindAccess.fuse(BinaryFuseFilter.class).fingerprint(filter, index);
  }

  public static long counterAt(CountMinSketch sketch, long index) {
    return KindAccess.countMin(CountMinSketch.class).counterAt(sketch, index);
  }

  public static int bucketFingerprint(TopK topK, long index) {
    return KindAccess.topK(TopK.class, DecayRandom.class).bucketFingerprint(topK, index);
  }

  public static long bucketCount(TopK topK, long index) {
    return KindAccess.topK(TopK.class, DecayRandom.class).bucketCount(topK, index);
  }

  public static byte[] heapItem(TopK topK, int slot) {
    return KindAccess.topK(TopK.class, DecayRandom.class).heapItem(topK, slot);
  }

  public static long heapCount(TopK topK, int slot) {
    return KindAccess.topK(TopK.class, DecayRandom.class).heapCount(topK, slot);
  }
}
