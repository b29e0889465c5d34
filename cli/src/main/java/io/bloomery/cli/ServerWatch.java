package io.bloomery.cli;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What {@code bloomery top} reads from a running server in one round, over plain RESP: {@code INFO everything} for
 * the server figures and the calls of each command ({@code commandstats}), {@code SCAN} for the keys and each kind's
 * {@code *.INFO} for the key figures.
 */
final class ServerWatch {
  /** Keys read per round at most; the view says when there are more. */
  static final int MAX_KEYS = 200;

  /** One key: {@code -1} for a figure its kind does not report. */
  record KeyRow(String key, String kind, long items, long capacity, long bytes) {
    double used() {
      return capacity > 0 && items >= 0 ? (double) items / capacity : Double.NaN;
    }
  }

  /**
   * One round. {@code ownCommands} is how many commands this round sent, and {@code ownCalls} how many of each, so
   * that rates can leave out the watcher's own traffic; {@code calls} is each command's {@code calls} from
   * {@code INFO commandstats} (empty if the server has no such section).
   */
  record Round(long atNanos, long commandsProcessed, long clients, long keyCount, List<KeyRow> keys, long ownCommands,
      Map<String, Long> calls, Map<String, Long> ownCalls) {}

  private final RespClient client;

  ServerWatch(RespClient client) {
    this.client = client;
  }

  /** One round of reads; a {@link RespClient.Failure} if the server failed or refused. */
  Round read() throws RespClient.Failure {
    long sent = 1;
    Map<String, Long> own = new LinkedHashMap<>();
    own.put("info", 1L);
    Map<String, String> info = parseInfo(client.callForText("INFO", "everything"));
    List<KeyRow> rows = new ArrayList<>();
    String cursor = "0";
    do {
      if (!(client.call("SCAN", cursor, "COUNT", "100") instanceof List<?> page && page.size() == 2
          && page.get(0) instanceof byte[] next && page.get(1) instanceof List<?> keys)) {
        throw new RespClient.Failure("SCAN: not a cursor and a list of keys", null);
      }
      sent++;
      own.merge("scan", 1L, Long::sum);
      for (Object element : keys) {
        String key = new String((byte[]) element, StandardCharsets.UTF_8);
        if (rows.size() < MAX_KEYS) {
          sent += 2;
          KeyRow row = row(key, own);
          if (row != null) {
            rows.add(row);
          }
        }
      }
      cursor = new String(next, StandardCharsets.US_ASCII);
    } while (!cursor.equals("0") && rows.size() < MAX_KEYS);
    rows.sort((a, b) -> a.key().compareTo(b.key()));
    return new Round(System.nanoTime(), number(info, "total_commands_processed"), number(info, "connected_clients"),
        keyCount(info.getOrDefault("db0", "")), rows, sent, commandCalls(info), own);
  }

  private KeyRow row(String key, Map<String, Long> own) throws RespClient.Failure {
    String type = client.callForText("TYPE", key);
    own.merge("type", 1L, Long::sum);
    String kind;
    String infoCommand;
    switch (type) {
      case "MBbloom--" -> { kind = "bloom"; infoCommand = "BF.INFO"; }
      case "MBbloomCF" -> { kind = "cuckoo"; infoCommand = "CF.INFO"; }
      case "CMSk-TYPE" -> { kind = "cms"; infoCommand = "CMS.INFO"; }
      case "TopK-TYPE" -> { kind = "topk"; infoCommand = "TOPK.INFO"; }
      case "BLcounting" -> { kind = "counting"; infoCommand = "CBF.INFO"; }
      case "BLagepart" -> { kind = "aging"; infoCommand = "AGE.INFO"; }
      case "none" -> { return null; } // deleted between SCAN and TYPE
      default -> { return new KeyRow(key, type, -1, -1, -1); }
    }
    own.merge(infoCommand.toLowerCase(java.util.Locale.ROOT), 1L, Long::sum);
    Map<String, Long> fields;
    try {
      fields = pairs(client.call(infoCommand, key));
    } catch (RespClient.ErrorReply e) {
      return null; // deleted or replaced meanwhile: seen again next round
    }
    long items = fields.getOrDefault("Number of items inserted", -1L);
    if (kind.equals("cuckoo") && items >= 0) {
      items -= fields.getOrDefault("Number of items deleted", 0L);
    }
    long capacity = fields.getOrDefault("Capacity", -1L);
    if (kind.equals("cuckoo")) {
      capacity = cuckooSlots(fields);
    }
    long bytes = fields.getOrDefault("Size", -1L);
    if (bytes < 0) {
      bytes = memoryUsage(key, own); // CMS.INFO and TOPK.INFO report no size
    }
    return new KeyRow(key, kind, items, capacity, bytes);
  }

