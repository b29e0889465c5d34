package io.bloomery.format;

import io.bloomery.filter.BloomFilter;
import io.bloomery.hash.HashProtocol;
import io.bloomery.hash.ProtocolId;
import io.bloomery.hash.Protocols;
import io.bloomery.internal.KindAccess;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Reads and writes Guava's {@code com.google.common.hash.BloomFilter#writeTo} format, so a Guava user
 * can migrate filters to Bloomery and back. A foreign format: the native one is {@link FilterFormat}.
 *
 * <table>
 *   <caption>Guava writeTo layout (big-endian, as written by {@code DataOutputStream}); N words</caption>
 *   <tr><th>offset</th><th>size</th><th>field</th><th>rule</th></tr>
 *   <tr><td>0</td><td>1</td><td>strategy ordinal</td><td>i8; only 1 = {@code MURMUR128_MITZ_64} is
 *       read</td></tr>
 *   <tr><td>1</td><td>1</td><td>hash count k</td><td>u8, 1..255</td></tr>
 *   <tr><td>2</td><td>4</td><td>word count N</td><td>i32, 1..2<sup>31</sup>−1; m = 64N</td></tr>
 *   <tr><td>6</td><td>8N</td><td>bit array</td><td>N big-endian i64 words; word j holds bits 64j..64j+63,
 *       least significant bit first</td></tr>
 * </table>
 *
 * <p>The file has no magic, version, funnel, insertion count or checksum. An imported filter uses the
 * {@code guava-murmur128-mitz64} protocol with an empty seed and m = 64N, and answers exactly as the
 * Guava filter did for items funnelled with {@code Funnels.byteArrayFunnel()} (the item bytes) or
 * {@code Funnels.stringFunnel(UTF_8)} (the UTF-8 bytes, which is how Bloomery encodes {@code
 * CharSequence} items). Filters built with other funnels hash other bytes; they import without error
 * but only answer correctly for items encoded the way the funnel encoded them.
 *
 * <p>Because Guava does not record how many items were inserted, an imported filter's {@link
 * BloomFilter#insertedCount()} is set to the Swamidass–Baldi estimate from its set bits (the formula
 * of Guava's {@code approximateElementCount}), capped at the number of set bits.
 *
 * <p>Strategy 0, {@code MURMUR128_MITZ_32}, is refused: it combines two 32-bit hashes in {@code int}
 * arithmetic, so its indexes never reach 2<sup>31</sup> and are non-uniform in large filters (Guava
 * issue #1119, fixed in Guava 17 by MITZ_64). Bloomery has no protocol reproducing that defect.
 * Thread-safe: all methods are static and stateless.
 */
public final class GuavaBloomFormat {
  /* Reading bounds every allocation by bytes actually received: the declared word count is checked
   * against the remaining length when it is known (byte arrays), and a stream's words are collected in
   * chunks of at most 2^20 words as they arrive, so a header declaring 2^31 - 1 words followed by a
   * few bytes fails with "truncated" after allocating at most one chunk. The chunks are then handed to
   * BloomFilter.restore; a stream import therefore briefly holds the bit array twice. Guava's own
   * readFrom allocates the declared size first; an oss-fuzz readFrom fuzzer (oss-fuzz PR #15484) flags
   * the resulting OOM. */

  /** Guava's {@code BloomFilterStrategies.MURMUR128_MITZ_32} ordinal; refused (see class doc). */
  public static final int MURMUR128_MITZ_32_ORDINAL = 0;

  /** Guava's {@code BloomFilterStrategies.MURMUR128_MITZ_64} ordinal, Guava's default since 17.0. */
  public static final int MURMUR128_MITZ_64_ORDINAL = 1;

  /** Bytes before the bit array. */
  static final int HEADER_LENGTH = 6;

  private static final int CHUNK_WORDS = 1 << 20;

  private GuavaBloomFormat() {}

  /**
   * Reads one Guava filter from {@code in}, consuming exactly its bytes.
   *
   * @throws FilterFormatException if the bytes are not a Guava MURMUR128_MITZ_64 filter
   * @throws IOException if {@code in} fails
   */
  public static BloomFilter read(InputStream in) throws FilterFormatException, IOException {
    Objects.requireNonNull(in, "in");
    return decode(new FormatReader(in, FormatReader.UNKNOWN_LENGTH, Long.MAX_VALUE, ByteOrder.BIG_ENDIAN));
  }

  /**
   * Reads the Guava filter in {@code bytes}, which must hold exactly one (trailing bytes are
   * rejected).
   */
  public static BloomFilter fromBytes(byte[] bytes) throws FilterFormatException {
    Objects.requireNonNull(bytes, "bytes");
    FormatReader reader =
        new FormatReader(new ByteArrayInputStream(bytes), bytes.length, bytes.length, ByteOrder.BIG_ENDIAN);
    try {
      BloomFilter filter = decode(reader);
      reader.requireEnd();
      return filter;
    } catch (FilterFormatException e) {
      throw e;
    } catch (IOException e) {
      throw new UncheckedIOException("unreachable: in-memory stream failed", e);
    }
  }

  /**
   * Writes {@code filter} in Guava's format; Guava's {@code BloomFilter.readFrom(in, funnel)} reads it
   * back with the byte-array or UTF-8 string funnel. The stream is flushed, not closed.
   *
   * @throws IllegalArgumentException unless the filter uses the {@code guava-murmur128-mitz64}
   *     protocol (which also guarantees no seed, m a multiple of 64 and k ≤ 255)
   */
  public static void write(BloomFilter filter, OutputStream out) throws IOException {
    Objects.requireNonNull(filter, "filter");
    Objects.requireNonNull(out, "out");
    requireGuavaProtocol(filter);
    FormatWriter writer = new FormatWriter(out, ByteOrder.BIG_ENDIAN);
    KindAccess.Classic<BloomFilter> access = KindAccess.classic(BloomFilter.class);
    long words = access.wordCount(filter);
    writer.u8(MURMUR128_MITZ_64_ORDINAL);
    writer.u8(filter.hashCount());
    writer.u32(words);
    for (long j = 0; j < words; j++) {
      writer.word(access.word(filter, j));
    }
    writer.flush();
  }

  /** {@link #write} into a new array. */
  public static byte[] toBytes(BloomFilter filter) {
    Objects.requireNonNull(filter, "filter");
    requireGuavaProtocol(filter);
    return FormatWriter.toBytes(
        HEADER_LENGTH + Long.BYTES * KindAccess.classic(BloomFilter.class).wordCount(filter), "Guava filter", out -> write(filter, out));
  }

  private static void requireGuavaProtocol(BloomFilter filter) {
    if (filter.protocolId() != ProtocolId.GUAVA_MURMUR128_MITZ64) {
      throw new IllegalArgumentException(
          "Guava's writeTo format can only carry filters placed by '"
              + ProtocolId.GUAVA_MURMUR128_MITZ64.protocolName() + "' (Guava's MURMUR128_MITZ_64); this filter uses '"
              + filter.protocolId().protocolName() + "'. Build it with Protocols.of(ProtocolId.GUAVA_MURMUR128_MITZ64) or keep "
              + "it in Bloomery's format (FilterFormat)");
    }
  }

  private static BloomFilter decode(FormatReader in) throws IOException {
    try {
      int ordinal = (byte) in.u8("strategy ordinal");
      if (ordinal != MURMUR128_MITZ_64_ORDINAL) {
        throw new FilterFormatException(strategyMessage(ordinal));
      }
      int hashes = in.u8("hash count");
      if (hashes == 0) {
        throw new FilterFormatException("hash count at offset 1: expected 1..255, found 0");
      }
      int words = (int) in.u32("word count");
      if (words <= 0) {
        throw new FilterFormatException(
            "word count at offset 2: expected 1.." + Integer.MAX_VALUE + " (Guava never writes an empty bit array), found "
                + words);
      }
      long bits = Long.SIZE * (long) words;
      HashProtocol protocol = Protocols.of(ProtocolId.GUAVA_MURMUR128_MITZ64);
      try {
        protocol.checkParameters(bits, hashes, new byte[0]);
      } catch (IllegalArgumentException e) {
        throw new FilterFormatException(
            "protocol '" + protocol.name() + "' rejects m = " + bits + ", k = " + hashes + ": " + e.getMessage(), e);
      }
      FormatReader.WordStream payload = in.words(words, "bit array");
      List<long[]> chunks = new ArrayList<>();
      long setBits = 0;
      for (long left = words; left > 0; ) {
        long[] chunk = new long[(int) Math.min(left, CHUNK_WORDS)];
        for (int i = 0; i < chunk.length; i++) {
          chunk[i] = payload.next();
          setBits += Long.bitCount(chunk[i]);
        }
        chunks.add(chunk);
        left -= chunk.length;
      }
      long[] position = {0};
      return KindAccess.classic(BloomFilter.class).restore(
          protocol,
          new byte[0],
          bits,
          hashes,
          estimatedInsertions(bits, hashes, setBits),
          () -> {
            long index = position[0]++;
            return chunks.get((int) (index / CHUNK_WORDS))[(int) (index % CHUNK_WORDS)];
          });
    } catch (RuntimeException e) {
      throw new FilterFormatException("malformed Guava filter: " + e, e);
    }
  }

  /**
   * Guava's {@code approximateElementCount}, {@code round(-(m/k) ln(1 - X/m))}, capped at X: each
   * changing add sets at least one bit, and a saturated filter's estimate is unbounded.
   */
  static long estimatedInsertions(long bits, int hashes, long setBits) {
    if (setBits >= bits) {
      return setBits;
    }
    // Guava's expression order, so the two agree to the last bit.
    double fractionOfBitsSet = (double) setBits / bits;
    double estimate = -Math.log1p(-fractionOfBitsSet) * bits / hashes;
    return Math.min(Math.round(estimate), setBits);
  }

  private static String strategyMessage(int ordinal) {
    String expected = "strategy ordinal at offset 0: expected " + MURMUR128_MITZ_64_ORDINAL + " (MURMUR128_MITZ_64), found "
        + ordinal;
    if (ordinal == MURMUR128_MITZ_32_ORDINAL) {
      return expected + " (MURMUR128_MITZ_32, written by Guava < 17 or by explicit request). It is not imported: it "
          + "combines two 32-bit hashes in int arithmetic, so its indexes never reach 2^31 and are non-uniform in "
          + "large filters (Guava issue #1119); rebuild the filter with Guava >= 17's default strategy";
    }
    if (ordinal < 0) {
      return expected + " (negative ordinals are reserved by Guava for stateful strategies, which have no Bloomery "
          + "equivalent)";
    }
    return expected + " (no such Guava strategy; is this a Guava BloomFilter.writeTo file?)";
  }
}
