/**
 * Dispatch: how a command runs, whatever its family. Start at {@link io.bloomery.server.command.Dispatcher} (name
 * lookup in the {@link io.bloomery.server.command.CommandTable}, the checks in Redis's order, MULTI/EXEC, the handler
 * call, error replies, journal replay) and {@link io.bloomery.server.command.CommandSpec} (one command: arity, flags,
 * key positions, handler). A handler gets an {@link io.bloomery.server.command.Invocation}, opens a
 * {@link io.bloomery.server.keyspace.Keyspace.Write} on its keys, changes values and journals a record that replays
 * deterministically. The helpers every family shares are here too: {@code Args} (parsing), {@code Errors} (Redis's
 * error texts), {@code Kinds} (a key's value as the kind a command expects), {@code Memory} (the {@code maxmemory}
 * budget and the heap).
 *
 * <p>The families live in subpackages ({@code command.bloom}, {@code command.cuckoo}, {@code command.sketch},
 * {@code command.keys}, {@code command.connection}, {@code command.admin}, {@code command.extension},
 * {@code command.guard}), each a {@link io.bloomery.server.command.CommandFamily}; the dispatcher is given the list
 * ({@code io.bloomery.server.CommandFamilies}) and names no family. May use: {@code state}, keyspace,
 * persistence's interfaces, resp; never a family, net, http or dashboard.
 */
package io.bloomery.server.command;
