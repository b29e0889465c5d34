package io.bloomery.server.resp;

/**
 * Protocol limits, as Redis enforces them ({@code src/networking.c}), with the much tighter limits Redis applies to
 * unauthenticated clients since CVE-2021-32675.
 *
 * @param maxBulkBytes largest bulk string ({@code proto-max-bulk-len}, 512 MB)
 * @param maxInlineBytes longest inline command or header line without CRLF (64 KB)
 * @param maxQueryBufferBytes most heap one command may take, as {@link RespDecoder} counts it: each argument its
 *     length rounded up to 8 plus 40 bytes ({@code client-query-buffer-limit}, 1 GB)
 * @param unauthenticatedMaxArguments most arguments in one command before AUTH (10)
 * @param unauthenticatedMaxBulkBytes largest bulk string before AUTH (16 KB)
 */
public record RespLimits(long maxBulkBytes, int maxInlineBytes, long maxQueryBufferBytes,
    int unauthenticatedMaxArguments, int unauthenticatedMaxBulkBytes) {

  /** Redis's defaults. */
  public static final RespLimits DEFAULT = new RespLimits(512L * 1024 * 1024, 64 * 1024, 1024L * 1024 * 1024,
      10, 16 * 1024);

  public RespLimits {
    if (maxBulkBytes < 1 || maxInlineBytes < 16 || maxQueryBufferBytes < maxInlineBytes
        || unauthenticatedMaxArguments < 2 || unauthenticatedMaxBulkBytes < 16) {
      throw new IllegalArgumentException("protocol limits out of range: " + maxBulkBytes + ", " + maxInlineBytes
          + ", " + maxQueryBufferBytes + ", " + unauthenticatedMaxArguments + ", " + unauthenticatedMaxBulkBytes);
    }
    if (maxBulkBytes > Integer.MAX_VALUE - 16) {
      // A Java byte[] holds at most ~2^31 bytes; 512 MB is far below.
      throw new IllegalArgumentException("proto-max-bulk-len above 2 GB is not supported: " + maxBulkBytes);
    }
  }
}
