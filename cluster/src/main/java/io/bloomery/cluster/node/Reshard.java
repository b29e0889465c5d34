package io.bloomery.cluster.node;

import io.bloomery.cluster.shard.ShardClient;
import io.bloomery.cluster.shard.ShardStateMachine;
import io.bloomery.server.resp.Reply;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * How a slot moves, and why nothing acknowledged is lost or applied twice.
 *
 * The topology in the metadata group first records the migration (slots S of shard A going to shard B); A keeps
 * serving S. Then, a step of up to STEP slots at a time, through the shards' own Raft logs:
 *
 *   1. B: cluster.import S   S is neither frozen nor gone on B (it may have left B in an earlier reshard)
 *   2. the guarded keys of S: their declarations read on A (cluster.guarded), declared on B through its log
 *                            (cluster.guard ADOPT), and waited for until B's leader has built them from their store,
 *                            which is their only copy: A serves them meanwhile
 *   3. A: cluster.freeze S   from here on A's log refuses writes to S, and declaration changes of S's guarded keys
 *                            (the node holds them and retries; reads go on), and answers the names of S's keys as of
 *                            that point in A's log; the guarded keys are read again and B made to match
 *   4. the keys: their DUMP payloads and expiries read on A's leader (cluster.export-inline, a few MiB at a
 *                            time; a key of more than 4 MiB in parts of 64 MiB, cluster.export-part), then RESTORE
 *                            ... REPLACE ABSTTL of each through B's log (up to 3 MiB of them per entry; a larger key
 *                            in parts of 3 MiB, one entry each: cluster.stage, the last part restoring it)
 *   5. A: cluster.drop S     S's keys are deleted on A, its guarded keys dropped, and A's log refuses every command
 *                            of S from here on: the node holds such a command until 6, then answers MOVED (ASK to B,
 *                            whose copy is complete, if 6 does not come within a second: the node running the
 *                            reshard died)
 *   6. the metadata group records S as B's: every node answers MOVED to B
 *
 * and the next step begins; the last step ends the migration. Since a write to S is applied on A
 * only before the freeze (and so is in the copy) and on B only after the drop (and so after the copy), each write
 * is applied once, on the copy that stays. A guarded key's adds are decided by its store's unique index wherever
 * they run, and B's leader fences its filter against the store before its first lookup, so neither shard's answers
 * depend on which one served the key when. Each step is idempotent: run again after it stopped anywhere (the node
 * running it died), a gone slot has no keys left to copy, a frozen one is copied again whole (RESTORE REPLACE), so
 * `bloomery cluster reshard` just finishes the migration the topology records. The frozen and gone slots are in
 * every replica's state and snapshot, so a leader change or a restart changes none of this.
 */

/**
 * {@code CLUSTER RESHARD FROM TO COUNT}: moves {@code COUNT} slots (with their keys) from one shard to another, or
 * finishes a move under way. Runs on the node's admin thread; the reply says what was moved.
 */
final class Reshard {
  private static final Logger LOG = LoggerFactory.getLogger(Reshard.class);
  /** Slots frozen, copied and dropped together: writes to them wait for the step's keys to be copied. */
  static final int STEP = 64;
  /** At most this many keys are read in one query and restored in one log entry. */
  static final int BATCH = 256;
  /** About this many bytes of payloads at most in one query's answer (one larger key goes alone). */
  static final long BATCH_BYTES = 4 << 20;
  /**
   * At most this many bytes of payloads in one log entry: Ratis's leader refuses an entry over 4 MiB. A key whose
   * payload is larger goes in parts of this size ({@link ShardStateMachine#STAGE}).
   */
  static final int ENTRY_BYTES = 3 << 20;

  private final RaftNode node;

  Reshard(RaftNode node) {
    this.node = node;
  }

