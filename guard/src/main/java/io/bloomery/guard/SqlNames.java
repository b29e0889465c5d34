package io.bloomery.guard;

import java.util.regex.Pattern;

/** Validation of table and column names spliced into SQL (they cannot be bound as parameters). */
final class SqlNames {
  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");

  private SqlNames() {}

  /** Accepts {@code name} or {@code schema.name}, each part a plain SQL identifier. */
  static String qualified(String name, String what) {
    String[] parts = name.split("\\.", -1);
    if (parts.length > 2) {
      throw new IllegalArgumentException(what + " must be NAME or SCHEMA.NAME, got '" + name + "'");
    }
    for (String part : parts) {
      identifier(part, what);
    }
    return name;
  }

  static String identifier(String name, String what) {
    if (!IDENTIFIER.matcher(name).matches()) {
      throw new IllegalArgumentException(
          what + " must match [A-Za-z_][A-Za-z0-9_]* (at most 63 characters), got '" + name + "'");
    }
    return name;
  }
}
