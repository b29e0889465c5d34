package io.bloomery.format;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.ScalableBlockedBloomFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.Summary;
import io.bloomery.internal.KindAccess;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;

/**
 * A byte range of a filter's serialized file, without serializing the whole file: for the classic, blocked and
 * scaling blocked kinds the payload bytes are read straight from the filter's words (a range costs its own size); the header, the body's
 * fixed fields and the CRC-32C trailer go through the writer, which stops once the range is filled (a range that
 * reaches the trailer streams the whole file once to compute it). Other kinds go through the writer throughout.
 */
final class SerializedRange {
  /** The classic and blocked bodies' fixed fields before the words: bits/blocks (8), hashes (4), inserted (8). */
  private static final int BODY_FIXED = Long.BYTES + Integer.BYTES + Long.BYTES;

  private SerializedRange() {}

  static byte[] of(Summary filter, long from, long to) {
    long total = FilterFormat.serializedLength(filter);
    if (from < 0 || to < from || to > total || to - from > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException(
          "range [" + from + ", " + to + ") is not within the " + total + "-byte file or exceeds one array");
    }
    byte[] out = new byte[(int) (to - from)];
    Words words = wordsOf(filter);
    if (words == null) {
      window(filter, from, to, out, to);
      return out;
    }
    long payloadStart = FilterFormat.FIXED_PREFIX_LENGTH + words.seed().length + Long.BYTES + words.bodyFixed();
    long payloadEnd = total - Integer.BYTES;
    if (from < payloadStart || to > payloadEnd) {
      window(filter, from, to, out, to > payloadEnd ? total : Math.min(to, payloadStart));
    }
    long lo = Math.max(from, payloadStart);
    long hi = Math.min(to, payloadEnd);
    for (long at = lo; at < hi; ) {
      long word = words.word().applyAsLong((at - payloadStart) >>> 3);
      for (int b = (int) ((at - payloadStart) & 7); b < 8 && at < hi; b++, at++) {
        out[(int) (at - from)] = (byte) (word >>> (8 * b));
      }
    }
    return out;
  }

  /** A kind whose payload is 64-bit words: its seed, the body's bytes before the words, and word i of the payload. */
  private record Words(byte[] seed, long bodyFixed, java.util.function.LongUnaryOperator word) {}

  /** The words of a classic, blocked or scaling blocked filter, else null. */
  private static Words wordsOf(Summary filter) {
    if (filter instanceof BloomFilter c) {
      KindAccess.Classic<BloomFilter> access = KindAccess.classic(BloomFilter.class);
      long last = access.wordCount(c) - 1;
      long tail = c.bitSize() & 63;
      return new Words(c.seed(), BODY_FIXED, index -> {
        long word = access.word(c, index);
        return index == last && tail != 0 ? word & ((1L << tail) - 1) : word;
      });
    }
    if (filter instanceof BlockedBloomFilter b) {
      return new Words(b.seed(), BODY_FIXED, index -> KindAccess.blocked(BlockedBloomFilter.class).word(b, index));
    }
    if (filter instanceof ScalableBlockedBloomFilter chain) {
      // the layers as of this call; a layer appended between two ranges changes the header, and the CRC refuses
      BlockedBloomFilter[] layers = KindAccess.scalableBlocked(ScalableBlockedBloomFilter.class, BlockedBloomFilter.class).layers(chain).layers();
      long[] starts = new long[layers.length];
      for (int i = 1; i < layers.length; i++) {
        starts[i] = starts[i - 1] + layers[i - 1].blockCount() * 8;
      }
      long bodyFixed = ScalableBlockedBloomBody.FIXED_LENGTH + (long) ScalableBlockedBloomBody.LAYER_HEADER * layers.length;
      return new Words(chain.seed(), bodyFixed, index -> {
        int found = java.util.Arrays.binarySearch(starts, index);
        int layer = found >= 0 ? found : -found - 2;
        return KindAccess.blocked(BlockedBloomFilter.class).word(layers[layer], index - starts[layer]);
      });
    }
    return null;
  }

  /** Copies the bytes [from, to) of the serialized filter into {@code out}, stopping the writer at {@code stopAt}. */
  private static void window(Summary filter, long from, long to, byte[] out, long stopAt) {
    OutputStream window = new OutputStream() {
      long at;

      @Override
      public void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
      }

      @Override
      public void write(byte[] b, int off, int len) throws IOException {
        long lo = Math.max(at, from);
        long hi = Math.min(at + len, to);
        if (lo < hi) {
          System.arraycopy(b, off + (int) (lo - at), out, (int) (lo - from), (int) (hi - lo));
        }
        at += len;
        if (at >= stopAt) {
          throw WindowFull.INSTANCE; // the rest of the file is not needed
        }
      }
    };
    try {
      FilterFormat.write(filter, window);
    } catch (WindowFull e) {
      return;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Stops the serialization once the window is filled. */
  private static final class WindowFull extends IOException {
    static final WindowFull INSTANCE = new WindowFull();

    private WindowFull() {
      super("window filled", null);
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
  }
}
