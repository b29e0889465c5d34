package io.bloomery.server.command.admin;

import static io.bloomery.server.command.CommandSpec.Flag.LOADING;
import static io.bloomery.server.command.CommandSpec.Flag.NOMULTI;
import static io.bloomery.server.command.CommandSpec.Flag.STALE;
import static io.bloomery.server.command.CommandSpec.flags;

import io.bloomery.server.command.Args;
import io.bloomery.server.command.CommandException;
import io.bloomery.server.command.CommandSpec;
import io.bloomery.server.command.CommandTable;
import io.bloomery.server.command.Errors;
import io.bloomery.server.command.Invocation;
import io.bloomery.server.resp.Reply;
import io.bloomery.server.state.ClientState;
import io.bloomery.server.state.acl.Acl;
import io.bloomery.server.state.acl.AclCommands;
import io.bloomery.server.state.acl.AclUser;
import java.io.IOException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * ACL: SETUSER, GETUSER, DELUSER, LIST, USERS, WHOAMI, CAT, LOG, SAVE, LOAD, DRYRUN, GENPASS, HELP, with Redis 8's
 * replies and error texts. The users, the check and the log are {@link Acl}'s.
 */
public final class AccessControlCommands {
  private AccessControlCommands() {}

  /** Each subcommand's Redis arity (counting ACL and the subcommand). */
  private static final Map<String, Integer> ARITY = Map.ofEntries(Map.entry("setuser", -3),
      Map.entry("deluser", -3), Map.entry("getuser", 3), Map.entry("list", 2), Map.entry("users", 2),
      Map.entry("whoami", 2), Map.entry("cat", -2), Map.entry("log", -2), Map.entry("save", 2), Map.entry("load", 2),
      Map.entry("dryrun", -4), Map.entry("genpass", -2), Map.entry("help", 2));

  private static final SecureRandom RANDOM = new SecureRandom();
  private static final int GENPASS_MAX_BITS = 4096;

  /** Adds ACL to {@code t}. */
  public static void register(CommandTable t) {
    t.add("acl", -2, flags(LOADING, STALE, NOMULTI), 0, 0, 0, "server",
        "A container for Access List Control commands.", inv -> acl(inv, t));
  }

  private static Reply acl(Invocation inv, CommandTable table) {
    String sub = subcommand(inv, "acl", ARITY);
    Acl acl = inv.server().acl();
    return switch (sub) {
      case "setuser" -> setUser(inv, acl);
      case "deluser" -> delUser(inv, acl);
      case "getuser" -> getUser(inv, acl);
      case "list" -> bulks(acl.list());
      case "users" -> bulks(acl.userNames());
      case "whoami" -> Reply.bulk(inv.client().userName());
      case "cat" -> cat(inv, acl);
      case "log" -> log(inv, acl);
      case "save", "load" -> file(inv, acl, sub);
      case "dryrun" -> dryRun(inv, acl, table);
      case "genpass" -> genpass(inv);
      default -> help();
    };
  }

  private static Reply setUser(Invocation inv, Acl acl) {
    List<String> ops = new ArrayList<>();
    for (int i = 3; i < inv.argc(); i++) {
      ops.add(latin1(inv.arg(i)));
    }
    String error = acl.setUser(latin1(inv.arg(2)), ops);
    if (error != null) {
      throw new CommandException("ERR " + error);
    }
    return Reply.OK;
  }

  private static Reply delUser(Invocation inv, Acl acl) {
    List<String> names = new ArrayList<>();
    for (int i = 2; i < inv.argc(); i++) {
      names.add(latin1(inv.arg(i)));
    }
    if (names.contains("default")) {
      throw new CommandException("ERR The 'default' user cannot be removed");
    }
    List<AclUser> removed = acl.delUsers(names);
    closeClientsOf(inv, removed);
    return Reply.integer(removed.size());
  }

  /** Closes the connections authenticated as any of {@code users} (they no longer exist). */
  private static void closeClientsOf(Invocation inv, List<AclUser> users) {
    for (ClientState c : inv.server().clients()) {
      if (c.user() != null && users.contains(c.user())) {
        c.authenticated(false);
        c.kill();
      }
    }
  }

