package io.bloomery.format;

import io.bloomery.internal.KindAccess;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A filter's payload read in place: {@code count} little-endian 64-bit words held in read-only
 * {@link ByteBuffer} segments (slices of one caller's buffer, or {@code MappedByteBuffer}s of a file),
 * word j in segment {@code j >>> shift} at byte {@code 8 (j & mask)}. A {@code ByteBuffer} is indexed
 * by {@code int}, so a payload past 2 GiB needs several; segments of 2^27 words (1 GiB) are the
 * default, and every segment starts at a word boundary of the payload, so no word straddles two.
 * Core compiles to Java 17, which has no {@code MemorySegment}. Immutable and thread-safe (absolute
 * reads only; the buffers' positions are never used).
 */
final class MappedWords {
  /** Default words per segment: 2^27 words = 1 GiB. */
  static final int DEFAULT_SEGMENT_SHIFT = 27;

  private final ByteBuffer[] segments;
  private final int shift;
  private final long mask;
  private final long count;

  private MappedWords(ByteBuffer[] segments, int shift, long count) {
    this.segments = segments;
    this.shift = shift;
    this.mask = (1L << shift) - 1;
    this.count = count;
  }

  /**
   * Slices {@code count} words starting at byte {@code offset} of {@code region} into segments of
   * {@code 2^shift} words.
   */
  static MappedWords of(Region region, long offset, long count, int shift) throws java.io.IOException {
    long segmentWords = 1L << shift;
    long segmentCount = (count + segmentWords - 1) >>> shift;
    if (segmentCount > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("segment shift " + shift + " is too small for " + count + " words");
    }
    ByteBuffer[] segments = new ByteBuffer[(int) segmentCount];
    for (int s = 0; s < segments.length; s++) {
      long first = (long) s << shift;
      int words = (int) Math.min(segmentWords, count - first);
      segments[s] = region.slice(offset + first * Long.BYTES, words * Long.BYTES).order(ByteOrder.LITTLE_ENDIAN);
    }
    return new MappedWords(segments, shift, count);
  }

  /** Word {@code j}, {@code 0 <= j < count()} (unchecked beyond the buffers' own bounds checks). */
  long word(long j) {
    return segments[(int) (j >>> shift)].getLong((int) (j & mask) << 3);
  }

  long count() {
    return count;
  }

  /** The set bits of words {@code [from, to)}. */
  long bitCount(long from, long to) {
    long bits = 0;
    for (long j = from; j < to; j++) {
      bits += Long.bitCount(word(j));
    }
    return bits;
  }

  /** Feeds every payload byte, in order, to {@code crc}. */
  void checksum(java.util.zip.CRC32C crc) {
    for (ByteBuffer segment : segments) {
      crc.update(segment.duplicate().clear());
    }
  }

  /** Supplies the words in order, for copying the payload onto the heap. */
  KindAccess.WordSource source() {
    long[] next = {0};
    return () -> word(next[0]++);
  }

  /** Where the envelope's bytes live: a caller's buffer or a file. */
  interface Region {
    /** Its size in bytes. */
    long size();

    /** A read-only view of bytes {@code [offset, offset + length)}; its byte order is not specified. */
    ByteBuffer slice(long offset, int length) throws java.io.IOException;
  }
}
