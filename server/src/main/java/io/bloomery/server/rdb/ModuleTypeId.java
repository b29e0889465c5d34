package io.bloomery.server.rdb;

/**
 * A Redis module type's 64-bit id as RDB stores it ({@code moduleTypeEncodeId}): the 9-character type name, each
 * character its 6-bit index in {@code A-Z a-z 0-9 - _}, first character highest, then the 10-bit encoding version.
 *
 * @param name the 9-character module type name ({@code MBbloom--}, {@code MBbloomCF}, ...)
 * @param encodingVersion the version of the value's field layout, 0 to 1023
 */
record ModuleTypeId(String name, int encodingVersion) {
  private static final String CHARSET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

  ModuleTypeId {
    if (name.length() != 9 || name.chars().anyMatch(c -> CHARSET.indexOf(c) < 0)) {
      throw new IllegalArgumentException("a module type name is 9 characters of " + CHARSET + ": " + name);
    }
    if (encodingVersion < 0 || encodingVersion > 1023) {
      throw new IllegalArgumentException("encoding version outside [0, 1023]: " + encodingVersion);
    }
  }

  /** The 64-bit id. */
  long encode() {
    long id = 0;
    for (int i = 0; i < 9; i++) {
      id = (id << 6) | CHARSET.indexOf(name.charAt(i));
    }
    return (id << 10) | encodingVersion;
  }

  /** The name and version an id carries (every 64-bit value names one). */
  static ModuleTypeId decode(long id) {
    char[] name = new char[9];
    long rest = id >>> 10;
    for (int i = 8; i >= 0; i--) {
      name[i] = CHARSET.charAt((int) (rest & 63));
      rest >>>= 6;
    }
    return new ModuleTypeId(new String(name), (int) (id & 1023));
  }
}
