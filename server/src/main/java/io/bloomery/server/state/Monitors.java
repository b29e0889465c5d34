package io.bloomery.server.state;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The connections in {@code MONITOR} mode, and the line each of them is sent for every command another (or the
 * same) connection runs, in Redis's format: {@code +<unix seconds>.<microseconds> [0 <ip:port>] "arg" "arg" ...},
 * each argument quoted as Redis's {@code sdscatrepr} quotes it, the passwords of {@code AUTH}, {@code HELLO ... AUTH}
 * and {@code MIGRATE ... AUTH|AUTH2} replaced by {@code "(redacted)"}. Which commands are shown is the dispatcher's
 * call (Redis skips administrative ones and those refused before they ran). Thread-safe; {@link #feed} costs one
 * volatile read while nobody monitors.
 */
public final class Monitors {
  /** Where a monitoring connection takes its lines: called from any thread, must not block. */
  @FunctionalInterface
  public interface Sink {
    void line(byte[] line);
  }

  private static final byte[] REDACTED = "(redacted)".getBytes(StandardCharsets.US_ASCII);

  private final CopyOnWriteArrayList<ClientState> monitors = new CopyOnWriteArrayList<>();

  /** {@code MONITOR}: {@code client} is sent every command's line from now on (once, however often it asks). */
  public void add(ClientState client) {
    if (client.monitorSink() == null) {
      throw new IllegalStateException("client " + client.id() + " has no monitor sink");
    }
    client.monitoring = true;
    monitors.addIfAbsent(client);
  }

  /** {@code RESET} or a closed connection: no more lines for {@code client}. */
  public void remove(ClientState client) {
    monitors.remove(client);
    client.monitoring = false;
  }

  /** Whether {@code client} is monitoring. */
  public boolean monitoring(ClientState client) {
    return monitors.contains(client);
  }

  /** Whether anyone is monitoring. */
  public boolean active() {
    return !monitors.isEmpty();
  }

  /** Sends every monitor the line for {@code argv}, run by {@code from}. */
  public void feed(ClientState from, List<byte[]> argv) {
    if (monitors.isEmpty()) {
      return;
    }
    byte[] line = line(Instant.now(), from.address(), argv);
    for (ClientState m : monitors) {
      m.monitorSink().line(line);
    }
  }

  /** The monitor line for {@code argv} run at {@code at} by the client at {@code address} ({@code host:port}). */
  static byte[] line(Instant at, String address, List<byte[]> argv) {
    StringBuilder out = new StringBuilder(64);
    out.append('+').append(at.getEpochSecond()).append('.')
        .append(String.format(Locale.ROOT, "%06d", at.getNano() / 1000)).append(" [0 ").append(peerId(address))
        .append("] ");
    boolean[] redacted = redacted(argv);
    for (int j = 0; j < argv.size(); j++) {
      if (j > 0) {
        out.append(' ');
      }
      quote(out, redacted[j] ? REDACTED : argv.get(j));
    }
    out.append("\r\n");
    return out.toString().getBytes(StandardCharsets.ISO_8859_1);
  }

  /** Redis's peer id: {@code ip:port}, an IPv6 address in brackets. */
  private static String peerId(String address) {
    int colon = address.lastIndexOf(':');
    if (colon > 0 && address.indexOf(':') != colon && !address.startsWith("[")) {
      return "[" + address.substring(0, colon) + "]" + address.substring(colon);
    }
    return address;
  }

  /** Which arguments carry a password (Redis's {@code redactClientCommandArgument} calls). */
  static boolean[] redacted(List<byte[]> argv) {
    boolean[] out = new boolean[argv.size()];
    String name = new String(argv.get(0), StandardCharsets.ISO_8859_1).toLowerCase(Locale.ROOT);
    switch (name) {
      case "auth" -> {
        for (int j = 1; j < argv.size(); j++) {
          out[j] = true;
        }
      }
      case "hello" -> {
        for (int j = 2; j < argv.size(); j++) {
          if (is(argv.get(j), "auth") && argv.size() - 1 - j >= 2) {
            out[j + 1] = true;
            out[j + 2] = true;
            j += 2;
          } else if (is(argv.get(j), "setname") && argv.size() - 1 - j >= 1) {
            j++;
          } else {
            break;
          }
        }
      }
      case "migrate" -> {
        for (int j = 6; j < argv.size(); j++) {
          int more = argv.size() - 1 - j;
          if (is(argv.get(j), "auth") && more >= 1) {
            out[++j] = true;
          } else if (is(argv.get(j), "auth2") && more >= 2) {
            out[++j] = true;
            out[++j] = true;
          } else if (!is(argv.get(j), "copy") && !is(argv.get(j), "replace")) {
            break;
          }
        }
      }
      default -> { }
    }
    return out;
  }

  private static boolean is(byte[] arg, String word) {
    return new String(arg, StandardCharsets.ISO_8859_1).equalsIgnoreCase(word);
  }

  /** Redis's {@code sdscatrepr}: in double quotes, escapes for quote, backslash and controls, {@code \xHH} else. */
  static void quote(StringBuilder out, byte[] arg) {
    out.append('"');
    for (byte b : arg) {
      int c = b & 0xff;
      switch (c) {
        case '\\', '"' -> out.append('\\').append((char) c);
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        case 7 -> out.append("\\a");
        case '\b' -> out.append("\\b");
        default -> {
          if (c >= 0x20 && c < 0x7f) {
            out.append((char) c);
          } else {
            out.append("\\x").append(Character.forDigit(c >> 4, 16)).append(Character.forDigit(c & 0xf, 16));
          }
        }
      }
    }
    out.append('"');
  }
}
