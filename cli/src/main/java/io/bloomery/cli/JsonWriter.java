package io.bloomery.cli;

import java.io.PrintWriter;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * A small streaming JSON writer for the CLI's {@code --json} output: snake_case keys chosen by the
 * callers, two-space indentation, one value per line, numbers in {@code Double.toString} /
 * {@code Long.toString} form (locale-independent). Non-finite doubles are written as {@code null}.
 * Streaming matters for {@code query --json} over millions of items.
 */
final class JsonWriter {
  private final PrintWriter out;
  private final Deque<Boolean> firstInScope = new ArrayDeque<>();
  private boolean afterName;

  JsonWriter(PrintWriter out) {
    this.out = out;
  }

  JsonWriter beginObject() {
    beforeValue();
    out.print('{');
    firstInScope.push(true);
    return this;
  }

  JsonWriter endObject() {
    return end('}');
  }

  JsonWriter beginArray() {
    beforeValue();
    out.print('[');
    firstInScope.push(true);
    return this;
  }

  JsonWriter endArray() {
    return end(']');
  }

  JsonWriter name(String name) {
    separate();
    string(name);
    out.print(": ");
    afterName = true;
    return this;
  }

  JsonWriter value(String value) {
    beforeValue();
    if (value == null) {
      out.print("null");
    } else {
      string(value);
    }
    return this;
  }

  JsonWriter value(long value) {
    beforeValue();
    out.print(value);
    return this;
  }

  JsonWriter value(double value) {
    beforeValue();
    out.print(Double.isFinite(value) ? Double.toString(value) : "null");
    return this;
  }

  JsonWriter value(boolean value) {
    beforeValue();
    out.print(value);
    return this;
  }

  JsonWriter field(String name, String value) {
    return name(name).value(value);
  }

  JsonWriter field(String name, long value) {
    return name(name).value(value);
  }

  JsonWriter field(String name, double value) {
    return name(name).value(value);
  }

  JsonWriter field(String name, boolean value) {
    return name(name).value(value);
  }

  /** Ends the document with a newline and flushes. */
  void finish() {
    out.println();
    out.flush();
  }

  private JsonWriter end(char bracket) {
    boolean empty = firstInScope.pop();
    if (!empty) {
      newline();
    }
    out.print(bracket);
    return this;
  }

  private void beforeValue() {
    if (afterName) {
      afterName = false;
      return;
    }
    if (!firstInScope.isEmpty()) {
      separate();
    }
  }

  private void separate() {
    if (!firstInScope.peek()) {
      out.print(',');
    }
    firstInScope.pop();
    firstInScope.push(false);
    newline();
  }

  private void newline() {
    out.print('\n');
    out.print("  ".repeat(firstInScope.size()));
  }

  private void string(String text) {
    out.print('"');
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      switch (c) {
        case '"' -> out.print("\\\"");
        case '\\' -> out.print("\\\\");
        case '\n' -> out.print("\\n");
        case '\r' -> out.print("\\r");
        case '\t' -> out.print("\\t");
        case '\b' -> out.print("\\b");
        case '\f' -> out.print("\\f");
        default -> {
          if (c < 0x20 || c == 0x2028 || c == 0x2029) {
            out.printf(java.util.Locale.ROOT, "\\u%04x", (int) c);
          } else {
            out.print(c);
          }
        }
      }
    }
    out.print('"');
  }
}
