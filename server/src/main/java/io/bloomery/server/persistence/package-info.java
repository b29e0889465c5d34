/**
 * Durability for the server: the append-only command journal (fsync policies, group commit, torn-tail
 * trimming), point-in-time snapshots in the core format, rewrite without stopping writes, and recovery
 * (snapshot + replay). The command layer talks to it only through {@link CommandJournal},
 * {@link CommandReplayer}, {@link SnapshotSource} and {@link SnapshotSink}.
 */
package io.bloomery.server.persistence;
