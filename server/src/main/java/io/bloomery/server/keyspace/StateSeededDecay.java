package io.bloomery.server.keyspace;

import io.bloomery.hash.MurmurHash2;
import io.bloomery.sketch.DecayRandom;

/**
 * TOPK's decay source for the server: an update that must draw takes its draws from a source seeded by the item and
 * the sketch's count for the item before the update ({@link #beforeDraws}), so the decay decisions are a function of
 * the sketch's state and the command's arguments. Replaying the journal over a snapshot therefore reproduces every
 * TOPK.ADD / TOPK.INCRBY exactly, which a process-wide random (RedisBloom's {@code rand()}) could not.
 *
 * <p>The draws of an update seeded with {@code s} are those of {@code new SplittableRandom(s).nextDouble()} (SplitMix64
 * with the golden gamma, 53 bits per double), computed in place: journals and replicas written by servers that
 * allocated a {@code SplittableRandom} per update replay to the same sketches. Stateless and shared by every sketch;
 * each update's draws come from the source {@link #beforeDraws} returns, which only that update uses.
 */
public final class StateSeededDecay implements DecayRandom {
  /** The source every TopK in the keyspace uses. */
  public static final StateSeededDecay INSTANCE = new StateSeededDecay();

  private static final long GOLDEN_GAMMA = 0x9e3779b97f4a7c15L;
  private static final double DOUBLE_UNIT = 0x1.0p-53;

  /** One update's draws: the SplitMix64 state. */
  private static final class Draws implements DecayRandom {
    private long seed;

    Draws(long seed) {
      this.seed = seed;
    }

    @Override
    public double nextChance() {
      long z = seed += GOLDEN_GAMMA;
      z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
      z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
      return ((z ^ (z >>> 31)) >>> 11) * DOUBLE_UNIT;
    }
  }

  private StateSeededDecay() {}

  /** The seed of an update of {@code item} whose count before the update is {@code countBefore}. */
  static long seedOf(byte[] item, long countBefore) {
    return MurmurHash2.hash64A(item, 0) * 31 + countBefore;
  }

  @Override
  public DecayRandom beforeDraws(byte[] item, long countBefore) {
    return new Draws(seedOf(item, countBefore));
  }

  /**
   * Not a source of its own: a sketch draws only after {@link #beforeDraws}, from the source that returns.
   *
   * @throws IllegalStateException always
   */
  @Override
  public double nextChance() {
    throw new IllegalStateException("the server's TOPK decay draws only from the source beforeDraws returns");
  }
}
