/**
 * The server's state that commands, connections and the HTTP port share. Start at
 * {@link io.bloomery.server.state.ServerContext} (keyspace, settings, statistics, clients, persistence control,
 * guarded keys, file loads; built complete by its {@code Builder}); {@link io.bloomery.server.state.Settings} (what
 * CONFIG GET/SET see, with CONFIG SET's checks); {@link io.bloomery.server.state.ClientState} (one connection: auth,
 * transaction, lease, CLIENT LIST fields); {@link io.bloomery.server.state.GuardedKeys} (what the server must know of
 * the keys GUARD.* holds outside the keyspace, implemented by that family); the statistics INFO and {@code /metrics} report ({@code ServerStats}, {@code CommandStats},
 * counted per thread through {@code LocalCounter} and {@code ThreadShards}); {@code RateLimitedLog}. Holds no command
 * logic. May use: keyspace, persistence (and {@code persistence.load}), resp; never dispatch, net, http or dashboard.
 */
package io.bloomery.server.state;