  /**
   * Finishes a migration under way, then moves {@code count} of shard {@code from}'s slots to shard {@code to}
   * ({@code count} 0: only the finishing).
   */
  Reply run(String from, String to, int count) {
    try {
      StringBuilder done = new StringBuilder();
      Topology t = node.committedTopology();
      if (t == null) {
        return Reply.error("ERR this node is in no cluster");
      }
      if (t.migration() != null) {
        done.append(finish(t)).append("; ");
        t = node.committedTopology();
      }
      if (count == 0) {
        return Reply.bulk(done.isEmpty() ? "nothing to move" : done.substring(0, done.length() - 2));
      }
      Topology next;
      try {
        next = t.withMigration(from, to, count);
      } catch (IllegalArgumentException e) {
        return Reply.error("ERR " + e.getMessage());
      }
      String answer = text(node.metaClient().io().send(MetaStateMachine.slotsEntry(t, next)));
      if (!answer.equals("OK")) {
        return Reply.error(answer);
      }
      return Reply.bulk(done.append(finish(next)).toString());
    } catch (ReshardException e) {
      return Reply.error("ERR " + e.getMessage());
    } catch (IOException | RuntimeException e) {
      LOG.warn("reshard failed", e);
      return Reply.error("ERR the reshard stopped: " + e.getMessage() + " (run it again to finish it)");
    }
  }

  /** Moves the slots of {@code t}'s migration, then records them as its target's; says what it moved. */
  private String finish(Topology t) throws IOException {
    Topology.Migration m = t.migration();
    int[] all = m.slotList();
    long keys = 0;
    long start = System.nanoTime();
    Topology current = t;
    org.apache.ratis.protocol.RaftGroup sourceGroup = t.group(t.shard(m.from())).raftGroup();
    try (RaftClient source = RaftNode.clientOf(sourceGroup, 300);
        RaftClient target = RaftNode.clientOf(t.group(t.shard(m.to())).raftGroup(), 300)) {
      for (int at = 0; at < all.length; at += STEP) {
        int[] step = Arrays.copyOfRange(all, at, Math.min(all.length, at + STEP));
        keys += move(sourceGroup, source, target, m, step, node.guardBuildTimeoutMillis());
        current = record(current, m, step);
      }
    }
    String moved = String.format(java.util.Locale.ROOT, "moved %d slots (%d keys) from %s to %s in %.1f s",
        all.length, keys, m.from(), m.to(), (System.nanoTime() - start) / 1e9);
    LOG.info("reshard: {}", moved);
    return moved;
  }

  /**
   * Records a step's slots, dropped on the source, as the target's in the metadata group: from then on every node
   * answers {@code MOVED} for them (commands between the drop and this wait for it).
   * Planned again from the committed topology if another change came first (a membership change). Returns the
   * topology after the step.
   */
  private Topology record(Topology planned, Topology.Migration m, int[] step) throws IOException {
    for (int attempt = 0; ; attempt++) {
      String answer = text(node.metaClient().io().send(MetaStateMachine.slotsEntry(planned, planned.migrated(step))));
      if (answer.equals("OK")) {
        return planned.migrated(step);
      }
      Topology now = node.committedTopology();
      if (now != null && Arrays.stream(step).allMatch(s -> now.shardOf(s).name().equals(m.to()))) {
        return now; // recorded already (a request sent again)
      }
      boolean stillMigrating = now != null && now.migration() != null && now.migration().from().equals(m.from())
          && now.migration().to().equals(m.to()) && Arrays.stream(step).allMatch(now.migration()::covers);
      if (!stillMigrating || attempt >= 3) {
        throw new ReshardException("slots " + step[0] + "-" + step[step.length - 1] + " were moved but the topology "
            + "did not record it (" + answer + "): run the reshard again");
      }
      planned = now;
    }
  }

