package io.bloomery.cli;

import io.bloomery.server.BloomeryServer;
import io.bloomery.server.ServerConfig;
import io.bloomery.server.rdb.DumpPayload;
import io.bloomery.server.rdb.RdbFileReader;
import io.bloomery.server.rdb.RdbFormatException;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * {@code bloomery import}: copies the RedisBloom keys of a Redis RDB file, or of a live Redis server, into a running
 * Bloomery server or a data directory, by {@code RESTORE}.
 */
@Command(
    name = "import",
    mixinStandardHelpOptions = true,
    header = "Import the RedisBloom keys of a Redis RDB file or server into Bloomery.",
    description = {
      "Reads FILE (an RDB file as Redis writes it, RDB versions up to 12) or, with --from, a",
      "running Redis server (SCAN, then TYPE and DUMP per key), and RESTOREs every BF, CF,",
      "CMS and TOPK key into the target: the server at --host/--port, or, with --dir, the",
      "data directory DIR (no server may be using it). Keys keep their expiry time; a key",
      "already expired is not created. Other keys (strings, lists, sets, hashes, zsets,",
      "streams, other modules' types) are skipped and counted by type. An existing key is",
      "kept and counted unless --replace. Only database --db is imported. A malformed",
      "file stops the import at the key it cannot read; the keys before it are imported.",
      "The password comes from --password or the environment variable REDISCLI_AUTH."
    })
final class ImportCommand implements Callable<Integer> {
  /** TYPE's replies for the module types the server restores. */
  static final Set<String> RESTORED_TYPES = Set.of("MBbloom--", "MBbloomCF", "CMSk-TYPE", "TopK-TYPE", "TDIS-TYPE");
  /** TYPE's replies for Redis's own types; any other reply names a module type. */
  static final Set<String> REDIS_TYPES = Set.of("string", "list", "set", "zset", "hash", "stream");

  @ParentCommand BloomeryCommand root;

  @Parameters(index = "0", arity = "0..1", paramLabel = "FILE", description = "A Redis RDB file (dump.rdb).")
  Path file;

  @Option(names = "--from", paramLabel = "URL",
      description = "Read from a running Redis server, redis://[[user]:password@]host:port, instead of FILE.")
  String from;

  @Option(names = "--dir", paramLabel = "DIR",
      description = "Import into this data directory instead of a running server.")
  Path dir;

  @Option(names = "--db", defaultValue = "0", description = "The database to import (default: ${DEFAULT-VALUE}).")
  int db;

  @Option(names = "--replace", description = "Overwrite keys that exist in the target.")
  boolean replace;

  @Mixin ServerOptions server;

  /** What was imported and what was not. */
  static final class Tally {
    long imported;
    long existing;
    long expired;
    long otherDatabases;
    final Map<String, Long> skipped = new TreeMap<>();
  }

  ImportCommand() {}

  @Override
  public Integer call() throws IOException {
    if ((file == null) == (from == null)) {
      throw CliException.usage("give either FILE or --from redis://host:port");
    }
    if (db < 0) {
      throw CliException.usage("--db must be >= 0, was " + db);
    }
    Tally tally = new Tally();
    if (dir != null) {
      Files.createDirectories(dir);
      try (BloomeryServer target = BloomeryServer.start(ServerConfig.parse(Map.of(), "--port", "0", "--bind",
          "127.0.0.1", "--http-port", "0", "--dir", dir.toString()));
          RespClient client = RespClient.connect("127.0.0.1", target.port(), 10_000, 600_000, null)) {
        run(client, tally);
      }
    } else {
      server.validate();
      try (RespClient client = server.connect(10_000, 600_000)) {
        run(client, tally);
      }
    }
    StringBuilder line = new StringBuilder("imported " + Units.count(tally.imported, "key", "keys") + " into "
        + (dir != null ? dir.toString() : server.toString()));
    if (tally.existing > 0) {
      line.append("; kept ").append(Units.count(tally.existing, "existing key", "existing keys"))
          .append(" (--replace overwrites)");
    }
    if (tally.expired > 0) {
      line.append("; ").append(tally.expired).append(" already expired");
    }
    long skippedTotal = tally.skipped.values().stream().mapToLong(Long::longValue).sum();
    if (skippedTotal > 0) {
      line.append("; skipped ").append(skippedTotal).append(": ");
      tally.skipped.forEach((type, n) -> line.append(type).append(' ').append(n).append(", "));
      line.setLength(line.length() - 2);
    }
    if (tally.otherDatabases > 0) {
      line.append("; ").append(Units.count(tally.otherDatabases, "RedisBloom key", "RedisBloom keys"))
          .append(" in other databases (--db)");
    }
    root.out().println(line);
    StandardOutput.requireWritable(root.out());
    return BloomeryCommand.EXIT_OK;
  }

