package io.bloomery.server;

import io.bloomery.server.command.CommandFamily;
import io.bloomery.server.command.Dispatcher;
import io.bloomery.server.command.admin.AccessControlCommands;
import io.bloomery.server.command.admin.IntrospectionCommands;
import io.bloomery.server.command.admin.ServerCommands;
import io.bloomery.server.command.bloom.BloomCommands;
import io.bloomery.server.command.connection.ConnectionCommands;
import io.bloomery.server.command.cuckoo.CuckooCommands;
import io.bloomery.server.command.extension.ExtensionCommands;
import io.bloomery.server.command.extension.KindCommands;
import io.bloomery.server.command.guard.GuardCommands;
import io.bloomery.server.command.guard.GuardSets;
import io.bloomery.server.command.keys.DumpCommands;
import io.bloomery.server.command.keys.KeyCommands;
import io.bloomery.server.command.keys.MigrateCommand;
import io.bloomery.server.command.sketch.SketchCommands;
import io.bloomery.server.command.tdigest.TDigestCommands;
import io.bloomery.server.state.ServerContext;
import java.util.List;

/** Every command family the server answers, in the order {@code COMMAND} lists them. A new family goes here. */
public final class CommandFamilies {
  private CommandFamilies() {}

  /**
   * The families, RedisBloom's first, then the generic, connection and server commands, then Bloomery's own;
   * GUARD.* acts on {@code guards}.
   */
  public static List<CommandFamily> all(GuardSets guards) {
    return List.of(
        BloomCommands::register,
        CuckooCommands::register,
        SketchCommands::register,
        TDigestCommands::register,
        KeyCommands::register,
        DumpCommands::register,
        MigrateCommand::register,
        ConnectionCommands::register,
        ServerCommands::register,
        AccessControlCommands::register,
        IntrospectionCommands::register,
        ExtensionCommands::register,
        KindCommands::register,
        GuardCommands.over(guards));
  }

  /**
   * A dispatcher over {@code server} answering every family, GUARD.* on {@code guards}, which must be the guarded
   * keys {@code server} holds (so the other commands see the keys GUARD.* makes).
   */
  public static Dispatcher dispatcher(ServerContext server, GuardSets guards) {
    if (server.guards() != guards) {
      throw new IllegalArgumentException("the context holds other guarded keys than the GUARD.* family is given");
    }
    return new Dispatcher(server, all(guards));
  }

  /**
   * A dispatcher over a context whose GUARD.* commands have no declared store: one without guarded keys (journal
   * replay, which never runs GUARD.*, and tests), or one whose guarded keys only name what another server's
   * {@link GuardSets} serves (a cluster shard's log, which declares them for its nodes' guards).
   */
  public static Dispatcher dispatcher(ServerContext server) {
    if (server.guards() instanceof GuardSets) {
      throw new IllegalArgumentException("the context holds guarded keys: give the dispatcher their GuardSets");
    }
    return new Dispatcher(server, all(GuardSets.none()));
  }
}