  /**
   * One step: import, declare the guarded keys on the target (built there from their store while the source still
   * serves them), freeze, declare them again as the frozen source has them, copy every key, drop. Returns the number
   * of keys moved.
   */
  private static long move(org.apache.ratis.protocol.RaftGroup sourceGroup, RaftClient source, RaftClient target,
      Topology.Migration m, int[] slots, long guardBuildMillis) throws IOException {
    expect(call(target, true, command(ShardStateMachine.IMPORT, slots)), m.to());
    Map<String, List<byte[]>> early = guarded(source, m, slots);
    adopt(target, m, early.values(), guardBuildMillis);
    Reply frozen = call(source, true, command(ShardStateMachine.FREEZE, slots));
    if (!(frozen instanceof Reply.Array keys)) {
      throw new ReshardException("shard " + m.from() + " did not freeze slots " + slots[0] + "..: " + frozen);
    }
    long copied = 0;
    try {
      // the freeze holds GUARD.RESERVE and DROP of these slots: this is the declarations' last word
      Map<String, List<byte[]>> declared = guarded(source, m, slots);
      for (Map.Entry<String, List<byte[]>> e : early.entrySet()) {
        List<byte[]> now = declared.get(e.getKey());
        if (now == null || !sameArguments(now, e.getValue())) {
          // dropped (or dropped and reserved again otherwise) before the freeze: the target follows the source
          expect(call(target, true, List.of(bytes(ShardStateMachine.GUARD), bytes("DROP"), e.getValue().get(2))),
              m.to());
        }
      }
      adopt(target, m, declared.values(), guardBuildMillis);
      copied += declared.size();
      List<byte[]> names = new ArrayList<>();
      for (Reply name : keys.elements()) {
        names.add(((Reply.Bulk) name).bytes());
      }
      for (int at = 0; at < names.size(); ) {
        // up to BATCH keys or about BATCH_BYTES of payloads read in one query and restored in one log entry
        List<byte[]> export = new ArrayList<>(List.of(bytes(ShardStateMachine.EXPORT_INLINE),
            bytes(Long.toString(BATCH_BYTES))));
        export.addAll(names.subList(at, Math.min(names.size(), at + BATCH)));
        Reply exported = call(source, false, export);
        if (!(exported instanceof Reply.Array entries) || entries.elements().isEmpty()) {
          throw new ReshardException("shard " + m.from() + " did not export keys: " + exported);
        }
        List<List<byte[]>> restores = new ArrayList<>();
        long restoreBytes = 0;
        for (int i = 0; i < entries.elements().size(); i++) {
          List<Reply> entry = ((Reply.Array) entries.elements().get(i)).elements();
          long expireAt = ((Reply.Int) entry.get(0)).value();
          byte[] name = names.get(at + i);
          if (expireAt != -2 && entry.get(1) instanceof Reply.Int large && large.value() == -1) {
            if (copyLarge(sourceGroup, target, m, name)) {
              copied++;
            }
            continue;
          }
          if (expireAt == -2 || !(entry.get(1) instanceof Reply.Bulk payload)) {
            continue; // expired since the freeze
          }
          if (payload.bytes().length > ENTRY_BYTES) {
            stage(target, m, name, expireAt, payload.bytes().length, 0, payload.bytes());
          } else {
            if (restoreBytes + payload.bytes().length > ENTRY_BYTES) {
              restore(target, m, restores);
              restoreBytes = 0;
            }
            restores.add(List.of(bytes("RESTORE"), name, bytes(Long.toString(Math.max(0, expireAt))),
                payload.bytes(), bytes("REPLACE"), bytes("ABSTTL")));
            restoreBytes += payload.bytes().length;
          }
          copied++;
        }
        at += entries.elements().size();
        restore(target, m, restores);
      }
    } catch (IOException | RuntimeException e) {
      // nothing was dropped: let the slots take writes again until the reshard is run again
      try {
        call(source, true, command(ShardStateMachine.THAW, slots));
      } catch (IOException | RuntimeException again) {
        e.addSuppressed(again);
      }
      throw e;
    }
    Reply dropped = call(source, true, command(ShardStateMachine.DROP, slots));
    if (!(dropped instanceof Reply.Int)) {
      throw new ReshardException("shard " + m.from() + " did not drop slots " + slots[0] + "..: " + dropped);
    }
    return copied;
  }

  /**
   * The guarded keys of {@code slots} on the source, by name: each as the {@code cluster.guard ADOPT} command that
   * declares it alike on the target.
   */
  private static Map<String, List<byte[]>> guarded(RaftClient source, Topology.Migration m, int[] slots)
      throws IOException {
    Reply found = call(source, false, command(ShardStateMachine.GUARDED, slots));
    if (!(found instanceof Reply.Array keys)) {
      throw new ReshardException("shard " + m.from() + " did not list its guarded keys: " + found);
    }
    Map<String, List<byte[]>> adopts = new java.util.LinkedHashMap<>();
    for (Reply key : keys.elements()) {
      List<Reply> d = ((Reply.Array) key).elements();
      List<byte[]> adopt = new ArrayList<>(List.of(bytes(ShardStateMachine.GUARD), bytes("ADOPT")));
      for (Reply field : d) {
        adopt.add(((Reply.Bulk) field).bytes());
      }
      adopts.put(java.util.HexFormat.of().formatHex(adopt.get(2)), adopt);
    }
    return adopts;
  }

  private static boolean sameArguments(List<byte[]> a, List<byte[]> b) {
    if (a.size() != b.size()) {
      return false;
    }
    for (int i = 0; i < a.size(); i++) {
      if (!Arrays.equals(a.get(i), b.get(i))) {
        return false;
      }
    }
    return true;
  }

