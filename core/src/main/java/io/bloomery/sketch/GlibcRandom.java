package io.bloomery.sketch;

/*
 * glibc's random_r() in its default TYPE_3 configuration (degree 31, separation 3), which is what
 * rand() returns: srandom_r fills r[0..30] with the Park–Miller minimal standard generator
 * (16807 * r mod 2^31-1, computed with Schrage's decomposition as glibc does), then discards 310
 * outputs; each output adds the rear pointer's word into the front pointer's word (mod 2^32) and
 * returns that sum shifted right by one. Pinned by vectors generated with glibc 2.36.
 */
final class GlibcRandom implements DecayRandom {
  static final int RAND_MAX = Integer.MAX_VALUE;
  private static final int DEGREE = 31;
  private static final int SEPARATION = 3;

  private final int[] state = new int[DEGREE];
  private int front = SEPARATION;
  private int rear = 0;

  GlibcRandom(int seed) {
    int word = seed == 0 ? 1 : seed; // glibc: seed 0 behaves as seed 1; word is an int32_t
    state[0] = word;
    for (int i = 1; i < DEGREE; i++) {
      long hi = word / 127773; // C division truncates towards zero, as Java's does
      long lo = word % 127773;
      long next = 16807 * lo - 2836 * hi;
      if (next < 0) {
        next += 2147483647;
      }
      word = (int) next;
      state[i] = word;
    }
    for (int i = 0; i < DEGREE * 10; i++) {
      nextRand();
    }
  }

  /** The next value of glibc's {@code rand()}, in [0, RAND_MAX]. */
  int nextRand() {
    int value = state[front] += state[rear];
    int result = value >>> 1;
    if (++front >= DEGREE) {
      front = 0;
      ++rear;
    } else if (++rear >= DEGREE) {
      rear = 0;
    }
    return result;
  }

  @Override
  public double nextChance() {
    return nextRand() / (double) RAND_MAX;
  }
}
