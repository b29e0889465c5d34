package io.bloomery.server.command.connection;

import static io.bloomery.server.command.CommandSpec.Flag.FAST;
import static io.bloomery.server.command.CommandSpec.Flag.LOADING;
import static io.bloomery.server.command.CommandSpec.Flag.NOAUTH;
import static io.bloomery.server.command.CommandSpec.Flag.NOMULTI;
import static io.bloomery.server.command.CommandSpec.Flag.STALE;
import static io.bloomery.server.command.CommandSpec.flags;

import io.bloomery.server.command.Args;
import io.bloomery.server.command.CommandException;
import io.bloomery.server.command.CommandTable;
import io.bloomery.server.command.Errors;
import io.bloomery.server.command.Invocation;
import io.bloomery.server.resp.Reply;
import io.bloomery.server.state.ClientState;
import io.bloomery.server.state.RateLimitedLog;
import io.bloomery.server.state.acl.Acl;
import io.bloomery.server.state.acl.AclUser;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * PING ECHO HELLO AUTH SELECT QUIT RESET and CLIENT: what every client library sends on connect; and MONITOR, which
 * turns the connection into a stream of every command the server runs ({@code state.Monitors}).
 */
public final class ConnectionCommands {
  private ConnectionCommands() {}

  /** Wrong passwords a connection may give before the replies to further ones are delayed. */
  static final int FREE_AUTH_FAILURES = 3;
  /** The longest delay, as a multiple of {@code auth-fail-delay}. */
  static final int MAX_AUTH_DELAY_FACTOR = 16;

  private static final RateLimitedLog WRONG_PASSWORDS =
      new RateLimitedLog(LoggerFactory.getLogger(ConnectionCommands.class), Level.WARN, "wrong password");

  /** The Redis version this server speaks (clients gate features on it). */
  public static final String REDIS_VERSION = "7.4.0";
  /** The version the built-in RedisBloom module ({@code bf}) reports, as the RedisBloom the server matches does. */
  public static final long BF_MODULE_VERSION = 999_999;

  /** Adds this family's commands to {@code t}. */
  public static void register(CommandTable t) {
    t.add("ping", -1, flags(FAST, STALE), 0, 0, 0, "connection", "Returns the server's liveliness response.",
        inv -> {
          if (inv.argc() > 2) {
            throw new CommandException(Errors.arity("ping"));
          }
          return inv.argc() == 2 ? Reply.bulk(inv.arg(1)) : new Reply.Simple("PONG");
        });
    t.add("echo", 2, flags(FAST), 0, 0, 0, "connection", "Returns the given string.",
        inv -> Reply.bulk(inv.arg(1)));
    t.add("hello", -1, flags(NOAUTH, FAST, LOADING, STALE, NOMULTI), 0, 0, 0, "connection",
        "Handshakes with the server.", ConnectionCommands::hello);
    t.add("auth", -2, flags(NOAUTH, FAST, LOADING, STALE, NOMULTI), 0, 0, 0, "connection",
        "Authenticates the connection.", ConnectionCommands::auth);
    t.add("select", 2, flags(FAST, LOADING, STALE), 0, 0, 0, "connection",
        "Changes the selected database (only database 0 exists).", inv -> {
          Long db = Args.parseLong(inv.arg(1));
          if (db == null) {
            throw new CommandException(Errors.NOT_INTEGER);
          }
          if (db != 0) {
            throw new CommandException(Errors.DB_INDEX);
          }
          return Reply.OK;
        });
    t.add("quit", -1, flags(NOAUTH, FAST, LOADING, STALE), 0, 0, 0, "connection", "Closes the connection.",
        inv -> {
          inv.client().closeAfterReply(true);
          return Reply.OK;
        });
    t.add("reset", 1, flags(NOAUTH, FAST, LOADING, STALE), 0, 0, 0, "connection", "Resets the connection.",
        inv -> {
          AclUser defaultUser = inv.server().acl().defaultUser();
          inv.client().reset(defaultUser, defaultUser.openWithoutPassword());
          inv.server().monitors().remove(inv.client());
          return new Reply.Simple("RESET");
        });
    t.add("monitor", 1, flags(LOADING, STALE), 0, 0, 0, "server",
        "Listens for all requests received by the server in real-time.", ConnectionCommands::monitor);
    t.add("client", -2, flags(LOADING, STALE), 0, 0, 0, "connection",
        "A container for client connection commands.", ConnectionCommands::client);
  }

