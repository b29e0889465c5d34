package io.bloomery.spark;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * A Bloom filter written by Spark's own {@code df.stat().bloomFilter(...)} ({@code
 * org.apache.spark.util.sketch.BloomFilter.writeTo}), read as a foreign format so existing sketches
 * keep answering exactly as Spark answers them, with no Spark classes involved. Read-only: a
 * sketch's hash is not a Bloomery protocol, so it cannot be merged with or converted into a
 * Bloomery filter; rebuild from the data to migrate.
 *
 * <table>
 *   <caption>Layout (all integers big-endian, Java DataOutputStream)</caption>
 *   <tr><th>field</th><th>V1</th><th>V2 (Spark 4.1+ default, SPARK-47547)</th></tr>
 *   <tr><td>version</td><td>i32 = 1</td><td>i32 = 2</td></tr>
 *   <tr><td>hash count k</td><td>i32</td><td>i32</td></tr>
 *   <tr><td>seed</td><td>(absent; 0)</td><td>i32</td></tr>
 *   <tr><td>word count W</td><td>i32</td><td>i32</td></tr>
 *   <tr><td>words</td><td>W × i64; bit i is bit (i mod 64) of word ⌊i / 64⌋; m = 64 W</td><td>same</td></tr>
 * </table>
 *
 * <p><b>Placement.</b> An item's bytes (a string's UTF-8) hash with Spark's legacy Murmur3 x86_32
 * variant, which mixes every trailing byte as a separate sign-extended block: h1 = H(item, seed), h2
 * = H(item, h1); a long uses Murmur3's two-int form. V1 probes {@code c_i = h1 + i·h2} for i = 1..k
 * in 32-bit arithmetic, flipped by {@code ~} when negative, so it never reaches a bit past 2^31 and
 * a larger V1 sketch is worse than its model. V2 runs {@code c = h1 · (2^31 − 1)} in 64 bits, adds
 * h2 per probe and uses {@code ~c} for a negative c (without changing the running sum), reaching
 * every bit. The bit is {@code c mod m}.
 *
 * <p>Loading checks every field before allocating: the version, 1 ≤ k ≤ 2^16, 1 ≤ W, and W × 8
 * against the bytes that remain (or the caller's limit for a plain stream). Immutable and
 * thread-safe.
 */
public final class SparkSketch {
  private static final int MAX_HASHES = 1 << 16;

  private final int version;
  private final int hashes;
  private final int seed;
  private final long[] words;
  private final long bits;

  private SparkSketch(int version, int hashes, int seed, long[] words) {
    this.version = version;
    this.hashes = hashes;
    this.seed = seed;
    this.words = words;
    this.bits = 64L * words.length;
  }

  /** Parses a whole sketch file; trailing bytes are refused. */
  public static SparkSketch fromBytes(byte[] bytes) throws IOException {
    ByteArrayInputStream in = new ByteArrayInputStream(bytes);
    SparkSketch sketch = read(in, bytes.length);
    if (in.available() > 0) {
      throw new IOException("Spark sketch: " + in.available() + " trailing bytes after the last word");
    }
    return sketch;
  }

  /**
   * Reads one sketch from {@code in}, refusing before allocation a bit array larger than
   * {@code maxBytes}.
   *
   * @throws IOException with a message naming the field for a malformed or truncated sketch
   */
  public static SparkSketch read(InputStream in, long maxBytes) throws IOException {
    DataInputStream data = new DataInputStream(Objects.requireNonNull(in, "in"));
    try {
      int version = data.readInt();
      if (version != 1 && version != 2) {
        throw new IOException("Spark sketch: version: expected 1 or 2, found " + version
            + (version == 0x424C4D46 ? " (this is a Bloomery filter file, not a Spark sketch)" : ""));
      }
      int hashes = data.readInt();
      if (hashes < 1 || hashes > MAX_HASHES) {
        throw new IOException("Spark sketch: hash count: expected 1 <= k <= " + MAX_HASHES + ", found " + hashes);
      }
      int seed = version == 2 ? data.readInt() : 0;
      int wordCount = data.readInt();
      long header = version == 2 ? 16 : 12;
      if (wordCount < 1) {
        throw new IOException("Spark sketch: word count: expected >= 1, found " + wordCount);
      }
      if (8L * wordCount > maxBytes - header) {
        throw new IOException("Spark sketch: word count " + wordCount + " needs " + 8L * wordCount
            + " bytes, only " + Math.max(0, maxBytes - header) + " available");
      }
      long[] words = new long[wordCount];
      for (int i = 0; i < wordCount; i++) {
        words[i] = data.readLong();
      }
      return new SparkSketch(version, hashes, seed, words);
    } catch (EOFException e) {
      throw new IOException("Spark sketch: truncated", e);
    }
  }

  /** 1 or 2. */
  public int version() {
    return version;
  }

  /** The number of probes k. */
  public int hashCount() {
    return hashes;
  }

  /** The hash seed (always 0 in V1). */
  public int seed() {
    return seed;
  }

  /** The number of bits m (64 × words). */
  public long bitSize() {
    return bits;
  }

  /** The number of set bits. */
  public long bitCount() {
    long count = 0;
    for (long word : words) {
      count += Long.bitCount(word);
    }
    return count;
  }

  /** Whether the UTF-8 bytes of {@code item} may be present, as Spark's {@code mightContainString}. */
  public boolean mightContain(CharSequence item) {
    return mightContain(item.toString().getBytes(StandardCharsets.UTF_8));
  }

  /** Whether {@code item} may be present, as Spark's {@code mightContainBinary}. */
  public boolean mightContain(byte[] item) {
    int h1 = hashBytes(item, seed);
    return probe(h1, hashBytes(item, h1));
  }

  /** Whether {@code item} may be present, as Spark's {@code mightContainLong} (also for its int columns). */
  public boolean mightContain(long item) {
    int h1 = hashLong(item, seed);
    return probe(h1, hashLong(item, h1));
  }

  private boolean probe(int h1, int h2) {
    if (version == 1) {
      for (int i = 1; i <= hashes; i++) {
        int combined = h1 + i * h2;
        if (!isSet((combined < 0 ? ~combined : combined) % bits)) {
          return false;
        }
      }
      return true;
    }
    long combined = (long) h1 * Integer.MAX_VALUE;
    for (int i = 0; i < hashes; i++) {
      combined += h2;
      if (!isSet((combined < 0 ? ~combined : combined) % bits)) {
        return false;
      }
    }
    return true;
  }

  private boolean isSet(long bit) {
    return (words[(int) (bit >>> 6)] & (1L << bit)) != 0;
  }

  // Murmur3 x86_32 (Appleby), in the form Spark's sketch uses.

  private static int hashBytes(byte[] item, int seed) {
    int aligned = item.length - item.length % 4;
    int h1 = seed;
    for (int i = 0; i < aligned; i += 4) {
      int block = (item[i] & 0xFF) | (item[i + 1] & 0xFF) << 8 | (item[i + 2] & 0xFF) << 16 | (item[i + 3] & 0xFF) << 24;
      h1 = mixH1(h1, mixK1(block));
    }
    for (int i = aligned; i < item.length; i++) {
      h1 = mixH1(h1, mixK1(item[i])); // each trailing byte, sign-extended, is its own block
    }
    return fmix(h1, item.length);
  }

  private static int hashLong(long item, int seed) {
    int h1 = mixH1(seed, mixK1((int) item));
    h1 = mixH1(h1, mixK1((int) (item >>> 32)));
    return fmix(h1, 8);
  }

  private static int mixK1(int k1) {
    return Integer.rotateLeft(k1 * 0xcc9e2d51, 15) * 0x1b873593;
  }

  private static int mixH1(int h1, int k1) {
    return Integer.rotateLeft(h1 ^ k1, 13) * 5 + 0xe6546b64;
  }

  private static int fmix(int h1, int length) {
    h1 ^= length;
    h1 ^= h1 >>> 16;
    h1 *= 0x85ebca6b;
    h1 ^= h1 >>> 13;
    h1 *= 0xc2b2ae35;
    return h1 ^ (h1 >>> 16);
  }
}
