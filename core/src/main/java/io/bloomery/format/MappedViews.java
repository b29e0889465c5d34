package io.bloomery.format;

import java.io.IOException;
import java.util.Objects;

/** What both {@link MappedFilter} kinds share: the image, its checks, the recorded count, the cached bit count. */
abstract class MappedViews {
  final MappedImage image;
  final MappedWords words;
  final long inserted;
  /** The set bits, counted on first use (-1 until then); the words never change. */
  private volatile long setBits = -1;

  MappedViews(MappedImage image) {
    this.image = image;
    this.words = image.payload;
    this.inserted = image.parameters.get("inserted");
  }

  final int parameter(String name) {
    return Math.toIntExact(image.parameters.get(name));
  }

  public final long insertedCount() {
    return inserted;
  }

  public final long bitCount() {
    long count = setBits;
    if (count < 0) {
      count = words.bitCount(0, words.count());
      setBits = count;
    }
    return count;
  }

  public final void verify() throws IOException {
    image.verify();
  }

  public final boolean isChecksumVerified() {
    return image.isChecksumVerified();
  }

  public final long serializedLength() {
    return image.size();
  }

  static void checkBatch(byte[][] items, boolean[] out) {
    Objects.requireNonNull(items, "items");
    Objects.requireNonNull(out, "out");
    if (out.length < items.length) {
      throw new IllegalArgumentException("out has " + out.length + " elements, needs " + items.length);
    }
  }
}
