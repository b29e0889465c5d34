package io.bloomery.server.state.acl;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The commands ACL rules name, each with an id (its bit in a selector), its ACL categories and the key access it
 * needs. A command Redis 8.0.2 + RedisBloom also has takes Redis's categories and key access (recorded from that
 * server in {@code redis-acl-commands.txt}), and a container command (CONFIG, CLIENT, ACL, ...) gets one entry per
 * subcommand, named {@code container|sub} as Redis names them; a command of Bloomery's own takes what its flags
 * say. Built once, when the command table is complete; read-only afterwards.
 */
public final class AclCommands {
  /** The categories in Redis's order ({@code ACL CAT}): bit {@code i} of a category mask is category {@code i}. */
  public static final List<String> CATEGORIES = List.of("keyspace", "read", "write", "set", "sortedset", "list",
      "hash", "string", "bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking",
      "dangerous", "connection", "transaction", "scripting", "bloom", "cuckoo", "cms", "topk", "tdigest");

  /** Key access a command needs on every key it names: read. */
  public static final int READ = 1;
  /** Key access a command needs on every key it names: write. */
  public static final int WRITE = 2;

  private static final Map<String, Known> REDIS = loadRedis();

  /**
   * What Redis says of one command: its category mask and the key access of each key spec, in order (the n-th key
   * the command names takes the n-th spec's, the last spec's past the end).
   */
  record Known(long categories, int[] keyAccess) {}

  private final List<String> names = new ArrayList<>();
  private final List<Long> categories = new ArrayList<>();
  private final List<int[]> keyAccess = new ArrayList<>();
  private final List<Boolean> noAuth = new ArrayList<>();
  private final List<Integer> parents = new ArrayList<>();
  /** Commands at or after this id are Redis's that this server does not answer (rules may still name them). */
  private int served = -1;
  private final Map<String, Integer> ids = new HashMap<>();
  private final Map<String, List<Integer>> subcommands = new LinkedHashMap<>();

  /** The bit of {@code category} in a mask, or 0 if there is no such category. */
  public static long categoryBit(String category) {
    int i = CATEGORIES.indexOf(category.toLowerCase(Locale.ROOT));
    return i < 0 ? 0 : 1L << i;
  }

  /**
   * Adds a command of the server's table. {@code write}, {@code readonly}, {@code fast} and {@code noAuth} are its
   * flags and {@code group} its family; they give the categories of a command Redis does not have.
   */
  public void add(String name, boolean write, boolean readonly, boolean fast, boolean noAuth, String group) {
    Known known = REDIS.get(name);
    if (known == null) {
      long cats = categoryBit(write ? "write" : readonly ? "read" : "") | categoryBit(fast ? "fast" : "slow");
      String family = name.contains(".") ? name.substring(0, name.indexOf('.')) : group;
      cats |= categoryBit(switch (family) {
        case "bf", "cbf", "age" -> "bloom";
        case "cf" -> "cuckoo";
        case "cms" -> "cms";
        case "topk" -> "topk";
        case "tdigest" -> "tdigest";
        default -> "";
      });
      known = new Known(cats, new int[] {(write ? WRITE : 0) | (readonly ? READ : 0)});
    }
    registerWithSubcommands(name, known, noAuth);
  }

  private void registerWithSubcommands(String name, Known known, boolean noAuth) {
    if (served >= 0) {
      throw new IllegalStateException("the server's commands are complete");
    }
    int id = register(name, known, noAuth, -1);
    String prefix = name + "|";
    for (Map.Entry<String, Known> e : REDIS.entrySet()) {
      if (e.getKey().startsWith(prefix)) {
        subcommands.computeIfAbsent(name, k -> new ArrayList<>()).add(register(e.getKey(), e.getValue(), noAuth, id));
      }
    }
  }

