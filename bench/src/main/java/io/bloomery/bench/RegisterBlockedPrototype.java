package io.bloomery.bench;

import io.bloomery.blocked.BlockedBloomMath;

/**
 * A register-blocked Bloom filter (Lang, Neumann, Kemper, Boncz, PVLDB 12(5) 2019): all k bits of a
 * key in one 64-bit word, so a probe is one load and one compare. Kept in the bench only, as the
 * measured alternative to {@code BlockedBloomFilter}: it is faster per lookup but needs about 21% more
 * memory at 1% (12.0 vs 9.9 bits per key by the same Poisson model with 64-bit blocks), so it does not
 * ship (docs/BENCHMARKS.md has the figures). Single-threaded; not a product class.
 */
final class RegisterBlockedPrototype {
  private static final int[] SALTS = {0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31};

  final long[] words;
  final int hashes;
  private final long wordCount;

  private RegisterBlockedPrototype(long wordCount, int hashes) {
    this.words = new long[Math.toIntExact(wordCount)];
    this.wordCount = wordCount;
    this.hashes = hashes;
  }

  /** The fewest 64-bit words (and best k ≤ 8) whose model FPR after n keys is at most fpp. */
  static RegisterBlockedPrototype create(long n, double fpp) {
    long low = 1;
    long high = Math.max(2, n * 64);
    while (high - low > 1) {
      long mid = low + (high - low) / 2;
      if (bestRate(n, mid) <= fpp) {
        high = mid;
      } else {
        low = mid;
      }
    }
    return new RegisterBlockedPrototype(high, bestHashes(n, high));
  }

  private static double bestRate(long n, long words) {
    return BlockedBloomMath.blockedFalsePositiveRate(n, words, 64, bestHashes(n, words));
  }

  private static int bestHashes(long n, long words) {
    int best = 1;
    double bestRate = 2;
    for (int k = 1; k <= SALTS.length; k++) {
      double rate = BlockedBloomMath.blockedFalsePositiveRate(n, words, 64, k);
      if (rate < bestRate) {
        bestRate = rate;
        best = k;
      }
    }
    return best;
  }

  double modelFpp(long n) {
    return BlockedBloomMath.blockedFalsePositiveRate(n, wordCount, 64, hashes);
  }

  long bitSize() {
    return wordCount * 64;
  }

  private long mask(long hash) {
    int x = (int) hash;
    long mask = 0;
    for (int i = 0; i < hashes; i++) {
      mask |= 1L << ((x * SALTS[i]) >>> 26);
    }
    return mask;
  }

  private int index(long hash) {
    return (int) (((hash >>> 32) * wordCount) >>> 32);
  }

  void add(long hash) {
    words[index(hash)] |= mask(hash);
  }

  boolean mightContain(long hash) {
    long mask = mask(hash);
    return (words[index(hash)] & mask) == mask;
  }
}