  private static Reply auth(Invocation inv) {
    if (inv.argc() > 3) {
      throw new CommandException(Errors.SYNTAX);
    }
    Acl acl = inv.server().acl();
    if (inv.argc() == 2 && acl.defaultUser().nopass()) {
      throw new CommandException(Errors.AUTH_NOT_CONFIGURED);
    }
    String user = inv.argc() == 3 ? Args.text(inv.arg(1)) : "default";
    return authenticate(inv, user, inv.arg(inv.argc() - 1)) ? Reply.OK : wrongPassword(inv, user);
  }

  /**
   * Authenticates the connection as {@code user} if it is on and {@code password} is one of its passwords (or it
   * has none); returns whether it did. A failure is left for {@link #wrongPassword} to answer and log.
   */
  private static boolean authenticate(Invocation inv, String user, byte[] password) {
    AclUser u = inv.server().acl().authenticate(user, password);
    if (u == null) {
      return false;
    }
    ClientState c = inv.client();
    c.user(u);
    c.authenticated(true);
    c.authSucceeded();
    return true;
  }

  /**
   * The reply to a wrong password, counted ({@code acl_access_denied_auth}) and logged (rate-limited, without the
   * password). Once a connection has given {@value #FREE_AUTH_FAILURES} wrong passwords, the reply to each further
   * one is deferred by {@link #authFailDelayMillis}, off the event loop, and the connection's later commands wait behind it, so a
   * connection can try only a few passwords a second however it pipelines.
   */
  private static Reply wrongPassword(Invocation inv, String user) {
    ClientState c = inv.client();
    inv.server().acl().log(Acl.Reason.AUTH, c.inTransaction() ? "multi" : "toplevel", Args.text(inv.arg(0)), user,
        c::info);
    int failures = c.authFailed();
    inv.server().stats().authFailures.increment();
    long delay = authFailDelayMillis(inv.settings().authFailDelayMillis(), failures);
    WRONG_PASSWORDS.log("wrong password from client id={} addr={} ({} on this connection{})", c.id(), c.address(),
        failures, delay > 0 ? ", reply delayed " + delay + " ms" : "");
    if (delay == 0 || !inv.mayDefer()) {
      throw new CommandException(Errors.WRONGPASS);
    }
    inv.server().stats().authFailuresDelayed.increment();
    return inv.defer(CompletableFuture.supplyAsync(() -> Reply.error(Errors.WRONGPASS),
        CompletableFuture.delayedExecutor(delay, TimeUnit.MILLISECONDS)));
  }

  /**
   * How long the reply to a connection's {@code failures}th wrong password waits: nothing for the first
   * {@value #FREE_AUTH_FAILURES}, then {@code base}, doubling with each further one up to
   * {@value #MAX_AUTH_DELAY_FACTOR} times {@code base}.
   */
  static long authFailDelayMillis(long base, int failures) {
    if (base <= 0 || failures <= FREE_AUTH_FAILURES) {
      return 0;
    }
    int doublings = Math.min(failures - FREE_AUTH_FAILURES - 1, Integer.numberOfTrailingZeros(MAX_AUTH_DELAY_FACTOR));
    return base << doublings;
  }

