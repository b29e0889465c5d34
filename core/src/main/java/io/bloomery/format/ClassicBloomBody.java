package io.bloomery.format;

import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.hash.HashProtocol;
import io.bloomery.hash.ProtocolId;
import io.bloomery.internal.KindAccess;
import java.io.IOException;
import java.util.Map;

/**
 * The body of a {@link FilterKind#CLASSIC_BLOOM classic} Bloom filter inside the {@link FilterFormat}
 * envelope.
 *
 * <table>
 *   <caption>Classic body; W = ceil(m / 64)</caption>
 *   <tr><th>offset</th><th>size</th><th>field</th><th>rule</th></tr>
 *   <tr><td>0</td><td>8</td><td>bits m</td><td>u64, 1 ≤ m ≤ 2<sup>40</sup></td></tr>
 *   <tr><td>8</td><td>4</td><td>hashes k</td><td>u32, 1 ≤ k ≤ 65536 and within the protocol's limit</td></tr>
 *   <tr><td>12</td><td>8</td><td>inserted count</td><td>u64, ≤ 2<sup>62</sup></td></tr>
 *   <tr><td>20</td><td>8W</td><td>payload</td><td>W little-endian u64 words, word j = bits 64j..64j+63;
 *       bits ≥ m are zero</td></tr>
 * </table>
 */
final class ClassicBloomBody {
  /* The payload is the filter's own word array, streamed: the reader hands words one at a time to
   * BloomFilter.restore, so a large filter is never held twice. Words are little-endian, which makes
   * the payload bytes exactly the "little-endian packed bits" of docs/PROTOCOLS.md (bit 0 = LSB of byte 0),
   * so the sha256-doc-v1 fixture's payload starts with its published packed bits "d291".
 *
 * One writer, one rule: a filter's own words and words streamed from elsewhere (FilterFormat.writeClassic)
 * go through the same writer, which checks every parameter before the first byte and refuses - never masks -
 * a last word with bits at or beyond m (a filter never holds such bits, so for it the check cannot fire;
 * streamed words that have them belong to another m). The reader refuses them too. */

  /** Bytes of the fixed fields before the payload. */
  static final int FIXED_LENGTH = Long.BYTES + Integer.BYTES + Long.BYTES;

  /** Largest m the format accepts: 2^40 bits (128 GiB of payload). */
  static final long MAX_BITS = 1L << 40;

  /**
   * Largest k the format accepts: the widest any shipped protocol allows (sha256-index16, whose u16
   * index reaches 65536 probes); each protocol's own check narrows it (65535 for xxh3-edh-v1, 255 for
   * sha256-doc-v1 and Guava).
   */
  static final int MAX_HASHES = 1 << 16;

  /**
   * Largest inserted count the format accepts. Counts add up under merges of many shards, so the
   * bound is generous, but a value this large can only come from corruption.
   */
  static final long MAX_INSERTED = 1L << 62;

  private ClassicBloomBody() {}

  /**
   * A writer for {@code filter}'s body recording {@code insertedCount}: the same checks and bytes as the streamed
   * writer below, fed from the filter's words.
   */
  static FilterFormat.BodyWriter writer(BloomFilter filter, long insertedCount) {
    KindAccess.Classic<BloomFilter> access = KindAccess.classic(BloomFilter.class);
    long[] next = {0};
    return streamingWriter(filter.hashProtocol(), filter.seed(), filter.bitSize(), filter.hashCount(), insertedCount,
        () -> access.word(filter, next[0]++));
  }

