package io.bloomery.cluster.node;

import io.bloomery.cluster.shard.FileSnapshotStateMachine;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.statemachine.TransactionContext;

/**
 * The state machine of a cluster's metadata group, which every node is a member of: the {@link Topology} (set once,
 * by {@code cluster create}) and, for each shard, the latest leader a node announced with its Raft term, so that a
 * node outside a shard can name its leader in {@code MOVED} and {@code CLUSTER SLOTS}.
 *
 * <p>Entries are UTF-8 text: {@code topology\nTEXT} ({@link Topology#encode}), {@code membership DIGEST\nTEXT} (a
 * membership change: the new topology, applied only if the current one's {@link #digest} is {@code DIGEST}, so that
 * of two changes planned from the same topology only the first applies), {@code slots DIGEST\nTEXT} (a reshard's
 * start or the completion of some of its slots, likewise) and {@code leader SHARD TERM NODE}. An
 * announcement with a lower term than the one recorded is ignored, so a deposed leader's late announcement never
 * overwrites its successor's.
 *
 * <p>The log is small (one entry per election or membership change), but it is snapshotted as the shards' logs are,
 * so that Ratis can purge it and bring a new or far-behind member up to date from a snapshot: a UTF-8 file
 * ({@link #encodeState}; {@link FileSnapshotStateMachine} does the Ratis side).
 */
final class MetaStateMachine extends FileSnapshotStateMachine {
  private static final String STATE_HEADER = "bloomery-meta 1";

  /** A shard's leader as announced: the node and the Raft term it leads in. */
  record Leader(String node, long term) {}

  private volatile Topology topology;
  private final Map<String, Leader> leaders = new ConcurrentHashMap<>();

  /** The cluster's topology, or {@code null} before it is created. */
  Topology topology() {
    return topology;
  }

  /** The latest leader announced for {@code shard}, or {@code null}. */
  Leader leader(String shard) {
    return leaders.get(shard);
  }

  static Message topologyEntry(Topology t) {
    return Message.valueOf("topology\n" + t.encode());
  }

  static Message membershipEntry(Topology current, Topology next) {
    return Message.valueOf("membership " + digest(current) + "\n" + next.encode());
  }

  /**
   * A reshard's step: the start of a migration ({@link Topology#withMigration}) or the completion of some of its
   * slots ({@link Topology#migrated(int[])}, the last of them ending it), applied only if the current topology's
   * {@link #digest} is still the one it was planned from.
   */
  static Message slotsEntry(Topology current, Topology next) {
    return Message.valueOf("slots " + digest(current) + "\n" + next.encode());
  }

  /** A topology's SHA-256, hex: what a membership change names as the topology it was planned from. */
  static String digest(Topology t) {
    try {
      return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
          .digest(t.encode().getBytes(StandardCharsets.UTF_8)));
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }

  /** A read of the topology ({@link #query}). */
  static final Message TOPOLOGY_QUERY = Message.valueOf("topology");

  /** Answers {@link #TOPOLOGY_QUERY} with the topology's text (empty before the cluster is created). */
  @Override
  public CompletableFuture<Message> query(Message request) {
    if (!request.getContent().toStringUtf8().equals("topology")) {
      return CompletableFuture.failedFuture(new IllegalArgumentException("not a metadata query"));
    }
    Topology t = topology;
    return CompletableFuture.completedFuture(Message.valueOf(t == null ? "" : t.encode()));
  }

  /** Forgets the cluster: this node left it ({@code CLUSTER LEAVE}). */
  void forget() {
    topology = null;
    leaders.clear();
  }

  // ------------------------------------------------------------------------------------------------ snapshots