  private static Reply hello(Invocation inv) {
    ClientState c = inv.client();
    int protocol = c.protocol();
    int i = 1;
    if (inv.argc() >= 2) {
      Long v = Args.parseLong(inv.arg(1));
      if (v == null) {
        throw new CommandException("ERR Protocol version is not an integer or out of range");
      }
      if (v != 2 && v != 3) {
        throw new CommandException(Errors.PROTO_UNSUPPORTED);
      }
      protocol = v.intValue();
      i = 2;
    }
    String name = null;
    boolean authenticated = c.authenticated();
    for (; i < inv.argc(); i++) {
      if (Args.is(inv.arg(i), "AUTH") && i + 2 < inv.argc()) {
        String user = Args.text(inv.arg(i + 1));
        if (!authenticate(inv, user, inv.arg(i + 2))) {
          return wrongPassword(inv, user);
        }
        authenticated = true;
        i += 2;
      } else if (Args.is(inv.arg(i), "SETNAME") && i + 1 < inv.argc()) {
        name = inv.text(i + 1);
        checkName(name);
        i++;
      } else {
        throw new CommandException("ERR Syntax error in HELLO option '" + inv.text(i) + "'");
      }
    }
    if (!authenticated) {
      throw new CommandException("NOAUTH HELLO must be called with the client already authenticated, otherwise the "
          + "HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP "
          + "protocol version at the same time");
    }
    c.authenticated(true);
    c.authSucceeded();
    c.protocol(protocol);
    if (name != null) {
      c.name(name);
    }
    Map<String, Object> info = new LinkedHashMap<>();
    info.put("server", "redis");
    info.put("version", REDIS_VERSION);
    info.put("proto", (long) protocol);
    info.put("id", c.id());
    info.put("mode", "standalone");
    info.put("role", "master");
    Map<String, Object> module = new LinkedHashMap<>();
    module.put("name", "bf");
    module.put("ver", BF_MODULE_VERSION);
    module.put("path", "bloomery");
    module.put("args", List.of());
    info.put("modules", Reply.arrayOf(Reply.bulkMap(module)));
    return Reply.bulkMap(info);
  }

  private static void checkName(String name) {
    for (int k = 0; k < name.length(); k++) {
      char ch = name.charAt(k);
      if (ch < '!' || ch > '~') {
        throw new CommandException("ERR Client names cannot contain spaces, newlines or special characters.");
      }
    }
  }

  /**
   * MONITOR: from now on the connection is also sent a line per command ({@code state.Monitors}) until RESET, QUIT
   * or its end; its own commands still run. Refused inside a transaction, as Redis refuses a client that must get one
   * reply per command.
   */
  private static Reply monitor(Invocation inv) {
    if (!inv.mayDefer()) {
      throw new CommandException("ERR MONITOR isn't allowed for DENY BLOCKING client");
    }
    if (inv.client().monitorSink() == null) {
      throw new CommandException("ERR MONITOR needs a network connection");
    }
    inv.server().monitors().add(inv.client());
    return Reply.OK;
  }

