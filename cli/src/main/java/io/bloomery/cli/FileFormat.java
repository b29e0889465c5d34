package io.bloomery.cli;

/** The on-disk formats the commands read and write. */
enum FileFormat {
  /** Bloomery's own self-describing format ({@code docs/FORMAT.md}); any filter kind. */
  BLOOMERY,
  /**
   * Guava's {@code BloomFilter.writeTo} format (strategy MURMUR128_MITZ_64): classic filters with the
   * {@code guava-murmur128-mitz64} protocol only. Guava records no inserted count and no seed.
   */
  GUAVA
}