  /**
   * A writer for a classic body whose words come from {@code words} (see {@link
   * FilterFormat#writeClassic}); every parameter is checked here, before the first byte is written.
   */
  static FilterFormat.BodyWriter streamingWriter(
      HashProtocol protocol, byte[] seed, long bits, int hashes, long insertedCount, FilterFormat.WordSource words) {
    java.util.Objects.requireNonNull(protocol, "protocol");
    java.util.Objects.requireNonNull(seed, "seed");
    java.util.Objects.requireNonNull(words, "words");
    if (bits < 1 || bits > MAX_BITS) {
      throw new IllegalArgumentException("bit count m must be in [1, 2^40], was " + bits);
    }
    if (hashes < 1 || hashes > MAX_HASHES) {
      throw new IllegalArgumentException("hash count k must be in [1, " + MAX_HASHES + "], was " + hashes);
    }
    if (insertedCount < 0 || insertedCount > MAX_INSERTED) {
      throw new IllegalArgumentException("inserted count must be in [0, 2^62], was " + insertedCount);
    }
    protocol.checkParameters(bits, hashes, seed);
    byte[] seedCopy = seed.clone();
    long wordCount = wordCount(bits);
    return BodyWriters.of(FilterKind.CLASSIC_BLOOM, protocol.id(), seedCopy, FIXED_LENGTH + Long.BYTES * wordCount, out -> {
      out.u64(bits);
      out.u32(hashes);
      out.u64(insertedCount);
      long padding = ~lastWordMask(bits);
      for (long j = 0; j < wordCount; j++) {
        long word = words.nextWord();
        if (j == wordCount - 1 && (word & padding) != 0) {
          throw new IllegalArgumentException("word " + j + " has bits set at or beyond m = " + bits
              + "; the words do not belong to an m-bit filter");
        }
        out.word(word);
      }
    });
  }

  /** The validated fixed fields of a classic body. */
  private record Fields(long bits, int hashes, long inserted) {
    long words() {
      return wordCount(bits);
    }
  }

  private static Fields readFields(Envelope envelope, FormatReader in) throws IOException {
    Fields fields = new Fields(
        in.u64("bits (m)", 1, MAX_BITS, "1 <= m <= 2^40"),
        (int) in.u32("hashes (k)", 1, MAX_HASHES, "1 <= k <= " + MAX_HASHES),
        in.u64("inserted count", 0, MAX_INSERTED, "0 <= n <= 2^62"));
    envelope.requireBodyLength(
        FIXED_LENGTH + Long.BYTES * fields.words(), "m = " + fields.bits() + " (20 + 8 x " + fields.words() + " words)");
    return fields;
  }

  static void describe(Envelope envelope, FormatReader in, Map<String, Long> parameters) throws IOException {
    Fields fields = readFields(envelope, in);
    envelope.checkedProtocol(fields.bits(), fields.hashes());
    parameters.put("bits", fields.bits());
    parameters.put("hashes", (long) fields.hashes());
    parameters.put("inserted", fields.inserted());
  }

  static BloomFilter read(Envelope envelope, FormatReader in) throws IOException {
    Fields fields = readFields(envelope, in);
    HashProtocol protocol = envelope.checkedProtocol(fields.bits(), fields.hashes());
    FormatReader.WordStream payload = in.words(fields.words(), "payload");
    long padding = ~lastWordMask(fields.bits());
    long payloadOffset = in.position();
    try {
      return KindAccess.classic(BloomFilter.class).restore(
          protocol,
          envelope.seed(),
          fields.bits(),
          fields.hashes(),
          fields.inserted(),
          () -> {
            long word = payload.next();
            if (payload.wordsLeft() == 0 && (word & padding) != 0) {
              throw new FilterFormatException(
                  "payload: expected bits >= m = " + fields.bits() + " to be 0 in the last word (at offset "
                      + (payloadOffset + Long.BYTES * (fields.words() - 1)) + "), found "
                      + Long.bitCount(word & padding) + " set");
            }
            return word;
          });
    } catch (IllegalArgumentException e) {
      throw new FilterFormatException("classic filter rejected: " + e.getMessage(), e);
    }
  }

  static long wordCount(long bits) {
    return (bits + 63) >>> 6;
  }

  /** Mask of the valid bits of the last payload word for a filter of {@code bits} bits. */
  static long lastWordMask(long bits) {
    int used = (int) (bits & 63);
    return used == 0 ? -1L : (1L << used) - 1;
  }
}
