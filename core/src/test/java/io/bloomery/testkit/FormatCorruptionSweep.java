package io.bloomery.testkit;

import io.bloomery.format.FilterFormat;
import io.bloomery.format.FilterFormatException;
import java.io.ByteArrayInputStream;
import java.util.Arrays;

/**
 * The corruption sweep every serialized kind must survive, for reuse by each kind's tests: given a
 * small valid {@link FilterFormat} file, every single-byte change (all 255 XOR patterns), every
 * truncation and every one-byte extension must be rejected with {@link FilterFormatException} and
 * nothing else.
 *
 * <p>Why this is achievable for any body: the envelope's CRC-32C detects every burst error of up to
 * 32 bits, so a changed byte that passes field validation still fails the checksum; a body therefore
 * only has to make sure that no field value can make it throw anything else, allocate beyond the
 * input, or read past its declared length before the checksum is reached.
 */
public final class FormatCorruptionSweep {
  private FormatCorruptionSweep() {}

  /** Runs every check below; returns the number of corrupted inputs that were rejected. */
  public static int assertEveryCorruptionRejected(byte[] valid) {
    return assertEverySingleByteChangeRejected(valid) + assertEveryTruncationRejected(valid) + assertEveryExtensionRejected(valid);
  }

  /**
   * Every byte XOR every pattern 0x01..0xFF through {@link FilterFormat#fromBytes}; single-bit
   * patterns and 0xFF also through the stream path with a 1 MiB read limit.
   */
  public static int assertEverySingleByteChangeRejected(byte[] valid) {
    requireValid(valid);
    int rejected = 0;
    for (int position = 0; position < valid.length; position++) {
      for (int pattern = 1; pattern <= 0xFF; pattern++) {
        byte[] corrupt = valid.clone();
        corrupt[position] ^= (byte) pattern;
        String what = "byte " + position + " XOR " + pattern;
        assertRejected(corrupt, what, false);
        if (Integer.bitCount(pattern) == 1 || pattern == 0xFF) {
          assertRejected(corrupt, what, true);
        }
        rejected++;
      }
    }
    return rejected;
  }

  /** Every prefix of length 0 .. len-1, through the byte-array and the stream path. */
  public static int assertEveryTruncationRejected(byte[] valid) {
    requireValid(valid);
    for (int length = 0; length < valid.length; length++) {
      byte[] truncated = Arrays.copyOf(valid, length);
      assertRejected(truncated, "truncated to " + length, false);
      assertRejected(truncated, "truncated to " + length, true);
    }
    return valid.length;
  }

  /** One trailing byte of every value (byte arrays must end at the checksum; streams may continue). */
  public static int assertEveryExtensionRejected(byte[] valid) {
    requireValid(valid);
    for (int value = 0; value <= 0xFF; value++) {
      byte[] longer = Arrays.copyOf(valid, valid.length + 1);
      longer[valid.length] = (byte) value;
      assertRejected(longer, "trailing byte " + value, false);
    }
    return 256;
  }

  private static void requireValid(byte[] valid) {
    try {
      FilterFormat.fromBytes(valid);
    } catch (FilterFormatException e) {
      throw new AssertionError("the sweep needs a valid file to start from: " + e.getMessage(), e);
    }
  }

  private static void assertRejected(byte[] bytes, String what, boolean stream) {
    String path = stream ? "read(InputStream)" : "fromBytes";
    Object accepted;
    try {
      accepted = stream ? FilterFormat.read(new ByteArrayInputStream(bytes), 1 << 20) : FilterFormat.fromBytes(bytes);
    } catch (FilterFormatException expected) {
      if (expected.getMessage() == null || expected.getMessage().isBlank()) {
        throw new AssertionError(path + ", " + what + ": rejected without a message", expected);
      }
      return;
    } catch (Throwable other) {
      throw new AssertionError(path + ", " + what + ": expected FilterFormatException, found " + other, other);
    }
    throw new AssertionError(path + ", " + what + ": accepted as " + accepted);
  }
}