  private static Reply client(Invocation inv) {
    String sub = Args.lower(inv.arg(1));
    ClientState c = inv.client();
    switch (sub) {
      case "setname" -> {
        requireArgs(inv, 3, "client|setname");
        checkName(inv.text(2));
        c.name(inv.text(2));
        return Reply.OK;
      }
      case "getname" -> {
        requireArgs(inv, 2, "client|getname");
        return c.name().isEmpty() ? Reply.NIL : Reply.bulk(c.name());
      }
      case "id" -> {
        requireArgs(inv, 2, "client|id");
        return Reply.integer(c.id());
      }
      case "setinfo" -> {
        requireArgs(inv, 4, "client|setinfo");
        String attr = Args.lower(inv.arg(2));
        String value = inv.text(3);
        for (int k = 0; k < value.length(); k++) {
          char ch = value.charAt(k);
          if (ch < '!' || ch > '~') {
            throw new CommandException("ERR " + inv.text(2)
                + " cannot contain spaces, newlines or special characters.");
          }
        }
        if (attr.equals("lib-name")) {
          c.libName(value);
        } else if (attr.equals("lib-ver")) {
          c.libVersion(value);
        } else {
          throw new CommandException("ERR Unrecognized option '" + inv.text(2) + "'");
        }
        return Reply.OK;
      }
      case "info" -> {
        requireArgs(inv, 2, "client|info");
        return new Reply.Verbatim("txt", c.info() + "\n");
      }
      case "list" -> {
        StringBuilder sb = new StringBuilder();
        List<Long> ids = null;
        if (inv.argc() > 2) {
          if (Args.is(inv.arg(2), "ID") && inv.argc() > 3) {
            ids = new ArrayList<>();
            for (int k = 3; k < inv.argc(); k++) {
              Long id = Args.parseLong(inv.arg(k));
              if (id == null) {
                throw new CommandException("ERR Invalid client ID");
              }
              ids.add(id);
            }
          } else if (!(Args.is(inv.arg(2), "TYPE") && inv.argc() == 4)) {
            throw new CommandException(Errors.SYNTAX);
          }
        }
        for (ClientState other : inv.server().clients()) {
          if (ids == null || ids.contains(other.id())) {
            sb.append(other.info()).append('\n');
          }
        }
        return new Reply.Verbatim("txt", sb.toString());
      }
      case "kill" -> {
        return kill(inv);
      }
      case "no-evict" -> {
        requireArgs(inv, 3, "client|" + sub);
        return Reply.OK;
      }
      case "no-touch" -> {
        requireArgs(inv, 3, "client|" + sub);
        if (Args.is(inv.arg(2), "ON")) {
          inv.client().noTouch(true);
        } else if (Args.is(inv.arg(2), "OFF")) {
          inv.client().noTouch(false);
        } else {
          throw new CommandException(Errors.SYNTAX);
        }
        return Reply.OK;
      }
      case "help" -> {
        List<Reply> lines = new ArrayList<>();
        for (String line : List.of("CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "GETNAME", "    Return the name of the current connection.",
            "ID", "    Return the ID of the current connection.",
            "INFO", "    Return information about the current client connection.",
            "KILL <ip:port> | ID <id> | ADDR <ip:port>", "    Kill connections.",
            "LIST [TYPE normal] [ID <id> ...]", "    Return information about client connections.",
            "SETINFO <LIB-NAME|LIB-VER> <value>", "    Set client meta attr.",
            "SETNAME <name>", "    Assign the name <name> to the current connection.")) {
          lines.add(new Reply.Simple(line));
        }
        return Reply.array(lines);
      }
      default -> throw new CommandException(Errors.unknownSubcommand("client", inv.arg(1)));
    }
  }

  private static void requireArgs(Invocation inv, int argc, String fullName) {
    if (inv.argc() != argc) {
      throw new CommandException(Errors.arity(fullName));
    }
  }

  private static Reply kill(Invocation inv) {
    if (inv.argc() == 3) {
      String addr = inv.text(2);
      for (ClientState other : inv.server().clients()) {
        if (other.address().equals(addr)) {
          other.kill();
          return Reply.OK;
        }
      }
      throw new CommandException("ERR No such client");
    }
    if (inv.argc() % 2 != 0) {
      throw new CommandException(Errors.SYNTAX);
    }
    Long id = null;
    String addr = null;
    boolean skipMe = true;
    for (int k = 2; k + 1 < inv.argc(); k += 2) {
      String opt = Args.lower(inv.arg(k));
      switch (opt) {
        case "id" -> {
          id = Args.parseLong(inv.arg(k + 1));
          if (id == null) {
            throw new CommandException("ERR client-id should be greater than 0");
          }
        }
        case "addr" -> addr = inv.text(k + 1);
        case "skipme" -> skipMe = !Args.is(inv.arg(k + 1), "no");
        case "type", "user", "laddr", "maxage" -> {
          // accepted filters that match every normal client of the default user
        }
        default -> throw new CommandException(Errors.SYNTAX);
      }
    }
    long killed = 0;
    for (ClientState other : inv.server().clients()) {
      if ((id != null && other.id() != id) || (addr != null && !other.address().equals(addr))) {
        continue;
      }
      if (skipMe && other == inv.client()) {
        continue;
      }
      other.kill();
      killed++;
    }
    return Reply.integer(killed);
  }


}
