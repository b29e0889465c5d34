package io.bloomery.server.conformance;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A conformance recording: what {@code tools/conformance/record.py} wrote after running the cases
 * against real Redis + RedisBloom. The format is line based (the file's header repeats it):
 *
 * <pre>
 * case NAME
 * proto 2|3
 * mode sequential|pipelined
 * why TEXT                              (optional)
 * &gt; "arg" "arg" ...                     a command, sent as a RESP array of bulk strings
 * &gt;raw "bytes"                          bytes sent as they are
 * &lt; "bytes"                             exact reply
 * &lt;any "reason" "bytes"                 only the reply's RESP type is compared
 * &lt;fields "f1,f2" "reason" "bytes"      only the named fields of a map / name-value array
 * end
 * </pre>
 *
 * Lines starting with {@code #} and blank lines are ignored. A malformed file is refused with the
 * line number and what was expected; nothing is guessed.
 */
record Recording(List<Case> cases) {

  /** One case: a fresh connection, optional HELLO 3, FLUSHALL, then the steps. */
  record Case(String name, int proto, boolean pipelined, String why, List<Step> steps, int line) {}

  /** What one step sends and what it expects back. */
  record Step(byte[] sent, Expectation expected, int line) {

    /** The command as the recording shows it, for failure messages. */
    String shown() {
      return Escaped.of(sent);
    }
  }

  /** How a reply is compared. */
  sealed interface Expectation {
    /** The reply the real server sent (for "any" and "fields", shown but not all compared). */
    byte[] recorded();
  }

  /** The reply must be these bytes exactly. */
  record Exact(byte[] recorded) implements Expectation {}

  /** The reply must be a RESP value of the same type as the recorded one; the reason says why. */
  record AnyOfType(String reason, byte[] recorded) implements Expectation {}

  /** The named fields of a map (or flat name/value array) reply must equal the recorded ones. */
  record Fields(List<String> names, String reason, byte[] recorded) implements Expectation {}

  /** Parses a recording; {@code source} names it in error messages. */
  static Recording parse(InputStream in, String source) throws IOException {
    String text = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
    return parse(text, source);
  }

  static Recording parse(String text, String source) {
    List<Case> cases = new ArrayList<>();
    Set<String> names = new HashSet<>();
    String[] lines = text.split("\n", -1);
    String name = null;
    int proto = 0;
    String mode = null;
    String why = null;
    int caseLine = 0;
    List<Step> steps = null;
    byte[] pendingSend = null;
    int pendingLine = 0;
    for (int n = 0; n < lines.length; n++) {
      String line = lines[n];
      int lineNo = n + 1;
      String where = source + ":" + lineNo + ": ";
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      try {
        if (name == null) {
          if (!line.startsWith("case ")) {
            throw new IllegalArgumentException("expected 'case NAME', found " + preview(line));
          }
          name = line.substring(5);
          if (!name.matches("[A-Za-z0-9_.:/@\\-]+")) {
            throw new IllegalArgumentException("bad case name " + preview(name));
          }
          if (!names.add(name)) {
            throw new IllegalArgumentException("duplicate case " + name);
          }
          caseLine = lineNo;
          proto = 0;
          mode = null;
          why = null;
          steps = new ArrayList<>();
          pendingSend = null;
        } else if (line.startsWith("proto ")) {
          requireNoSteps(steps, "proto");
          proto = switch (line.substring(6)) {
            case "2" -> 2;
            case "3" -> 3;
            default -> throw new IllegalArgumentException("proto must be 2 or 3, found " + preview(line));
          };
        } else if (line.startsWith("mode ")) {
          requireNoSteps(steps, "mode");
          mode = line.substring(5);
          if (!mode.equals("sequential") && !mode.equals("pipelined")) {
            throw new IllegalArgumentException("mode must be sequential or pipelined, found " + preview(line));
          }
        } else if (line.startsWith("why ")) {
          why = line.substring(4);
        } else if (line.startsWith(">raw ")) {
          requireNoPending(pendingSend);
          List<byte[]> parts = strings(line, 5, 1);
          pendingSend = parts.get(0);
          pendingLine = lineNo;
        } else if (line.startsWith("> ")) {
          requireNoPending(pendingSend);
          List<byte[]> args = strings(line, 2, -1);
          if (args.isEmpty()) {
            throw new IllegalArgumentException("a command needs at least one argument");
          }
          pendingSend = encodeCommand(args);
          pendingLine = lineNo;
        } else if (line.startsWith("< ")) {
          steps.add(new Step(requirePending(pendingSend), new Exact(strings(line, 2, 1).get(0)), pendingLine));
          pendingSend = null;
        } else if (line.startsWith("<any ")) {
          List<byte[]> parts = strings(line, 5, 2);
          steps.add(new Step(requirePending(pendingSend),
              new AnyOfType(ascii(parts.get(0)), parts.get(1)), pendingLine));
          pendingSend = null;
        } else if (line.startsWith("<fields ")) {
          List<byte[]> parts = strings(line, 8, 3);
          List<String> fields = List.of(ascii(parts.get(0)).split(","));
          steps.add(new Step(requirePending(pendingSend),
              new Fields(fields, ascii(parts.get(1)), parts.get(2)), pendingLine));
          pendingSend = null;
        } else if (line.equals("end")) {
          requireNoPending(pendingSend);
          if (proto == 0 || mode == null) {
            throw new IllegalArgumentException("case " + name + " lacks its proto or mode line");
          }
          if (steps.isEmpty()) {
            throw new IllegalArgumentException("case " + name + " has no steps");
          }
          cases.add(new Case(name, proto, mode.equals("pipelined"), why, List.copyOf(steps), caseLine));
          name = null;
        } else {
          throw new IllegalArgumentException("unknown line " + preview(line));
        }
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(where + e.getMessage(), e);
      }
    }
    if (name != null) {
      throw new IllegalArgumentException(source + ": case " + name + " (line " + caseLine + ") has no 'end'");
    }
    return new Recording(List.copyOf(cases));
  }

  /** The RESP array of bulk strings a client sends for {@code args}. */
  static byte[] encodeCommand(List<byte[]> args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(("*" + args.size() + "\r\n").getBytes(StandardCharsets.US_ASCII));
    for (byte[] arg : args) {
      out.writeBytes(("$" + arg.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
      out.writeBytes(arg);
      out.writeBytes(new byte[] {'\r', '\n'});
    }
    return out.toByteArray();
  }

  /** Quoted strings separated by single spaces from {@code from} to the end of the line. */
  private static List<byte[]> strings(String line, int from, int expected) {
    List<byte[]> out = new ArrayList<>();
    int i = from;
    while (i < line.length()) {
      Escaped.Parsed parsed = Escaped.parse(line, i);
      out.add(parsed.bytes());
      i = parsed.end();
      if (i < line.length()) {
        if (line.charAt(i) != ' ') {
          throw new IllegalArgumentException("column " + (i + 1) + ": expected a space after a string");
        }
        i++;
        if (i == line.length()) {
          throw new IllegalArgumentException("trailing space");
        }
      }
    }
    if (expected >= 0 && out.size() != expected) {
      throw new IllegalArgumentException("expected " + expected + " quoted string(s), found " + out.size());
    }
    return out;
  }

  private static void requireNoSteps(List<Step> steps, String what) {
    if (!steps.isEmpty()) {
      throw new IllegalArgumentException("'" + what + "' after the first step");
    }
  }

  private static void requireNoPending(byte[] pending) {
    if (pending != null) {
      throw new IllegalArgumentException("a step without its expected reply");
    }
  }

  private static byte[] requirePending(byte[] pending) {
    if (pending == null) {
      throw new IllegalArgumentException("an expected reply without a step before it");
    }
    return pending;
  }

  private static String ascii(byte[] bytes) {
    return new String(bytes, StandardCharsets.US_ASCII);
  }

  private static String preview(String line) {
    return "'" + (line.length() > 60 ? line.substring(0, 60) + "..." : line) + "'";
  }
}