  private void run(RespClient target, Tally tally) throws IOException {
    if (file != null) {
      FilterFiles.requireReadableFile(file);
      try (InputStream in = new BufferedInputStream(Files.newInputStream(file), 1 << 16)) {
        RdbFileReader.Summary summary = RdbFileReader.read(in, (keyDb, key, expireAt, value) -> {
          if (keyDb != db) {
            tally.otherDatabases++;
          } else {
            restore(target, key, expireAt, DumpPayload.dump(value), tally);
          }
        });
        summary.skipped().forEach((type, n) -> tally.skipped.merge(type, n, Long::sum));
      } catch (RdbFormatException e) {
        throw CliException.failure(file + ": " + e.getMessage(), e);
      }
    } else {
      try (RespClient source = connectSource()) {
        SourceExpiry expiry = new SourceExpiry();
        if (db != 0) {
          source.call("SELECT", db);
        }
        String cursor = "0";
        do {
          List<?> page = (List<?>) source.call("SCAN", cursor, "COUNT", 1000);
          cursor = new String((byte[]) page.get(0), StandardCharsets.UTF_8);
          for (Object k : (List<?>) page.get(1)) {
            byte[] key = (byte[]) k;
            String type = source.callForText("TYPE", key);
            if (!RESTORED_TYPES.contains(type)) {
              if (!type.equals("none")) {
                tally.skipped.merge(REDIS_TYPES.contains(type) ? type : "module " + type, 1L, Long::sum);
              }
              continue;
            }
            Object payload = source.call("DUMP", key);
            long expireAt = expiry.of(source, key);
            if (payload == null || expireAt == -2) {
              continue; // deleted or expired since SCAN saw it
            }
            restore(target, key, expireAt, (byte[]) payload, tally);
          }
        } while (!cursor.equals("0"));
      }
    }
  }

  /**
   * A source key's absolute expiry in Unix milliseconds, -1 without one, -2 if the key is gone. Read with
   * PEXPIRETIME (Redis 7+), which does not move between two reads; a source without it is asked PTTL once it has
   * refused PEXPIRETIME, and the time left is added to this machine's clock, which may place the expiry a
   * millisecond or so later than the source's.
   */
  private static final class SourceExpiry {
    private boolean absolute = true;

    long of(RespClient source, byte[] key) throws IOException {
      if (absolute) {
        try {
          return (Long) source.call("PEXPIRETIME", key);
        } catch (RespClient.ErrorReply e) {
          if (!e.getMessage().startsWith("ERR unknown command")) {
            throw e;
          }
          absolute = false;
        }
      }
      long pttl = (Long) source.call("PTTL", key);
      return pttl < 0 ? pttl : System.currentTimeMillis() + pttl;
    }
  }

  private RespClient connectSource() throws IOException {
    URI uri;
    try {
      uri = new URI(from);
    } catch (URISyntaxException e) {
      throw CliException.usage("--from: not a URL: " + from, e);
    }
    if (!"redis".equals(uri.getScheme()) || uri.getHost() == null) {
      throw CliException.usage("--from must be redis://[[user]:password@]host[:port], was " + from);
    }
    String password = null;
    if (uri.getUserInfo() != null) {
      String info = uri.getUserInfo();
      password = info.substring(info.indexOf(':') + 1);
    }
    return RespClient.connect(uri.getHost(), uri.getPort() < 0 ? 6379 : uri.getPort(), 10_000, 600_000, password);
  }

  private void restore(RespClient target, byte[] key, long expireAtMillis, byte[] payload, Tally tally)
      throws RespClient.Failure {
    if (expireAtMillis >= 0 && expireAtMillis <= System.currentTimeMillis()) {
      tally.expired++;
      return;
    }
    List<Object> args = new java.util.ArrayList<>(List.of("RESTORE", key,
        expireAtMillis < 0 ? 0L : expireAtMillis, payload));
    if (expireAtMillis >= 0) {
      args.add("ABSTTL");
    }
    if (replace) {
      args.add("REPLACE");
    }
    try {
      target.call(args.toArray());
      tally.imported++;
    } catch (RespClient.ErrorReply e) {
      if (String.valueOf(e.getMessage()).startsWith("BUSYKEY")) {
        tally.existing++;
        return;
      }
      throw CliException.failure("RESTORE of key '" + new String(key, StandardCharsets.UTF_8) + "' failed: "
          + e.getMessage(), e);
    }
  }
}