  /**
   * Ends the server's commands and adds the rest of Redis's, so that rules and ACL files written for Redis
   * ({@code +get}, {@code -@string}) are accepted as Redis accepts them; {@link #inCategory} lists only the
   * server's.
   */
  public AclCommands complete() {
    int end = names.size();
    for (Map.Entry<String, Known> e : REDIS.entrySet()) {
      if (!e.getKey().contains("|") && !ids.containsKey(e.getKey())) {
        registerWithSubcommands(e.getKey(), e.getValue(), false);
      }
    }
    served = end;
    return this;
  }

  private int register(String name, Known known, boolean noAuthCommand, int parent) {
    int id = names.size();
    names.add(name);
    categories.add(known.categories());
    keyAccess.add(known.keyAccess());
    noAuth.add(noAuthCommand);
    parents.add(parent);
    ids.put(name, id);
    return id;
  }

  /** How many commands there are (ids are {@code 0..count()-1}). */
  public int count() {
    return names.size();
  }

  /** The id of a command or {@code container|sub} in any case, or -1. */
  public int id(String fullname) {
    Integer id = ids.get(fullname.toLowerCase(Locale.ROOT));
    return id == null ? -1 : id;
  }

  /** The id of {@code container|sub} for a container command's id and a typed subcommand, or {@code id} itself. */
  public int subcommand(int id, byte[] typed) {
    if (!subcommands.containsKey(names.get(id))) {
      return id;
    }
    int sub = id(names.get(id) + "|" + new String(typed, StandardCharsets.ISO_8859_1));
    return sub < 0 ? id : sub;
  }

  /** Whether the command has subcommands. */
  public boolean container(int id) {
    return subcommands.containsKey(names.get(id));
  }

  /** The id of a subcommand's container, or -1. */
  public int parent(int id) {
    return parents.get(id);
  }

  /** The ids of a container's subcommands (empty for others). */
  public List<Integer> subcommandsOf(int id) {
    return subcommands.getOrDefault(names.get(id), Collections.emptyList());
  }

  public String name(int id) {
    return names.get(id);
  }

  public long categories(int id) {
    return categories.get(id);
  }

  /**
   * The access the {@code ordinal}-th key (from 0) of command {@code id} needs: {@link #READ}, {@link #WRITE}, both,
   * or 0 (no requirement: every key pattern applies).
   */
  public int keyAccess(int id, int ordinal) {
    int[] specs = keyAccess.get(id);
    return specs.length == 0 ? 0 : specs[Math.min(ordinal, specs.length - 1)];
  }

  /** Whether the command runs before authentication (AUTH, HELLO, ...), and so for every user. */
  public boolean noAuth(int id) {
    return noAuth.get(id);
  }

  /** The commands of a category (containers' subcommands listed, as ACL CAT lists them). */
  public List<String> inCategory(long bit) {
    List<String> out = new ArrayList<>();
    for (int id = 0; id < (served < 0 ? names.size() : served); id++) {
      if ((categories.get(id) & bit) != 0) {
        out.add(names.get(id));
      }
    }
    return out;
  }

  private static Map<String, Known> loadRedis() {
    Map<String, Known> out = new LinkedHashMap<>();
    try (InputStream in = AclCommands.class.getResourceAsStream("redis-acl-commands.txt")) {
      if (in == null) {
        throw new IllegalStateException("redis-acl-commands.txt is missing from the class path");
      }
      BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
      for (String line; (line = r.readLine()) != null; ) {
        if (line.isBlank() || line.startsWith("#")) {
          continue;
        }
        String[] f = line.trim().split(" ");
        long cats = 0;
        if (!f[1].equals("-")) {
          for (String c : f[1].split(",")) {
            cats |= categoryBit(c);
          }
        }
        String[] specs = f[2].split(",");
        int[] access = new int[specs.length];
        for (int i = 0; i < specs.length; i++) {
          access[i] = (specs[i].contains("R") ? READ : 0) | (specs[i].contains("W") ? WRITE : 0);
        }
        out.put(f[0].toLowerCase(Locale.ROOT), new Known(cats, access));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }
}
