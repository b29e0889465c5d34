package io.bloomery.blocked;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/** Streams word arrays as little-endian bytes in 8 KiB chunks (no copy of the whole array). */
final class LittleEndianWords {

  private static final int CHUNK = 8192;

  private LittleEndianWords() {}

  static void write(OutputStream out, long[] words, int from, int count) throws IOException {
    byte[] chunk = new byte[CHUNK];
    int filled = 0;
    for (int i = from, end = from + count; i < end; i++) {
      long word = words[i];
      for (int b = 0; b < 8; b++) {
        chunk[filled++] = (byte) (word >>> (8 * b));
      }
      if (filled == CHUNK) {
        out.write(chunk, 0, filled);
        filled = 0;
      }
    }
    out.write(chunk, 0, filled);
  }

  static void read(InputStream in, long[] words, int from, int count) throws IOException {
    byte[] chunk = new byte[CHUNK];
    int index = from;
    long remaining = (long) count * 8;
    while (remaining > 0) {
      int want = (int) Math.min(CHUNK, remaining);
      int got = in.readNBytes(chunk, 0, want);
      if (got != want) {
        throw new EOFException("filter words end early: " + (remaining - got) + " bytes missing");
      }
      for (int p = 0; p < want; p += 8, index++) {
        long word = 0;
        for (int b = 7; b >= 0; b--) {
          word = (word << 8) | (chunk[p + b] & 0xFF);
        }
        words[index] = word;
      }
      remaining -= want;
    }
  }

  static void write(OutputStream out, int[] words, int from, int count) throws IOException {
    byte[] chunk = new byte[CHUNK];
    int filled = 0;
    for (int i = from, end = from + count; i < end; i++) {
      int word = words[i];
      for (int b = 0; b < 4; b++) {
        chunk[filled++] = (byte) (word >>> (8 * b));
      }
      if (filled == CHUNK) {
        out.write(chunk, 0, filled);
        filled = 0;
      }
    }
    out.write(chunk, 0, filled);
  }

  static void read(InputStream in, int[] words, int from, int count) throws IOException {
    byte[] chunk = new byte[CHUNK];
    int index = from;
    long remaining = (long) count * 4;
    while (remaining > 0) {
      int want = (int) Math.min(CHUNK, remaining);
      int got = in.readNBytes(chunk, 0, want);
      if (got != want) {
        throw new EOFException("filter words end early: " + (remaining - got) + " bytes missing");
      }
      for (int p = 0; p < want; p += 4, index++) {
        words[index] = (chunk[p] & 0xFF) | (chunk[p + 1] & 0xFF) << 8 | (chunk[p + 2] & 0xFF) << 16 | (chunk[p + 3] & 0xFF) << 24;
      }
      remaining -= want;
    }
  }
}
