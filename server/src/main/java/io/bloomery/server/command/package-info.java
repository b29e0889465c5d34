/**
 * Commands: what the server answers and how a command runs. Start at {@link io.bloomery.server.command.CommandTable}
 * (every command with its arity, flags and key positions) and {@link io.bloomery.server.command.Dispatcher} (name
 * lookup, the checks in Redis's order, transactions, the handler call, error replies, journal replay); a handler
 * gets an {@link io.bloomery.server.command.Invocation}, opens a {@link io.bloomery.server.keyspace.Keyspace.Write}
 * on its keys, changes values and journals a record that replays deterministically.
 *
 * <p>The families: {@code BloomCommands} (BF.*), {@code CuckooCommands} (CF.*), {@code SketchCommands} (CMS.*,
 * TOPK.*), {@code KindCommands} and {@code ExtensionCommands} (Bloomery's own kinds and commands), {@code
 * KeyCommands} (generic keys), {@code ServerCommands} (INFO, CONFIG, persistence control, ...), {@code
 * ConnectionCommands} (AUTH, HELLO, CLIENT, ...), and {@code guard} (GUARD.*). Server state shared by commands:
 * {@code ServerContext}, {@code Settings}, the statistics ({@code CommandStats}, {@code ServerStats}). A new command
 * goes into its family's class and one {@code CommandTable} entry; docs/ARCHITECTURE.md ("Inside the server") walks
 * through it. May use: keyspace, persistence's interfaces, resp; never net, http or dashboard.
 */
package io.bloomery.server.command;
