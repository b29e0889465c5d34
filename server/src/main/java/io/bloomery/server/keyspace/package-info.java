/**
 * The server's keys. {@link io.bloomery.server.keyspace.Keyspace} holds every key's value (core's filter and sketch
 * objects) and expiry, hands out reads and {@link io.bloomery.server.keyspace.Keyspace.Write}s under per-key locks
 * ({@link io.bloomery.server.keyspace.KeyLocks}), counts bytes against {@code maxmemory}, passes each write's
 * journal records to the persistence layer and serves snapshots their copy-on-write cut. {@link
 * io.bloomery.server.keyspace.Values} says what the server knows of each kind of value. Knows nothing of commands or
 * the network.
 */
package io.bloomery.server.keyspace;
