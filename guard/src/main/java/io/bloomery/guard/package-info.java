/**
 * The guard: a filter in front of the authoritative store. Start at {@link io.bloomery.guard.Guard};
 * stores implement {@link io.bloomery.guard.ExactStore} ({@link io.bloomery.guard.PostgresStore} for
 * production, {@link io.bloomery.guard.SqliteStore} embedded).
 */
package io.bloomery.guard;
