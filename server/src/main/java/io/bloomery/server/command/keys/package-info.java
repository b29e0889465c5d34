/**
 * Redis's generic key commands (DEL, UNLINK, EXISTS, TYPE, RENAME, the EXPIRE and TTL family,
 * PERSIST, KEYS, SCAN, DBSIZE, FLUSHDB, FLUSHALL), in
 * {@link io.bloomery.server.command.keys.KeyCommands}, and DUMP and RESTORE in
 * {@link io.bloomery.server.command.keys.DumpCommands}; they see guarded keys as keys too. May use: dispatch
 * ({@code command}), {@code state}, keyspace, resp, {@code rdb} for DUMP's payloads, and {@code command.guard} for
 * the guarded keys' names.
 */
package io.bloomery.server.command.keys;
