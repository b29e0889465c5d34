package io.bloomery.server.resp;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Splits an inline command line the way Redis's {@code sdssplitargs} does: arguments separated by spaces, tabs, CR
 * or LF; {@code "double quotes"} with {@code \n \r \t \b \a \\ \" \xHH} escapes; {@code 'single quotes'} with only
 * {@code \'}; a closing quote must be followed by a space or the end.
 */
final class InlineSplitter {
  private InlineSplitter() {}

  /** The arguments, or {@code null} for unbalanced quotes. */
  static List<byte[]> split(byte[] line) {
    List<byte[]> args = new ArrayList<>();
    int i = 0;
    int n = line.length;
    while (true) {
      while (i < n && isSpace(line[i])) {
        i++;
      }
      if (i >= n) {
        return args;
      }
      ByteArrayOutputStream current = new ByteArrayOutputStream();
      boolean inDouble = false;
      boolean inSingle = false;
      boolean done = false;
      while (!done) {
        if (inDouble) {
          if (i >= n) {
            return null;
          }
          byte c = line[i];
          if (c == '\\' && i + 3 < n && line[i + 1] == 'x' && isHex(line[i + 2]) && isHex(line[i + 3])) {
            current.write(hex(line[i + 2]) * 16 + hex(line[i + 3]));
            i += 3;
          } else if (c == '\\' && i + 1 < n) {
            i++;
            byte e = line[i];
            current.write(switch (e) {
              case 'n' -> '\n';
              case 'r' -> '\r';
              case 't' -> '\t';
              case 'b' -> '\b';
              case 'a' -> 7;
              default -> e;
            });
          } else if (c == '"') {
            if (i + 1 < n && !isSpace(line[i + 1])) {
              return null;
            }
            done = true;
          } else {
            current.write(c);
          }
        } else if (inSingle) {
          if (i >= n) {
            return null;
          }
          byte c = line[i];
          if (c == '\\' && i + 1 < n && line[i + 1] == '\'') {
            i++;
            current.write('\'');
          } else if (c == '\'') {
            if (i + 1 < n && !isSpace(line[i + 1])) {
              return null;
            }
            done = true;
          } else {
            current.write(c);
          }
        } else {
          if (i >= n) {
            done = true;
            continue;
          }
          byte c = line[i];
          if (isSpace(c)) {
            done = true;
          } else if (c == '"') {
            inDouble = true;
          } else if (c == '\'') {
            inSingle = true;
          } else {
            current.write(c);
          }
        }
        if (i < n) {
          i++;
        }
      }
      args.add(current.toByteArray());
    }
  }

  private static boolean isSpace(byte c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == 0x0b || c == '\f';
  }

  private static boolean isHex(byte c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  }

  private static int hex(byte c) {
    return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
  }
}
