package io.bloomery.sketch;

import io.bloomery.internal.Items;

/** UTF-8 encoding of text items, shared by the sketches (docs/ARCHITECTURE.md, contract 2: no normalisation). */
final class Strings {
  private Strings() {}

  static byte[] utf8(CharSequence item) {
    return Items.utf8(item, "item");
  }
}