  /**
   * Declares {@code adopts} (guarded keys) through the target's log, then waits until its leader's node has built
   * each from its store, {@code buildMillis} at most: a key leaves its source only once the target answers for it.
   */
  private static void adopt(RaftClient target, Topology.Migration m, java.util.Collection<List<byte[]>> adopts,
      long buildMillis) throws IOException {
    for (List<byte[]> adopt : adopts) {
      expect(call(target, true, adopt), m.to());
    }
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(buildMillis);
    for (List<byte[]> adopt : adopts) {
      byte[] key = adopt.get(2);
      while (true) {
        Reply state = call(target, false, List.of(bytes(ShardStateMachine.GUARD_READY), key));
        if (state instanceof Reply.Bulk b && new String(b.bytes(), StandardCharsets.UTF_8).equals(
            io.bloomery.cluster.shard.GuardDeclarations.READY)) {
          break;
        }
        if (System.nanoTime() > deadline) {
          throw new ReshardException("guarded key '" + io.bloomery.server.resp.ClientText.escape(
              new String(key, StandardCharsets.UTF_8)) + "' is not built on shard " + m.to() + "'s leader after "
              + buildMillis + " ms (" + (state instanceof Reply.Bulk b ? new String(b.bytes(), StandardCharsets.UTF_8)
              : state) + "); its source still serves it: run the reshard again once it is (GUARD.INFO there shows"
              + " it)");
        }
        try {
          Thread.sleep(100);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IOException("interrupted while waiting for guarded keys to be built", e);
        }
      }
    }
  }

  /** The copies in {@code restores}, as one entry of the target's log; {@code restores} is emptied. */
  private static void restore(RaftClient target, Topology.Migration m, List<List<byte[]>> restores)
      throws IOException {
    if (restores.isEmpty()) {
      return;
    }
    Reply restored = call(target, restores);
    List<Reply> each = restored instanceof Reply.Array a ? a.elements() : List.of(restored);
    for (Reply r : each) {
      expect(r, m.to());
    }
    restores.clear();
  }

  /**
   * Bytes {@code from} onwards of a key's payload of {@code total} bytes, copied in parts of {@link #ENTRY_BYTES},
   * one entry each, in order: the whole payload from 0, or the next bytes of a copy staged so far.
   */
  private static void stage(RaftClient target, Topology.Migration m, byte[] name, long expireAt, long total,
      long from, byte[] bytes) throws IOException {
    for (int offset = 0; offset < bytes.length; offset += ENTRY_BYTES) {
      byte[] part = Arrays.copyOfRange(bytes, offset, Math.min(bytes.length, offset + ENTRY_BYTES));
      expect(call(target, true, List.of(bytes(ShardStateMachine.STAGE), name, bytes(Long.toString(expireAt)),
          bytes(Long.toString(total)), bytes(Long.toString(from + offset)), part)), m.to());
    }
  }

  /**
   * The bytes of a large key's payload read in one answer: {@link ShardStateMachine#EXPORT_PART_MAX} unless the
   * system property {@value #PART_BYTES_PROPERTY} names fewer (less heap on the source's leader per read, one more
   * writing-out of the whole payload per part).
   */
  static int partBytes() {
    int asked = Integer.getInteger(PART_BYTES_PROPERTY, ShardStateMachine.EXPORT_PART_MAX);
    return Math.max(1 << 20, Math.min(ShardStateMachine.EXPORT_PART_MAX, asked));
  }

  /**
   * How long the read of a large key's part may take before it is asked again: it writes the whole payload out,
   * seconds for a key of a GiB, more than Ratis's 3 s, after which the client would ask again and the source write it
   * out again. Only these reads wait so long: a client waiting on a leader just killed waits its whole timeout before
   * it asks another replica, which the reshard's other requests must not.
   */
  static final java.time.Duration PART_READ_TIMEOUT = java.time.Duration.ofMinutes(1);

  /** The system property that sets {@link #partBytes()}. */
  static final String PART_BYTES_PROPERTY = "bloomery.reshard.part-bytes";