  private static Reply getUser(Invocation inv, Acl acl) {
    List<Object> fields = acl.getUser(latin1(inv.arg(2)));
    if (fields == null) {
      return Reply.NIL;
    }
    List<Reply> flat = new ArrayList<>();
    for (int i = 0; i < fields.size(); i += 2) {
      flat.add(Reply.bulk((String) fields.get(i)));
      Object v = fields.get(i + 1);
      if (fields.get(i).equals("flags")) {
        flat.add(new Reply.SetReply(bulks((List<?>) v).elements()));
      } else if (fields.get(i).equals("selectors")) {
        List<Reply> selectors = new ArrayList<>();
        for (Object s : (List<?>) v) {
          List<?> sf = (List<?>) s;
          List<Reply> m = new ArrayList<>();
          for (Object o : sf) {
            m.add(Reply.bulk((String) o));
          }
          selectors.add(new Reply.MapReply(m));
        }
        flat.add(Reply.array(selectors));
      } else if (v instanceof List<?> list) {
        flat.add(bulks(list));
      } else {
        flat.add(Reply.bulk((String) v));
      }
    }
    return new Reply.MapReply(flat);
  }

  private static Reply cat(Invocation inv, Acl acl) {
    if (inv.argc() > 3) {
      throw new CommandException(wrongArguments(inv));
    }
    if (inv.argc() == 2) {
      return bulks(AclCommands.CATEGORIES);
    }
    long bit = AclCommands.categoryBit(inv.text(2));
    if (bit == 0) {
      String name = inv.text(2);
      throw new CommandException("ERR Unknown category '" + (name.length() > 128 ? name.substring(0, 128) : name)
          + "'");
    }
    return bulks(acl.commands().inCategory(bit));
  }

  private static Reply log(Invocation inv, Acl acl) {
    if (inv.argc() > 3) {
      throw new CommandException(wrongArguments(inv));
    }
    long count = 10;
    if (inv.argc() == 3) {
      if (Args.is(inv.arg(2), "RESET")) {
        acl.resetLog();
        return Reply.OK;
      }
      Long n = Args.parseLong(inv.arg(2));
      if (n == null) {
        throw new CommandException(Errors.NOT_INTEGER);
      }
      count = Math.max(0, n);
    }
    long now = System.currentTimeMillis();
    List<Reply> entries = new ArrayList<>();
    for (Acl.LogEntry e : acl.logEntries(count)) {
      entries.add(new Reply.MapReply(List.of(
          Reply.bulk("count"), Reply.integer(e.count()),
          Reply.bulk("reason"), Reply.bulk(e.reasonText()),
          Reply.bulk("context"), Reply.bulk(e.context),
          Reply.bulk("object"), Reply.bulk(e.object),
          Reply.bulk("username"), Reply.bulk(e.username),
          Reply.bulk("age-seconds"), new Reply.Dbl((now - e.updatedMillis()) / 1000.0),
          Reply.bulk("client-info"), Reply.bulk(e.clientInfo()),
          Reply.bulk("entry-id"), Reply.integer(e.id),
          Reply.bulk("timestamp-created"), Reply.integer(e.createdMillis),
          Reply.bulk("timestamp-last-updated"), Reply.integer(e.updatedMillis()))));
    }
    return Reply.array(entries);
  }

  private static Reply file(Invocation inv, Acl acl, String sub) {
    if (acl.file() == null) {
      throw new CommandException("ERR This Redis instance is not configured to use an ACL file. You may want to "
          + "specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis "
          + "configuration file set) in order to store users in the Redis configuration.");
    }
    if (sub.equals("save")) {
      try {
        acl.save();
      } catch (IOException e) {
        throw new CommandException("ERR There was an error trying to save the ACLs. Please check the server logs "
            + "for more information");
      }
      return Reply.OK;
    }
    try {
      closeClientsOf(inv, acl.load());
    } catch (IllegalArgumentException e) {
      throw new CommandException("ERR " + e.getMessage());
    }
    return Reply.OK;
  }

