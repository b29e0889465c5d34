package io.bloomery.sketch;

import java.util.SplittableRandom;

/**
 * The random source of {@link TopK}'s probabilistic decay: each call returns the "chance" that
 * RedisBloom computes as {@code rand() / (double) RAND_MAX}, a value in [0, 1].
 *
 * <p>A source is injected per sketch and never global, so a test or a replay with the same seed sees
 * the same decays. Implementations need not be thread-safe; a {@link TopK} calls its source only
 * from inside its own (externally serialised) updates.
 */
@FunctionalInterface
public interface DecayRandom {

  /** The next chance in [0, 1]; a bucket decays when the chance is below {@code decay^count}. */
  double nextChance();

  /**
   * Called once by an update of {@code item} that is about to draw (one of its buckets holds another item's
   * fingerprint and must decay), before its first draw, with {@link TopK#count(byte[]) count(item)} as the sketch
   * stood before the update; updates that draw nothing do not call it. Returns the source the update draws from:
   * by default this one. A source whose draws must be a function of the sketch's state and the update (a server
   * replaying its journal) returns one seeded from them.
   */
  default DecayRandom beforeDraws(byte[] item, long countBefore) {
    return this;
  }

  /**
   * glibc's {@code rand()} after {@code srand(seed)} (the TYPE_3 additive feedback generator,
   * {@code RAND_MAX} = 2^31 − 1), divided by {@code RAND_MAX} as RedisBloom does. With the seed of
   * a process that calls nothing else that draws from {@code rand()}, this reproduces RedisBloom's
   * TOPK decisions exactly; a Redis server seeds with {@code srand(time ^ pid)} and shares
   * {@code rand()} with the rest of the process, so a live server cannot be reproduced.
   */
  static DecayRandom glibc(int seed) {
    return new GlibcRandom(seed);
  }

  /** A fast, seeded, non-glibc source: {@link SplittableRandom#nextDouble()} with the given seed. */
  static DecayRandom seeded(long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    return random::nextDouble;
  }
}
