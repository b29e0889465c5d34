/**
 * Cache-blocked Bloom filters, the fast kinds: {@link io.bloomery.blocked.BlockedBloomFilter} (one
 * 512-bit cache line per key, the default for large filters) and
 * {@link io.bloomery.blocked.SplitBlockBloomFilter} (Apache Parquet's split-block filter, bit for bit).
 * Both add lock-free, never block readers, and offer batch {@code addAll}/{@code mightContainAll} that
 * hash 32 keys before probing so cache misses overlap. {@link io.bloomery.blocked.BlockedBloomMath}
 * holds their false-positive models and sizing; {@link io.bloomery.plan.FilterPlanner} picks a kind
 * for (n, p, memory budget) and says why.
 */
package io.bloomery.blocked;
