package io.bloomery.server.keyspace;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.hash.MurmurHash2;
import io.bloomery.sketch.DecayRandom;
import io.bloomery.sketch.TopK;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The server's TOPK decay must stay what journals and replicas were written with: before each update, a
 * {@code new SplittableRandom(hash64A(item, 0) * 31 + count(item))} drawn from with {@code nextDouble()}.
 */
class StateSeededDecayTest {

  @Test
  void drawsAfterAReseedAreThoseOfASplittableRandomWithTheSameSeed() {
    long seed = new Random().nextLong();
    Random cases = new Random(seed);
    for (int i = 0; i < 10_000; i++) {
      byte[] item = ("item" + cases.nextInt()).getBytes(StandardCharsets.UTF_8);
      long count = cases.nextInt(1 << 20);
      DecayRandom draws = StateSeededDecay.INSTANCE.beforeDraws(item, count);
      SplittableRandom expected = new SplittableRandom(MurmurHash2.hash64A(item, 0) * 31 + count);
      for (int d = 0; d < 4; d++) {
        assertThat(draws.nextChance()).as("case %d draw %d (seed %d)", i, d, seed)
            .isEqualTo(expected.nextDouble());
      }
    }
  }

  /** A sketch updated as the server did before it reseeded only for updates that draw: reseeded before each one. */
  private static final class ReseededBeforeEveryUpdate implements DecayRandom {
    SplittableRandom current = new SplittableRandom(0);

    @Override
    public double nextChance() {
      return current.nextDouble();
    }
  }

  @Test
  void aSketchDecaysExactlyAsWhenEveryUpdateReseededFromItsCount() {
    long seed = new Random().nextLong();
    Random ops = new Random(seed);
    // small and crowded, so that most updates decay a bucket of another item
    TopK server = TopK.reserve(5, 8, 4, 0.9, StateSeededDecay.INSTANCE);
    ReseededBeforeEveryUpdate old = new ReseededBeforeEveryUpdate();
    TopK reference = TopK.reserve(5, 8, 4, 0.9, old);
    int decays = 0;
    for (int i = 0; i < 20_000; i++) {
      byte[] item = ("k" + ops.nextInt(200)).getBytes(StandardCharsets.UTF_8);
      long increment = ops.nextInt(4);
      long before = reference.count(item);
      old.current = new SplittableRandom(MurmurHash2.hash64A(item, 0) * 31 + before);
      byte[] expelled = reference.incrementBy(item, increment);
      assertThat(server.incrementBy(item, increment)).as("update %d (seed %d)", i, seed).isEqualTo(expelled);
      if (reference.count(item) < before + increment) {
        decays++;
      }
    }
    assertThat(server.list()).usingRecursiveComparison().as("seed %d", seed).isEqualTo(reference.list());
    assertThat(decays).as("updates that lost counts to decay or collisions").isGreaterThan(1000);
  }
}
