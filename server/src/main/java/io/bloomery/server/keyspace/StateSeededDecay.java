package io.bloomery.server.keyspace;

import io.bloomery.sketch.DecayRandom;
import java.util.SplittableRandom;

/**
 * TOPK's decay source for the server: before each update the command layer reseeds it from the item and the
 * sketch's current count for it, so the decay decisions are a function of the sketch's state and the command's
 * arguments. Replaying the journal over a snapshot therefore reproduces every TOPK.ADD / TOPK.INCRBY exactly, which
 * a process-wide random (RedisBloom's {@code rand()}) could not. Per thread: a sketch's updates run under its key's
 * lock on one thread at a time.
 */
public final class StateSeededDecay implements DecayRandom {
  /** The source every TopK in the keyspace uses. */
  public static final StateSeededDecay INSTANCE = new StateSeededDecay();

  private static final ThreadLocal<SplittableRandom> CURRENT =
      ThreadLocal.withInitial(() -> new SplittableRandom(0));

  private StateSeededDecay() {}

  /** Starts the sequence for the next update on this thread. */
  public static void reseed(long seed) {
    CURRENT.set(new SplittableRandom(seed));
  }

  @Override
  public double nextChance() {
    return CURRENT.get().nextDouble();
  }
}
