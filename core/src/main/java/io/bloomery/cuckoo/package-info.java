/**
 * Cuckoo filters: {@link io.bloomery.cuckoo.CuckooFilter}, a membership filter that can delete, built bit for bit
 * as RedisBloom's {@code CF.*} builds it (bucket size, kick-out iterations, sub-filters that grow by an expansion
 * factor), so its {@code CF.SCANDUMP} chunks load into RedisBloom and back
 * ({@link io.bloomery.format.RedisBloomDump}).
 *
 * <pre>{@code
 * CuckooFilter sessions = CuckooFilter.create(100_000);          // CF.RESERVE sessions 100000
 * byte[] token = "token-1".getBytes(StandardCharsets.UTF_8);
 * sessions.add(token);                                           // CF.ADD
 * sessions.remove(token);                                        // CF.DEL
 * }</pre>
 *
 * <p>Start at {@code CuckooFilter}; {@code CuckooTable} holds one sub-filter's slots and {@code CuckooDumpCodec} its
 * SCANDUMP/LOADCHUNK bytes. Parameter errors are {@link IllegalArgumentException}s, a full filter a
 * {@link io.bloomery.filter.FilterFullException}.
 */
package io.bloomery.cuckoo;