  @Override
  protected String writeSnapshot(Path file) throws IOException {
    Path tmp = file.resolveSibling("." + file.getFileName() + ".tmp");
    Files.writeString(tmp, encodeState(topology, leaders), StandardCharsets.UTF_8);
    try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
      ch.force(true);
    }
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    return leaders.size() + " shard leaders, " + (topology == null ? "no topology" : "the topology");
  }

  @Override
  protected String loadSnapshot(Path file) throws IOException {
    if (file == null) {
      return "nothing";
    }
    Map<String, Leader> read = new HashMap<>();
    Topology t;
    try {
      t = decodeState(Files.readString(file, StandardCharsets.UTF_8), read);
    } catch (IllegalArgumentException e) {
      throw new IOException("metadata snapshot " + file + " is damaged: " + e.getMessage(), e);
    }
    leaders.clear();
    leaders.putAll(read);
    topology = t;
    return read.size() + " shard leaders, " + (t == null ? "no topology" : "the topology");
  }

  /**
   * The state as a snapshot holds it: {@code bloomery-meta 1}, a {@code leader SHARD TERM NODE} line per shard, then
   * {@code topology} and the topology's text ({@link Topology#encode}), or {@code none} before the cluster exists.
   */
  static String encodeState(Topology topology, Map<String, Leader> leaders) {
    StringBuilder sb = new StringBuilder(STATE_HEADER).append('\n');
    new java.util.TreeMap<>(leaders).forEach((shard, l) -> sb.append("leader ").append(shard).append(' ')
        .append(l.term()).append(' ').append(l.node()).append('\n'));
    return topology == null ? sb.append("none\n").toString() : sb.append("topology\n").append(topology.encode())
        .toString();
  }

  /**
   * Reads {@link #encodeState}'s text into {@code leaders} and returns its topology ({@code null} for none).
   *
   * @throws IllegalArgumentException if the text is not such a state
   */
  static Topology decodeState(String text, Map<String, Leader> leaders) {
    int at = text.indexOf('\n');
    if (at < 0 || !text.substring(0, at).equals(STATE_HEADER)) {
      throw new IllegalArgumentException("not a metadata snapshot (no \"" + STATE_HEADER + "\" line)");
    }
    while (true) {
      int from = at + 1;
      at = text.indexOf('\n', from);
      String line = at < 0 ? text.substring(from) : text.substring(from, at);
      if (line.equals("none") && (at < 0 || at == text.length() - 1)) {
        return null;
      }
      if (line.equals("topology")) {
        if (at < 0) {
          throw new IllegalArgumentException("the topology is missing");
        }
        return Topology.parse(text.substring(at + 1));
      }
      String[] f = line.split(" ");
      if (f.length != 4 || !f[0].equals("leader") || at < 0) {
        throw new IllegalArgumentException("unexpected line: " + line);
      }
      try {
        leaders.put(f[1], new Leader(f[3], Long.parseLong(f[2])));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("bad term in: " + line, e);
      }
    }
  }

  static Message leaderEntry(String shard, long term, String node) {
    return Message.valueOf("leader " + shard + " " + term + " " + node);
  }

  @Override
  public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
    LogEntryProto entry = trx.getLogEntry();
    String text = entry.getStateMachineLogEntry().getLogData().toString(StandardCharsets.UTF_8);
    String answer;
    try {
      answer = apply(text);
    } catch (IllegalArgumentException e) {
      answer = "ERR " + e.getMessage();
    }
    updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex());
    return CompletableFuture.completedFuture(Message.valueOf(answer));
  }

  String apply(String text) {
    if (text.startsWith("topology\n")) {
      Topology t = Topology.parse(text.substring("topology\n".length()));
      if (topology != null) {
        return topology.equals(t) ? "OK" : "ERR the cluster " + topology.cluster() + " exists already";
      }
      topology = t;
      return "OK";
    }
    if (text.startsWith("membership ")) {
      int newline = text.indexOf('\n');
      String planned = text.substring("membership ".length(), newline < 0 ? text.length() : newline);
      Topology next = Topology.parse(newline < 0 ? "" : text.substring(newline + 1));
      if (topology == null || !topology.sameSlots(next)) {
        return "ERR a membership change keeps the cluster and its shards' slots";
      }
      if (!digest(topology).equals(planned)) {
        return "ERR the topology changed since this change was planned: read it again";
      }
      topology = next;
      return "OK";
    }
    if (text.startsWith("slots ")) {
      int newline = text.indexOf('\n');
      String planned = text.substring("slots ".length(), newline < 0 ? text.length() : newline);
      Topology next = Topology.parse(newline < 0 ? "" : text.substring(newline + 1));
      if (topology == null || !digest(topology).equals(planned)) {
        return "ERR the topology changed since this change was planned: read it again";
      }
      boolean starts = topology.migration() == null && next.migration() != null
          && topology.withMigration(next.migration().from(), next.migration().to(),
              next.migration().slots().stream().mapToInt(r -> r.last() - r.first() + 1).sum()).equals(next);
      int[] part = topology.migratedIn(next);
      boolean steps = part.length > 0 && topology.migrated(part).equals(next);
      if (!starts && !steps) {
        return "ERR a reshard step starts a migration of a shard's highest slots or completes slots of the one under "
            + "way";
      }
      topology = next;
      return "OK";
    }
    String[] f = text.split(" ");
    if (f.length == 4 && f[0].equals("leader")) {
      Leader announced = new Leader(f[3], Long.parseLong(f[2]));
      leaders.merge(f[1], announced, (old, now) -> now.term() >= old.term() ? now : old);
      return "OK";
    }
    throw new IllegalArgumentException("not a metadata entry: " + text.lines().findFirst().orElse(""));
  }
}
