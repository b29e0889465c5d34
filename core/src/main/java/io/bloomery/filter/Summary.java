package io.bloomery.filter;

/**
 * Every structure Bloomery's format persists: the membership filters ({@link MembershipFilter}) and the
 * frequency sketches (count-min, top-k). {@link #kind()} is the frozen kind recorded in the format.
 *
 * <p>{@code io.bloomery.format.FilterFormat} writes a {@code Summary} and reads one back, optionally as the class
 * the caller expects ({@code FilterFormat.read(in, BloomFilter.class)}). The interface is not {@code sealed}
 * because its implementations live in several packages, which Java allows for sealed types only inside a named
 * module, and core is also used from the class path (Spark); the format refuses, with {@link
 * IllegalArgumentException}, to write an implementation it does not know.
 */
public interface Summary {

  /** The kind recorded in the binary format. */
  FilterKind kind();
}
