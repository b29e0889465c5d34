package io.bloomery.server.rdb;

/*
 * LZF as Redis uses it for RDB strings (liblzf 3.6 as vendored in Redis, src/lzf_c.c and lzf_d.c, built with
 * HLOG 16, VERY_FAST 1, ULTRA_FAST 0). Redis writes a string compressed only when the compressor fits it in
 * length - 4 bytes, so the compressor here makes the same choices to the byte: the same 16-bit hash of the next
 * three bytes, the same 8 KiB window, the same greedy match extension (including liblzf's unrolled first 16
 * comparisons, which can extend a match up to two bytes past the limit the later loop uses), the same re-hashing of
 * only the last two positions of a match, and the same output-space checks. Its hash table starts empty; Redis's is
 * uninitialised stack memory, whose stale offsets can only add a match in the rare case one points at equal bytes
 * earlier in the input, so a Redis payload and ours agree except for such a case.
 *
 * Compressed format: 000LLLLL then L+1 literal bytes; LLLooooo oooooooo a back reference of L+2 bytes at distance
 * o+1; 111ooooo LLLLLLLL oooooooo one of L+9 bytes.
 */
/** Redis's LZF string compression, byte-identical compression and checked decompression. */
final class Lzf {
  private static final int HASH_SIZE = 1 << 16;
  private static final int MAX_LITERAL = 1 << 5;
  private static final int MAX_OFFSET = 1 << 13;
  private static final int MAX_REFERENCE = (1 << 8) + (1 << 3);

  private Lzf() {}

  /**
   * {@code lzf_compress(in, in.length, out, outLimit)}: the length of the compressed bytes written to {@code out}, or
   * 0 (as liblzf) where they would not fit in {@code outLimit} bytes, or the input is empty. The caller passes an
   * {@code out} of at least {@code outLimit + 3} bytes (liblzf's checks let a literal run's end pass the limit by up to
   * three) and reads the answered length of it: the result is not copied out.
   */
  static int compress(byte[] in, byte[] out, int outLimit) {
    if (out.length < (long) outLimit + 3) {
      throw new IllegalArgumentException("an output of " + out.length + " bytes for a limit of " + outLimit);
    }
    int inEnd = in.length;
    if (inEnd == 0 || outLimit <= 0) {
      return 0;
    }
    int[] table = new int[HASH_SIZE];
    int ip = 0;
    int op = 0;
    int literals = 0;
    op++; // start a literal run
    int hash = ((in[0] & 0xFF) << 8) | (inEnd > 1 ? in[1] & 0xFF : 0);
    while (ip < inEnd - 2) {
      hash = (hash << 8) | (in[ip + 2] & 0xFF);
      int slot = ((hash >>> 8) - hash * 5) & (HASH_SIZE - 1);
      int ref = table[slot];
      table[slot] = ip;
      if (ref > 0 && ip - ref - 1 < MAX_OFFSET
          && in[ref + 2] == in[ip + 2] && in[ref] == in[ip] && in[ref + 1] == in[ip + 1]) {
        int offset = ip - ref - 1;
        int len = 2;
        int maxLen = Math.min(inEnd - ip - len, MAX_REFERENCE);
        if (op + 3 + 1 >= outLimit && op - (literals == 0 ? 1 : 0) + 3 + 1 >= outLimit) {
          return 0;
        }
        out[op - literals - 1] = (byte) (literals - 1); // stop run
        if (literals == 0) {
          op--; // undo an empty run
        }
        boolean mismatch = false;
        if (maxLen > 16) {
          for (int i = 0; i < 16; i++) {
            len++;
            if (in[ref + len] != in[ip + len]) {
              mismatch = true;
              break;
            }
          }
        }
        if (!mismatch) {
          do {
            len++;
          } while (len < maxLen && in[ref + len] == in[ip + len]);
        }
        len -= 2; // octets - 1
        ip++;
        if (len < 7) {
          out[op++] = (byte) ((offset >>> 8) + (len << 5));
        } else {
          out[op++] = (byte) ((offset >>> 8) + (7 << 5));
          out[op++] = (byte) (len - 7);
        }
        out[op++] = (byte) offset;
        literals = 0;
        op++; // start a literal run
        ip += len + 1;
        if (ip >= inEnd - 2) {
          break;
        }
        ip -= 2;
        hash = ((in[ip] & 0xFF) << 8) | (in[ip + 1] & 0xFF);
        hash = (hash << 8) | (in[ip + 2] & 0xFF);
        table[((hash >>> 8) - hash * 5) & (HASH_SIZE - 1)] = ip;
        ip++;
        hash = (hash << 8) | (in[ip + 2] & 0xFF);
        table[((hash >>> 8) - hash * 5) & (HASH_SIZE - 1)] = ip;
        ip++;
      } else {
        if (op >= outLimit) {
          return 0;
        }
        literals++;
        out[op++] = in[ip++];
        if (literals == MAX_LITERAL) {
          out[op - literals - 1] = (byte) (literals - 1);
          literals = 0;
          op++;
        }
      }
    }
    if (op + 3 > outLimit) {
      return 0;
    }
    while (ip < inEnd) {
      literals++;
      out[op++] = in[ip++];
      if (literals == MAX_LITERAL) {
        out[op - literals - 1] = (byte) (literals - 1);
        literals = 0;
        op++;
      }
    }
    out[op - literals - 1] = (byte) (literals - 1);
    if (literals == 0) {
      op--;
    }
    return op;
  }

  /**
   * Decompresses {@code in} into exactly {@code length} bytes.
   *
   * @throws RdbFormatException if the input is malformed (a reference before the start, a run past either end) or
   *     does not decompress to exactly {@code length} bytes
   */
  static byte[] decompress(byte[] in, int length) throws RdbFormatException {
    byte[] out = new byte[length];
    int ip = 0;
    int op = 0;
    while (ip < in.length) {
      int ctrl = in[ip++] & 0xFF;
      if (ctrl < MAX_LITERAL) {
        int run = ctrl + 1;
        if (op + run > length || ip + run > in.length) {
          throw new RdbFormatException("LZF literal run of " + run + " bytes passes the end");
        }
        System.arraycopy(in, ip, out, op, run);
        ip += run;
        op += run;
      } else {
        int len = ctrl >>> 5;
        if (len == 7) {
          if (ip >= in.length) {
            throw new RdbFormatException("LZF back reference truncated");
          }
          len += in[ip++] & 0xFF;
        }
        if (ip >= in.length) {
          throw new RdbFormatException("LZF back reference truncated");
        }
        int ref = op - ((ctrl & 0x1F) << 8) - 1 - (in[ip++] & 0xFF);
        len += 2;
        if (ref < 0 || op + len > length) {
          throw new RdbFormatException("LZF back reference outside the output");
        }
        for (int i = 0; i < len; i++) {
          out[op++] = out[ref++];
        }
      }
    }
    if (op != length) {
      throw new RdbFormatException("LZF data decompresses to " + op + " bytes, declared " + length);
    }
    return out;
  }
}