  /**
   * A key whose payload is larger than one export answer: read on the source in parts of {@link #partBytes()}, by a
   * client of its own that waits {@link #PART_READ_TIMEOUT} for each (the key's slot is frozen, so every part is of
   * the same payload; the target's CRC check of the whole says so if not), and staged on the target as it comes.
   * False if the key expired meanwhile.
   *
   * @throws ReshardException if the payload is larger than a replica stages (2 GiB) or changed between two parts
   */
  private static boolean copyLarge(org.apache.ratis.protocol.RaftGroup source, RaftClient target,
      Topology.Migration m, byte[] name) throws IOException {
    try (RaftClient parts = RaftNode.clientOf(source, 300, PART_READ_TIMEOUT)) {
      return copyLarge(parts, target, m, name);
    }
  }

  private static boolean copyLarge(RaftClient parts, RaftClient target, Topology.Migration m, byte[] name)
      throws IOException {
    long total = -1;
    long expireAt = -1;
    int partBytes = partBytes();
    for (long offset = 0; total < 0 || offset < total; ) {
      Reply answer = call(parts, false, List.of(bytes(ShardStateMachine.EXPORT_PART), name,
          bytes(Long.toString(offset)), bytes(Integer.toString(partBytes))));
      if (!(answer instanceof Reply.Array a) || a.elements().size() != 3
          || !(a.elements().get(0) instanceof Reply.Int at) || !(a.elements().get(1) instanceof Reply.Int length)) {
        throw new ReshardException("shard " + m.from() + " did not export part of key '"
            + new String(name, StandardCharsets.UTF_8) + "': " + answer);
      }
      if (at.value() == -2) { // expired since the freeze
        if (offset > 0) { // a part of no payload makes the target forget the parts it holds (its reply says so)
          call(target, true, List.of(bytes(ShardStateMachine.STAGE), name, bytes("-1"), bytes("0"), bytes("0"),
              new byte[0]));
        }
        return false;
      }
      if (total < 0) {
        total = length.value();
        expireAt = at.value();
        if (total > ShardStateMachine.STAGED_MAX) {
          throw new ReshardException("key '" + new String(name, StandardCharsets.UTF_8) + "' has a DUMP payload of "
              + total + " bytes: a reshard moves keys of at most " + ShardStateMachine.STAGED_MAX + " (nothing was "
              + "dropped)");
        }
      }
      byte[] bytes = a.elements().get(2) instanceof Reply.Bulk b ? b.bytes() : new byte[0];
      if (length.value() != total || at.value() != expireAt || bytes.length == 0) {
        throw new ReshardException("key '" + new String(name, StandardCharsets.UTF_8) + "' changed while it was "
            + "read in parts (" + total + " bytes, then " + length.value() + "; nothing was dropped)");
      }
      stage(target, m, name, expireAt, total, offset, bytes);
      offset += bytes.length;
    }
    return true;
  }

  private static void expect(Reply reply, String shard) {
    if (reply instanceof Reply.Error e) {
      throw new ReshardException("shard " + shard + " refused a copy: " + e.text() + " (nothing was dropped; run the "
          + "reshard again once that is mended)");
    }
  }

  /** Commands through {@code group}'s log as one entry; the reply is the array of theirs. */
  private static Reply call(RaftClient group, List<List<byte[]>> commands) throws IOException {
    RaftClientReply reply = group.io().send(ShardClient.batchMessage(commands));
    if (!reply.isSuccess()) {
      throw new IOException(String.valueOf(reply.getException()));
    }
    return ShardStateMachine.reply(reply.getMessage());
  }

  /** A command through {@code group}'s leader: a write through its log, a read after it confirmed its leadership. */
  private static Reply call(RaftClient group, boolean write, List<byte[]> argv) throws IOException {
    Message message = ShardClient.message(argv);
    RaftClientReply reply = write ? group.io().send(message) : group.io().sendReadOnly(message);
    if (!reply.isSuccess()) {
      throw new IOException(String.valueOf(reply.getException()));
    }
    return ShardStateMachine.reply(reply.getMessage());
  }

  private static List<byte[]> command(String name, int[] slots) {
    List<byte[]> argv = new ArrayList<>(slots.length + 1);
    argv.add(bytes(name));
    for (int s : slots) {
      argv.add(bytes(Integer.toString(s)));
    }
    return argv;
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String text(RaftClientReply reply) {
    return reply.getMessage().getContent().toStringUtf8();
  }

  /** A reshard that cannot go on, with the reason its client reads. */
  private static final class ReshardException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ReshardException(String message) {
      super(message);
    }
  }
}
