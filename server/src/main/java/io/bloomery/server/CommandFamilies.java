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
import io.bloomery.server.command.keys.DumpCommands;
import io.bloomery.server.command.keys.KeyCommands;
import io.bloomery.server.command.sketch.SketchCommands;
import io.bloomery.server.state.ServerContext;
import java.util.List;

/** Every command family the server answers, in the order {@code COMMAND} lists them. A new family goes here. */
public final class CommandFamilies {
  /** The families, RedisBloom's first, then the generic, connection and server commands, then Bloomery's own. */
  public static final List<CommandFamily> ALL = List.of(
      BloomCommands::register,
      CuckooCommands::register,
      SketchCommands::register,
      KeyCommands::register,
      DumpCommands::register,
      ConnectionCommands::register,
      ServerCommands::register,
      AccessControlCommands::register,
      IntrospectionCommands::register,
      ExtensionCommands::register,
      KindCommands::register,
      GuardCommands::register);

  private CommandFamilies() {}

  /** A dispatcher over {@code server} answering every family. */
  public static Dispatcher dispatcher(ServerContext server) {
    return new Dispatcher(server, ALL);
  }
}
