package io.bloomery.filter;

import io.bloomery.hash.ProtocolId;

/**
 * Every structure Bloomery's format persists: the membership filters ({@link MembershipFilter}) and the
 * frequency sketches (count-min, top-k). {@link #kind()} and {@link #protocolId()} are what the format records.
 *
 * <p>The vocabulary is one across kinds, and these interfaces carry it so that the compiler holds every kind to it:
 * {@link #protocolId()} here, {@link MembershipFilter#insertedCount()} on every membership filter, and
 * {@link BoundedFilter#capacity()} and {@link BoundedFilter#isNearCapacity()} on every filter sized for a number of
 * items.
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

  /**
   * The hash protocol the format records for this structure: how its items become positions. Filters built with
   * the same protocol and seed (and shape) are the ones that merge.
   */
  ProtocolId protocolId();
}
