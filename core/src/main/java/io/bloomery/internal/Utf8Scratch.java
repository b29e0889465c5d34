package io.bloomery.internal;

/**
 * Per-thread UTF-8 encoder that writes into a reusable byte array, so the classic and blocked kinds'
 * {@code CharSequence} overloads hash a {@code StringBuilder} or {@code CharBuffer} without allocating
 * once the scratch has grown to the longest key seen. A {@code String} is faster through
 * {@code getBytes(UTF_8)} (51 vs 108 ns per blocked lookup measured, docs/BENCHMARKS.md), so the kinds
 * use this only for other sequences. An implementation helper shared by the kinds (like
 * {@link ParallelBatches}), not an API for applications.
 *
 * <p>The characters are copied into a reusable {@code char[]} ({@code String.getChars}, an intrinsic),
 * an OR-reduction checks for pure ASCII, and the narrowing copy is a plain loop; the three loops
 * vectorize. Non-ASCII text goes through a scalar encoder that matches {@code String.getBytes(UTF_8)}
 * byte for byte, including its replacement of each unpaired surrogate by {@code '?'}. (The deprecated
 * {@code String.getBytes(int, int, byte[], int)} would copy a Latin-1 string's bytes directly but
 * cannot tell ASCII from truncated UTF-16.)
 */
public final class Utf8Scratch {

  /** Longest scratch kept per thread once a shorter key follows a longer one. */
  private static final int MAX_RETAINED_CHARS = 1 << 16;

  private static final ThreadLocal<Utf8Scratch> LOCAL = ThreadLocal.withInitial(Utf8Scratch::new);

  private char[] chars = new char[128];
  private byte[] bytes = new byte[384];

  private Utf8Scratch() {}

  /** The calling thread's scratch. Never share it between threads. */
  public static Utf8Scratch get() {
    return LOCAL.get();
  }

  /** The encoded bytes of the last {@link #encode} call, valid until the next call on this thread. */
  public byte[] bytes() {
    return bytes;
  }

  /**
   * Encodes {@code text} as UTF-8 into {@link #bytes()} and returns the byte length. Identical to
   * {@code text.toString().getBytes(StandardCharsets.UTF_8)}.
   */
  public int encode(CharSequence text) {
    int length = text.length();
    if (chars.length > MAX_RETAINED_CHARS && length <= MAX_RETAINED_CHARS) {
      chars = new char[128]; // drop the scratch a single huge key grew
      bytes = new byte[384];
    }
    char[] source = chars.length >= length ? chars : grow(length);
    if (text instanceof String) {
      ((String) text).getChars(0, length, source, 0);
    } else {
      for (int i = 0; i < length; i++) {
        source[i] = text.charAt(i);
      }
    }
    int union = 0;
    for (int i = 0; i < length; i++) {
      union |= source[i];
    }
    if (union < 0x80) {
      byte[] target = bytes.length >= length ? bytes : growBytes(length);
      for (int i = 0; i < length; i++) {
        target[i] = (byte) source[i];
      }
      return length;
    }
    return encodeGeneral(source, length);
  }

  private int encodeGeneral(char[] source, int length) {
    byte[] target = bytes.length >= 3 * length ? bytes : growBytes(3 * length);
    int out = 0;
    for (int i = 0; i < length; i++) {
      char c = source[i];
      if (c < 0x80) {
        target[out++] = (byte) c;
      } else if (c < 0x800) {
        target[out++] = (byte) (0xC0 | (c >> 6));
        target[out++] = (byte) (0x80 | (c & 0x3F));
      } else if (Character.isHighSurrogate(c) && i + 1 < length && Character.isLowSurrogate(source[i + 1])) {
        int codePoint = Character.toCodePoint(c, source[++i]);
        target[out++] = (byte) (0xF0 | (codePoint >> 18));
        target[out++] = (byte) (0x80 | ((codePoint >> 12) & 0x3F));
        target[out++] = (byte) (0x80 | ((codePoint >> 6) & 0x3F));
        target[out++] = (byte) (0x80 | (codePoint & 0x3F));
      } else if (Character.isSurrogate(c)) {
        target[out++] = (byte) '?'; // what String.getBytes(UTF_8) writes for an unpaired surrogate
      } else {
        target[out++] = (byte) (0xE0 | (c >> 12));
        target[out++] = (byte) (0x80 | ((c >> 6) & 0x3F));
        target[out++] = (byte) (0x80 | (c & 0x3F));
      }
    }
    return out;
  }

  private char[] grow(int length) {
    chars = new char[length];
    return chars;
  }

  private byte[] growBytes(int length) {
    bytes = new byte[length];
    return bytes;
  }
}
