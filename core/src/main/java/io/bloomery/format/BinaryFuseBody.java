package io.bloomery.format;

import io.bloomery.filter.FilterKind;
import io.bloomery.fuse.BinaryFuseFilter;
import io.bloomery.hash.ProtocolId;
import io.bloomery.internal.KindAccess;
import java.io.IOException;
import java.util.Map;

/**
 * The body of a {@link FilterKind#BINARY_FUSE binary fuse} filter inside the {@link FilterFormat}
 * envelope. The envelope's protocol must be {@code xxh3-fuse-v1} and its seed empty (the construction
 * seed lives in the body).
 *
 * <table>
 *   <caption>Binary fuse body; S = (segment count + 2) × segment length slots, w = 1 or 2 bytes</caption>
 *   <tr><th>offset</th><th>size</th><th>field</th><th>rule</th></tr>
 *   <tr><td>0</td><td>1</td><td>fingerprint bits f</td><td>u8, 8 or 16</td></tr>
 *   <tr><td>1</td><td>8</td><td>construction seed</td><td>u64, any</td></tr>
 *   <tr><td>9</td><td>4</td><td>segment length</td><td>u32, a power of two in [4, 2<sup>18</sup>]</td></tr>
 *   <tr><td>13</td><td>4</td><td>segment count</td><td>u32, ≥ 1, S ≤ {@link BinaryFuseFilter#MAX_SLOTS}</td></tr>
 *   <tr><td>17</td><td>8</td><td>key count</td><td>u64, ≤ S</td></tr>
 *   <tr><td>25</td><td>wS</td><td>fingerprints</td><td>slot i's fingerprint, u8 or u16 little-endian</td></tr>
 * </table>
 */
final class BinaryFuseBody {

  static final int FIXED_LENGTH = 1 + Long.BYTES + Integer.BYTES + Integer.BYTES + Long.BYTES;

  private static final int CHUNK = 1 << 16;

  private BinaryFuseBody() {}

  static FilterFormat.BodyWriter writer(BinaryFuseFilter filter) {
    int width = filter.fingerprintBits() / 8;
    long slots = filter.slotCount();
    KindAccess.Fuse<BinaryFuseFilter> access = KindAccess.fuse(BinaryFuseFilter.class);
    return BodyWriters.of(FilterKind.BINARY_FUSE, ProtocolId.XXH3_FUSE_V1, new byte[0], FIXED_LENGTH + width * slots,
        out -> {
          out.u8(filter.fingerprintBits());
          out.u64(filter.constructionSeed());
          out.u32(filter.segmentLength());
          out.u32(filter.segmentCount());
          out.u64(filter.insertedCount());
          for (long i = 0; i < slots; i++) {
            if (width == 1) {
              out.u8(access.fingerprint(filter, i));
            } else {
              out.u16(access.fingerprint(filter, i));
            }
          }
        });
  }

  private record Fields(int bits, long seed, int segmentLength, int segmentCount, long keys, long slots) {}

  private static Fields readFields(Envelope envelope, FormatReader in) throws IOException {
    if (envelope.protocolId != ProtocolId.XXH3_FUSE_V1) {
      throw new FilterFormatException("hash protocol: a binary fuse filter expects '"
          + ProtocolId.XXH3_FUSE_V1.protocolName() + "', found '" + envelope.protocolId.protocolName() + "'");
    }
    if (envelope.seed().length != 0) {
      throw new FilterFormatException("seed: a binary fuse filter expects an empty seed, found "
          + envelope.seed().length + " bytes");
    }
    long offset = in.position();
    int bits = in.u8("fingerprint bits");
    if (bits != 8 && bits != 16) {
      throw new FilterFormatException("fingerprint bits at offset " + offset + ": expected 8 or 16, found " + bits);
    }
    long seed = in.u64("construction seed");
    long segmentLength = in.u32("segment length");
    if (segmentLength < 4 || segmentLength > BinaryFuseFilter.MAX_SEGMENT_LENGTH || Long.bitCount(segmentLength) != 1) {
      throw new FilterFormatException("segment length at offset " + (offset + 9) + ": expected a power of two in [4, "
          + BinaryFuseFilter.MAX_SEGMENT_LENGTH + "], found " + segmentLength);
    }
    long segmentCount = in.u32("segment count");
    long slots = (segmentCount + 2) * segmentLength;
    if (segmentCount < 1 || slots > BinaryFuseFilter.MAX_SLOTS) {
      throw new FilterFormatException("segment count at offset " + (offset + 13) + ": expected 1 <= count and (count + 2) x "
          + segmentLength + " <= " + BinaryFuseFilter.MAX_SLOTS + " slots, found " + segmentCount);
    }
    long keys = in.u64("key count");
    if (keys < 0 || keys > slots) {
      throw new FilterFormatException("key count at offset " + (offset + 17) + ": expected 0 <= keys <= " + slots
          + ", found " + Long.toUnsignedString(keys));
    }
    envelope.requireBodyLength(FIXED_LENGTH + bits / 8 * slots,
        slots + " slots of " + bits + "-bit fingerprints (25 + " + bits / 8 + " x " + slots + " bytes)");
    return new Fields(bits, seed, (int) segmentLength, (int) segmentCount, keys, slots);
  }

  static void describe(Envelope envelope, FormatReader in, Map<String, Long> parameters) throws IOException {
    Fields fields = readFields(envelope, in);
    parameters.put("fingerprint_bits", (long) fields.bits());
    parameters.put("segment_length", (long) fields.segmentLength());
    parameters.put("segment_count", (long) fields.segmentCount());
    parameters.put("slots", fields.slots());
    parameters.put("bits", fields.slots() * fields.bits());
    parameters.put("inserted", fields.keys());
  }

  static BinaryFuseFilter read(Envelope envelope, FormatReader in) throws IOException {
    Fields fields = readFields(envelope, in);
    int slots = (int) fields.slots();
    byte[] eight = null;
    short[] sixteen = null;
    if (fields.bits() == 8) {
      eight = in.bytes(slots, "fingerprints");
    } else {
      in.requireAvailable(2L * slots, "fingerprints");
      sixteen = new short[slots];
      for (int done = 0; done < slots; ) {
        int n = Math.min(CHUNK, slots - done);
        byte[] chunk = in.bytes(2 * n, "fingerprints");
        for (int i = 0; i < n; i++) {
          sixteen[done + i] = (short) ((chunk[2 * i] & 0xFF) | (chunk[2 * i + 1] & 0xFF) << 8);
        }
        done += n;
      }
    }
    try {
      return KindAccess.fuse(BinaryFuseFilter.class).restore(fields.bits(), fields.seed(), fields.segmentLength(), fields.segmentCount(),
          fields.keys(), eight, sixteen);
    } catch (IllegalArgumentException e) {
      throw new FilterFormatException("binary fuse filter rejected by BinaryFuseFilter.restore: " + e.getMessage(), e);
    }
  }
}
