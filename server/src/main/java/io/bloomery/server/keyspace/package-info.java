/**
 * The server's keys. {@link io.bloomery.server.keyspace.Keyspace} holds every key's value (core's filter and sketch
 * objects) and expiry, hands out reads and {@link io.bloomery.server.keyspace.Keyspace.Write}s under per-key locks
 * ({@link io.bloomery.server.keyspace.KeyLocks}), counts bytes against {@code maxmemory}, passes each write's
 * journal records to the persistence layer and serves snapshots their copy-on-write cut. {@link
 * io.bloomery.server.keyspace.ValueType} is the value-type table: the one place that maps a value's class to its
 * type, and all the server knows of each type (TYPE reply, RedisBloom module type name, memory usage, copy on write,
 * the figures INFO, metrics and the dashboard show, the BF.* family WRONGTYPE checks); a new value type is one more
 * entry there. Knows nothing of commands or
 * the network.
 */
package io.bloomery.server.keyspace;
