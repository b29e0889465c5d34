/**
 * GUARD.*: keys whose filter stands in front of a store the operator declared (PostgreSQL or SQLite), built on the
 * guard module. {@link io.bloomery.server.command.guard.GuardCommands} parses the commands and answers through
 * deferred replies; {@link io.bloomery.server.command.guard.GuardSets} owns the server's guarded keys, their stores,
 * persistence and replication slots; {@code GuardedSet} is one key, which batches
 * its store calls with a {@code Batcher}. The delivery ledger (exactly-once
 * answers across clients) belongs to the guard module's {@code DeliveryLedger}; no code here runs inside a store
 * transaction. Every store call runs on the store's own threads, never on a network event loop.
 */
package io.bloomery.server.command.guard;
