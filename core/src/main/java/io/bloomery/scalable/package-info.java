/**
 * Scalable Bloom filters (Almeida et al., 2007): a chain of Bloom layers that grows by an expansion factor, each new
 * layer at half the error rate, so the chain keeps its false-positive bound however many items arrive.
 * {@link io.bloomery.scalable.ScalableBloomFilter} builds its layers bit for bit as RedisBloom's {@code BF.*} does,
 * so its {@code BF.SCANDUMP} chunks load into RedisBloom and back ({@link io.bloomery.format.RedisBloomDump}).
 *
 * <pre>{@code
 * ScalableBloomFilter seen = ScalableBloomFilter.create(100_000, 0.01);   // BF.RESERVE seen 0.01 100000
 * seen.add("https://example.com/");                                      // BF.ADD
 * seen.mightContain("https://example.com/");                             // BF.EXISTS -> true
 * List<RedisBloomDump.Chunk> dump = RedisBloomDump.scanDumpAll(seen);     // BF.SCANDUMP 0, 1, ...
 * }</pre>
 *
 * <p>Start at {@code ScalableBloomFilter}; {@code BloomLayer} is one layer as RedisBloom sizes it and
 * {@code ScalableDumpCodec} the SCANDUMP/LOADCHUNK bytes. The same chain over cache-blocked layers, faster and not
 * RedisBloom's layout, is {@link io.bloomery.blocked.ScalableBlockedBloomFilter}, which lives beside the blocked
 * filters whose hashing it shares.
 */
package io.bloomery.scalable;
