package io.bloomery.server.command.admin;

import io.bloomery.server.resp.Reply;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * RedisBloom's own COMMAND DOCS entries (summary, since, group, complexity, module, arguments), as Redis 8.0.2 +
 * RedisBloom sent them: {@code redisbloom-command-docs.resp} is that server's RESP3 reply to COMMAND DOCS for every
 * command of module {@code bf}, written by {@code tools/conformance/command_docs.py}. Read once; immutable.
 */
final class CommandDocs {
  private static final Map<String, Reply> DOCS = load();

  private CommandDocs() {}

  /** RedisBloom's entry for a command (lower-case name), or {@code null} if RedisBloom has no such command. */
  static Reply of(String name) {
    return DOCS.get(name);
  }

  private static Map<String, Reply> load() {
    byte[] bytes;
    try (InputStream in = CommandDocs.class.getResourceAsStream("redisbloom-command-docs.resp")) {
      if (in == null) {
        throw new IllegalStateException("redisbloom-command-docs.resp is missing from the class path");
      }
      bytes = in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    int[] pos = {0};
    Reply reply = parse(bytes, pos);
    if (!(reply instanceof Reply.MapReply map) || pos[0] != bytes.length) {
      throw new IllegalStateException("redisbloom-command-docs.resp is not one RESP3 map");
    }
    Map<String, Reply> out = new LinkedHashMap<>();
    List<Reply> kv = map.keysAndValues();
    for (int i = 0; i < kv.size(); i += 2) {
      out.put(new String(((Reply.Bulk) kv.get(i)).bytes(), StandardCharsets.UTF_8), kv.get(i + 1));
    }
    return Collections.unmodifiableMap(out);
  }

  /** Parses the RESP3 value at {@code pos[0]} (the types a COMMAND DOCS reply uses), advancing it. */
  private static Reply parse(byte[] b, int[] pos) {
    byte type = b[pos[0]];
    int eol = pos[0];
    while (b[eol] != '\r') {
      eol++;
    }
    String head = new String(b, pos[0] + 1, eol - pos[0] - 1, StandardCharsets.US_ASCII);
    pos[0] = eol + 2;
    switch (type) {
      case '$' -> {
        int n = Integer.parseInt(head);
        byte[] value = new byte[n];
        System.arraycopy(b, pos[0], value, 0, n);
        pos[0] += n + 2;
        return Reply.bulk(value);
      }
      case '+' -> {
        return new Reply.Simple(head);
      }
      case ':' -> {
        return Reply.integer(Long.parseLong(head));
      }
      case '*', '~', '%' -> {
        int n = Integer.parseInt(head) * (type == '%' ? 2 : 1);
        List<Reply> items = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          items.add(parse(b, pos));
        }
        return type == '%' ? new Reply.MapReply(items) : type == '~' ? new Reply.SetReply(items) : Reply.array(items);
      }
      default -> throw new IllegalStateException("unexpected RESP type '" + (char) type + "' in the command docs");
    }
  }
}