  private static Reply dryRun(Invocation inv, Acl acl, CommandTable table) {
    AclUser user = acl.user(latin1(inv.arg(2)));
    if (user == null) {
      throw new CommandException("ERR User '" + inv.text(2) + "' not found");
    }
    CommandSpec spec = table.get(inv.arg(3));
    if (spec == null) {
      throw new CommandException("ERR Command '" + inv.text(3) + "' not found");
    }
    List<byte[]> argv = inv.argv().subList(3, inv.argc());
    if (spec.arity() > 0 ? spec.arity() != argv.size() : argv.size() < -spec.arity()) {
      throw new CommandException("ERR wrong number of arguments for '" + spec.name() + "' command");
    }
    String denied = acl.dryRun(user, spec.name(), argv, spec.firstKey(), spec.lastKey(), spec.keyStep());
    return denied == null ? Reply.OK : Reply.bulk(denied);
  }

  private static Reply genpass(Invocation inv) {
    if (inv.argc() > 3) {
      throw new CommandException(wrongArguments(inv));
    }
    long bits = 256;
    if (inv.argc() == 3) {
      Long n = Args.parseLong(inv.arg(2));
      if (n == null) {
        throw new CommandException(Errors.NOT_INTEGER);
      }
      bits = n;
    }
    if (bits <= 0 || bits > GENPASS_MAX_BITS) {
      throw new CommandException("ERR ACL GENPASS argument must be the number of bits for the output password, a "
          + "positive number up to " + GENPASS_MAX_BITS);
    }
    int chars = (int) ((bits + 3) / 4);
    byte[] random = new byte[(chars + 1) / 2];
    RANDOM.nextBytes(random);
    return Reply.bulk(HexFormat.of().formatHex(random).substring(0, chars));
  }

  private static Reply help() {
    return help("ACL",
        "CAT [<category>]",
        "    List all commands that belong to <category>, or all command categories",
        "    when no category is specified.",
        "DELUSER <username> [<username> ...]",
        "    Delete a list of users.",
        "DRYRUN <username> <command> [<arg> ...]",
        "    Returns whether the user can execute the given command without executing the command.",
        "GETUSER <username>",
        "    Get the user's details.",
        "GENPASS [<bits>]",
        "    Generate a secure 256-bit user password. The optional `bits` argument can",
        "    be used to specify a different size.",
        "LIST",
        "    Show users details in config file format.",
        "LOAD",
        "    Reload users from the ACL file.",
        "LOG [<count> | RESET]",
        "    Show the ACL log entries.",
        "SAVE",
        "    Save the current config to the ACL file.",
        "SETUSER <username> <attribute> [<attribute> ...]",
        "    Create or modify a user with the specified attributes.",
        "USERS",
        "    List all the registered usernames.",
        "WHOAMI",
        "    Return the current connection username.");
  }

  /**
   * The lower-case subcommand of container command {@code container}, checked against its Redis arity (which counts
   * the container and the subcommand) with Redis's errors for an unknown one and a wrong count.
   */
  static String subcommand(Invocation inv, String container, Map<String, Integer> arities) {
    String sub = Args.lower(inv.arg(1));
    Integer arity = arities.get(sub);
    if (arity == null) {
      throw new CommandException(Errors.unknownSubcommand(container, inv.arg(1)));
    }
    if (arity >= 0 ? inv.argc() != arity : inv.argc() < -arity) {
      throw new CommandException(Errors.arity(container + "|" + sub));
    }
    return sub;
  }

  /** A HELP reply: {@code CONTAINER <subcommand> ...} then {@code lines}, then HELP's own two lines, as Redis. */
  static Reply help(String container, String... lines) {
    List<Reply> out = new ArrayList<>();
    out.add(new Reply.Simple(container + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"));
    for (String line : lines) {
      out.add(new Reply.Simple(line));
    }
    out.add(new Reply.Simple("HELP"));
    out.add(new Reply.Simple("    Print this help."));
    return Reply.array(out);
  }

  /** Redis's reply to a subcommand given too many arguments, naming it as typed. */
  private static String wrongArguments(Invocation inv) {
    return "ERR unknown subcommand or wrong number of arguments for '" + inv.text(1) + "'. Try ACL HELP.";
  }

  private static Reply.Array bulks(List<?> values) {
    List<Reply> out = new ArrayList<>(values.size());
    for (Object v : values) {
      out.add(Reply.bulk((String) v));
    }
    return (Reply.Array) Reply.array(out);
  }

  /** An argument as a string of its bytes (user names, rules and passwords are byte strings in Redis). */
  private static String latin1(byte[] arg) {
    return new String(arg, java.nio.charset.StandardCharsets.ISO_8859_1);
  }
}
