/**
 * Redis's server commands (COMMAND, CONFIG, INFO, SAVE/BGSAVE/LASTSAVE/BGREWRITEAOF, SHUTDOWN, DEBUG, TIME, MEMORY,
 * WAIT), in {@link io.bloomery.server.command.admin.ServerCommands}: settings, statistics and persistence control.
 * May use: dispatch ({@code command}), {@code state}, keyspace, persistence's {@code PersistenceControl}, resp,
 * {@code command.connection} (the version it reports) and {@code command.guard} (guarded keys in INFO and MEMORY).
 */
package io.bloomery.server.command.admin;
