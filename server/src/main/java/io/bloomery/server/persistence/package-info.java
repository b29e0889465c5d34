/**
 * Durability for the server: the append-only command journal (fsync policies, group commit, torn-tail
 * trimming), point-in-time snapshots in the core format, rewrite without stopping writes, and recovery
 * (snapshot + replay), and the {@code check-log} repair. The server opens it with
 * {@link Durability#open}; the command layer talks to it only through {@link CommandJournal},
 * {@link CommandReplayer}, {@link SnapshotSource}, {@link SnapshotSink}, {@link KeyLoader} and
 * {@link PersistenceControl}. File formats and guarantees: {@code docs/PERSISTENCE.md}.
 */
package io.bloomery.server.persistence;
