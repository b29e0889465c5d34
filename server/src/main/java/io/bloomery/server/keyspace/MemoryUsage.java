package io.bloomery.server.keyspace;

/*
 * Redis's MEMORY USAGE (object.c, memoryCommand) answers objectComputeSize(value) + sdsZmallocSize(key) +
 * dictEntryMemUsage(). For a module value objectComputeSize is the module's mem_usage callback (ValueType#memoryUsage
 * reproduces RedisBloom's); sdsZmallocSize is the allocator's usable size of the key's sds (header, bytes, NUL), and
 * dictEntryMemUsage is sizeof(dictEntry), 24 bytes. The usable size here is glibc malloc's (Redis built with
 * MALLOC=libc, as the reference server this was checked against): chunks of max(32, n + 8 rounded up to 16) bytes,
 * 8 of them the chunk header. A Redis built with jemalloc answers its own size classes instead (16 bytes less for a
 * key of up to 6 bytes).
 */
/** {@code MEMORY USAGE key}'s figure for a keyspace value, as Redis + RedisBloom computes it. */
public final class MemoryUsage {
  private static final int DICT_ENTRY_BYTES = 24;

  private MemoryUsage() {}

  /** The value's {@link ValueType#memoryUsage} plus what Redis counts for the key's name and its dictionary entry. */
  public static long of(Key key, Object value) {
    return ValueType.of(value).memoryUsage(value) + keyOverhead(key.bytes().length);
  }

  /** The bytes Redis counts for a key name of {@code length} bytes: its sds allocation and a dictionary entry. */
  static long keyOverhead(long length) {
    long header = length < 32 ? 1 : length < 256 ? 3 : length < 65_536 ? 5 : length < (1L << 32) ? 9 : 17;
    return usableSize(header + length + 1) + DICT_ENTRY_BYTES;
  }

  /** glibc's {@code malloc_usable_size(malloc(n))} on a 64-bit machine. */
  static long usableSize(long n) {
    long chunk = Math.max(32, (n + 8 + 15) & ~15L);
    return chunk - 8;
  }
}
