package io.bloomery.server.command;

import java.nio.charset.StandardCharsets;
import java.util.List;

/** Redis's own error texts, as Redis words them. */
public final class Errors {
  private Errors() {}

  public static final String WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value";
  public static final String NOAUTH = "NOAUTH Authentication required.";
  public static final String WRONGPASS = "WRONGPASS invalid username-password pair or user is disabled.";
  public static final String AUTH_NOT_CONFIGURED =
      "ERR AUTH <password> called without any password configured for the default user. "
          + "Are you sure your configuration is correct?";
  public static final String OOM = "OOM command not allowed when used memory > 'maxmemory'.";
  public static final String SYNTAX = "ERR syntax error";
  public static final String NOT_INTEGER = "ERR value is not an integer or out of range";
  public static final String NOT_FLOAT = "ERR value is not a valid float";
  public static final String DB_INDEX = "ERR DB index is out of range";
  public static final String NO_SUCH_KEY = "ERR no such key";
  public static final String MULTI_NESTED = "ERR MULTI calls can not be nested";
  public static final String EXEC_WITHOUT_MULTI = "ERR EXEC without MULTI";
  public static final String DISCARD_WITHOUT_MULTI = "ERR DISCARD without MULTI";
  public static final String EXECABORT = "EXECABORT Transaction discarded because of previous errors.";
  public static final String WATCH_IN_MULTI = "ERR WATCH inside MULTI is not allowed";
  public static final String MAX_CLIENTS = "ERR max number of clients reached";
  public static final String PROTO_UNSUPPORTED = "NOPROTO unsupported protocol version";
  public static final String DENIED = "DENIED Bloomery is running in protected mode because protected mode is enabled "
      + "and no password is set. In this mode connections are only accepted from the loopback interface. "
      + "To accept connections from elsewhere, set a password with --requirepass, or disable protected mode "
      + "with --protected-mode no, and restart the server.";

  /** {@code ERR wrong number of arguments for 'name' command}. */
  public static String arity(String name) {
    return "ERR wrong number of arguments for '" + name + "' command";
  }

  /**
   * Redis's refusal of a write while the journal cannot be written ({@code MISCONF Errors writing to the AOF file:
   * reason}), saying that the command was not applied.
   */
  public static String journalRefused(String reason) {
    return "MISCONF Errors writing to the AOF file: " + reason.replace('\r', ' ').replace('\n', ' ')
        + ". The command was not applied; write commands are refused until the journal can be written again";
  }

  /** Redis 7's unknown-command text, quoting at most 128 bytes of the name and of each argument. */
  public static String unknownCommand(List<byte[]> argv) {
    StringBuilder sb = new StringBuilder("ERR unknown command '").append(clip(argv.get(0)))
        .append("', with args beginning with: ");
    for (int i = 1; i < argv.size(); i++) {
      sb.append('\'').append(clip(argv.get(i))).append("' ");
    }
    return sb.toString();
  }

  /** {@code ERR unknown subcommand 'x'. Try CONTAINER HELP.} */
  public static String unknownSubcommand(String container, byte[] sub) {
    return "ERR unknown subcommand '" + clip(sub) + "'. Try " + container.toUpperCase(java.util.Locale.ROOT)
        + " HELP.";
  }

  private static String clip(byte[] bytes) {
    String s = new String(bytes, 0, Math.min(bytes.length, 128), StandardCharsets.UTF_8);
    return s.replace('\r', ' ').replace('\n', ' ');
  }
}
