/**
 * RedisBloom-compatible filters: {@link io.bloomery.redisbloom.ScalableBloomFilter} ({@code BF.*}) and
 * {@link io.bloomery.redisbloom.CuckooFilter} ({@code CF.*}), bit for bit as RedisBloom builds them, with
 * {@link io.bloomery.format.RedisBloomDump} for byte-compatible {@code SCANDUMP}/{@code LOADCHUNK} and
 * {@link io.bloomery.redisbloom.RedisBloomErrors} for RedisBloom's exact error replies.
 *
 * <pre>{@code
 * ScalableBloomFilter seen = ScalableBloomFilter.create(100_000, 0.01);   // BF.RESERVE seen 0.01 100000
 * seen.add("https://example.com/");                                      // BF.ADD
 * seen.mightContain("https://example.com/");                             // BF.EXISTS -> true
 * List<RedisBloomDump.Chunk> dump = RedisBloomDump.scanDumpAll(seen);     // BF.SCANDUMP 0, 1, ...
 * }</pre>
 */
package io.bloomery.redisbloom;
