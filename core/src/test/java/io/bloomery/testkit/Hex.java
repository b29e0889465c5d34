package io.bloomery.testkit;

import java.util.HexFormat;

/** Lower-case hexadecimal, for vectors and assertions. */
public final class Hex {
  private static final HexFormat FORMAT = HexFormat.of();

  private Hex() {}

  public static byte[] decode(String hex) {
    return FORMAT.parseHex(hex);
  }

  public static String encode(byte[] bytes) {
    return FORMAT.formatHex(bytes);
  }
}
