package io.bloomery.server.rdb;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/** The DUMP payloads recorded from Redis + RedisBloom in {@code rdb/redisbloom-dumps.txt} (see its header). */
public final class RecordedDumps {
  static final String RESOURCE = "/rdb/redisbloom-dumps.txt";

  /** A query and the exact RESP2 bytes the recording server answered. */
  public record Query(List<byte[]> args, byte[] reply) {}

  /** One case: the commands that built key {@code k}, the DUMP of {@code k}, the queries about it. */
  public record Case(String name, List<List<byte[]>> commands, byte[] dump, List<Query> queries) {
    public boolean deterministic() {
      return !name.startsWith("topk/"); // RedisBloom's heap holds item pointers, which DUMP writes as they are
    }

    @Override
    public String toString() {
      return name;
    }
  }

  private RecordedDumps() {}

  public static List<Case> cases() {
    try (InputStream in = RecordedDumps.class.getResourceAsStream(RESOURCE)) {
      String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      List<Case> cases = new ArrayList<>();
      String name = null;
      List<List<byte[]>> commands = null;
      byte[] dump = null;
      List<Query> queries = null;
      List<byte[]> pending = null;
      for (String line : text.split("\n")) {
        if (line.isEmpty() || line.startsWith("#")) {
          continue;
        }
        String[] parts = line.split(" ", 2);
        switch (parts[0]) {
          case "case" -> {
            if (name != null) {
              cases.add(new Case(name, commands, dump, queries));
            }
            name = parts[1];
            commands = new ArrayList<>();
            queries = new ArrayList<>();
            dump = null;
          }
          case "cmd" -> commands.add(args(parts[1]));
          case "dump" -> dump = HexFormat.of().parseHex(parts[1]);
          case "query" -> pending = args(parts[1]);
          case "reply" -> queries.add(new Query(pending, HexFormat.of().parseHex(parts[1])));
          default -> throw new IllegalStateException("unknown line: " + line);
        }
      }
      cases.add(new Case(name, commands, dump, queries));
      return cases;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static Case named(String name) {
    return cases().stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow();
  }

  private static List<byte[]> args(String hex) {
    List<byte[]> args = new ArrayList<>();
    for (String arg : hex.split(" ")) {
      args.add(HexFormat.of().parseHex(arg));
    }
    return args;
  }
}
