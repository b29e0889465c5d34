package io.bloomery.internal;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetEncoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Per-thread UTF-8 encoder that writes into a reusable byte array, so the classic and blocked kinds'
 * {@code CharSequence} overloads (a {@code String} included) hash without allocating once the scratch
 * has grown to the longest key seen (up to {@value #MAX_RETAINED_CHARS} characters it is kept). An
 * implementation helper shared by the kinds (like {@link ParallelBatches}), not an API for applications.
 *
 * <p>The characters are copied into a reusable {@code char[]} ({@code String.getChars}, an intrinsic)
 * and encoded by the JDK's own UTF-8 {@link CharsetEncoder} over array-backed buffers: its ASCII run is
 * the intrinsic that {@code String.getBytes} uses, and it replaces each unpaired surrogate by {@code '?'}
 * as {@code String.getBytes(UTF_8)} does, so the bytes are the same.
 */
public final class Utf8Scratch {

  /** Longest scratch kept per thread once a shorter key follows a longer one. */
  private static final int MAX_RETAINED_CHARS = 1 << 16;

  /** Scratch characters to start with; the byte scratch holds three bytes per character (the most UTF-8 needs). */
  private static final int INITIAL_CHARS = 128;

  private static final ThreadLocal<Utf8Scratch> LOCAL = ThreadLocal.withInitial(Utf8Scratch::new);

  private final CharsetEncoder encoder = StandardCharsets.UTF_8.newEncoder()
      .onMalformedInput(CodingErrorAction.REPLACE)
      .onUnmappableCharacter(CodingErrorAction.REPLACE);
  private char[] chars;
  private byte[] bytes;
  private CharBuffer charView;
  private ByteBuffer byteView;

  private Utf8Scratch() {
    allocate(INITIAL_CHARS);
  }

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
    if (length > chars.length || (chars.length > MAX_RETAINED_CHARS && length <= MAX_RETAINED_CHARS)) {
      allocate(Math.max(INITIAL_CHARS, length)); // grow, or drop the scratch a single huge key grew
    }
    char[] source = chars;
    if (text instanceof String) {
      ((String) text).getChars(0, length, source, 0);
    } else {
      for (int i = 0; i < length; i++) {
        source[i] = text.charAt(i);
      }
    }
    CharBuffer in = charView;
    in.limit(length).position(0);
    ByteBuffer out = byteView;
    out.clear();
    CharsetEncoder utf8 = encoder.reset();
    CoderResult result = utf8.encode(in, out, true);
    if (result.isUnderflow()) {
      result = utf8.flush(out);
    }
    if (!result.isUnderflow()) {
      throw new AssertionError("3 bytes per char always suffice for UTF-8; encoder said " + result);
    }
    return out.position();
  }

  private void allocate(int charCount) {
    chars = new char[charCount];
    bytes = new byte[3 * charCount];
    charView = CharBuffer.wrap(chars);
    byteView = ByteBuffer.wrap(bytes);
  }
}