  /** {@code MEMORY USAGE key}, or -1 when the key is gone or the server does not answer it with a number. */
  private long memoryUsage(String key, Map<String, Long> own) throws RespClient.Failure {
    // Counted under both names a server may file it: "memory" (Bloomery) and "memory|usage" (Redis 7 and later).
    own.merge("memory", 1L, Long::sum);
    own.merge("memory|usage", 1L, Long::sum);
    try {
      return client.call("MEMORY", "USAGE", key) instanceof Long bytes ? bytes : -1;
    } catch (RespClient.ErrorReply e) {
      return -1;
    }
  }

  /**
   * A cuckoo filter's fingerprint slots over every sub-filter, from its {@code CF.INFO}: the first has "Number of
   * buckets" × "Bucket size" slots and each later one "Expansion rate" times the buckets of the one before (a rate
   * of 0 or 1 keeps them equal); -1 when the reply lacks the fields.
   */
  static long cuckooSlots(Map<String, Long> fields) {
    long buckets = fields.getOrDefault("Number of buckets", -1L);
    long bucketSize = fields.getOrDefault("Bucket size", -1L);
    long filters = fields.getOrDefault("Number of filters", 1L);
    long expansion = fields.getOrDefault("Expansion rate", 1L);
    if (buckets < 0 || bucketSize < 0) {
      return -1;
    }
    long slots = 0;
    long size = buckets * bucketSize;
    for (long i = 0; i < filters; i++) {
      slots += size;
      size = expansion <= 1 || size > Long.MAX_VALUE / expansion ? size : size * expansion;
    }
    return slots;
  }

  /**
   * A RESP2 {@code *.INFO} reply (field, value, field, value...) as a map of its numeric fields; a field name may be
   * a simple or a bulk string.
   */
  static Map<String, Long> pairs(Object reply) {
    Map<String, Long> fields = new LinkedHashMap<>();
    if (!(reply instanceof List<?> list)) {
      return fields;
    }
    for (int i = 0; i + 1 < list.size(); i += 2) {
      Object name = list.get(i);
      if (list.get(i + 1) instanceof Long value) {
        if (name instanceof String text) {
          fields.put(text, value);
        } else if (name instanceof byte[] bytes) {
          fields.put(new String(bytes, StandardCharsets.UTF_8), value);
        }
      }
    }
    return fields;
  }

  /** {@code INFO}'s {@code name:value} lines. */
  static Map<String, String> parseInfo(String info) {
    Map<String, String> fields = new LinkedHashMap<>();
    for (String line : info.split("\r?\n")) {
      int colon = line.indexOf(':');
      if (colon > 0 && !line.startsWith("#")) {
        fields.put(line.substring(0, colon), line.substring(colon + 1).trim());
      }
    }
    return fields;
  }

  /**
   * Each command's {@code calls=N} from {@code INFO commandstats} lines ({@code cmdstat_<name>:calls=N,usec=...});
   * lines it cannot read are left out.
   */
  static Map<String, Long> commandCalls(Map<String, String> info) {
    Map<String, Long> calls = new LinkedHashMap<>();
    info.forEach((name, value) -> {
      if (name.startsWith("cmdstat_") && name.length() > 8 && value.startsWith("calls=")) {
        int end = value.indexOf(',');
        try {
          calls.put(name.substring(8), Long.parseLong(value.substring(6, end < 0 ? value.length() : end)));
        } catch (NumberFormatException e) {
          // not a count: left out
        }
      }
    });
    return calls;
  }

  private static long number(Map<String, String> info, String name) {
    try {
      return Long.parseLong(info.getOrDefault(name, "-1"));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** {@code keys=N} of a keyspace line such as {@code keys=5,expires=1,avg_ttl=0}. */
  static long keyCount(String db) {
    for (String part : db.split(",")) {
      if (part.startsWith("keys=")) {
        try {
          return Long.parseLong(part.substring(5));
        } catch (NumberFormatException e) {
          return -1;
        }
      }
    }
    return 0;
  }
}
