package io.bloomery.cluster.shard;

import io.bloomery.server.state.ClientState;
import io.bloomery.server.CommandFamilies;
import io.bloomery.server.command.CommandSpec;
import io.bloomery.server.command.Dispatcher;
import io.bloomery.server.command.Errors;
import io.bloomery.server.state.ServerContext;
import io.bloomery.server.state.Settings;
import io.bloomery.server.keyspace.CommandClock;
import io.bloomery.server.keyspace.Keyspace;
import io.bloomery.server.persistence.SnapshotFiles;
import io.bloomery.server.resp.Reply;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/*
 * How a shard's replicas stay identical.
 *
 * Ratis calls applyTransaction for committed entries in log order, one at a time, on every replica; the entry is
 * applied there through the server's own Dispatcher and command handlers, so a command means in a cluster exactly
 * what it means on one node. What the entry carries besides argv (ShardCommand) is what the result would otherwise
 * take from the replica: the leader's clock (pinned with CommandClock while the entry applies, and the keyspace's
 * clock is CommandClock) and the module defaults. The settings the entries apply under are the state machine's own,
 * with no memory limit: an entry that committed must apply the same way everywhere.
 *
 * A client's write is acknowledged by Ratis with the reply of the leader's apply, which happens only after the entry
 * is committed (a majority has it in its log, forced to disk). The log, not this class, is what survives a crash:
 * the keyspace is rebuilt on start from the latest snapshot plus the log after it.
 *
 * Snapshots are the server's snapshot files (SnapshotFiles), named by Ratis's SimpleStateMachineStorage after the
 * term and index of the last entry they contain, with an MD5 beside them that Ratis checks when it ships a snapshot
 * to a follower whose log the leader has purged. Ratis takes them on the thread that applies entries, so a
 * snapshot's cut is exactly the last applied index; the keyspace's copy-on-write cut lets reads go on meanwhile.
 */

/**
 * The Raft state machine of one shard: a server {@link Keyspace} that committed {@link ShardCommand}s are applied
 * to, snapshotted as the server's snapshot file. Mutating commands go through the log ({@link #replicates}); reads
 * ({@link #reads}) are answered from the keyspace by {@link #query}, after the leader confirmed its leadership for
 * linearizable reads.
 */
public final class ShardStateMachine extends FileSnapshotStateMachine {

  /**
   * {@code cluster.freeze SLOT...}: a reshard starts copying these slots' keys elsewhere: from here on the log refuses
   * writes to them ({@link #FROZEN}); answers the names of their keys. A gone slot stays gone and has no keys.
   */
  public static final String FREEZE = "cluster.freeze";
  /**
   * {@code cluster.drop SLOT...}: the frozen slots' keys were copied to their new shard: they are deleted here, and
   * from here on the log refuses every command for these slots ({@link #GONE}); answers how many keys it deleted. A
   * gone slot is left as it is; a slot neither frozen nor gone is refused, and nothing is dropped.
   */
  public static final String DROP = "cluster.drop";
  /** {@code cluster.import SLOT...}: a reshard moves these slots here: they are neither frozen nor gone any more. */
  public static final String IMPORT = "cluster.import";
  /** {@code cluster.thaw SLOT...}: a reshard stopped before it dropped these slots: they take writes again. */
  public static final String THAW = "cluster.thaw";
  /**
   * {@code cluster.export BUDGET KEY...}, a read: for each key in order, an array of its absolute expiry in Unix
   * milliseconds (-1 none, -2 no such key) and its {@code DUMP} payload (nil for none), stopping after the key whose
   * payload brings the total past BUDGET bytes (so at least one key). What a reshard run by a node of an earlier
   * version reads: {@link #EXPORT_INLINE} is this one's.
   */
  public static final String EXPORT = "cluster.export";
  /**
   * {@code cluster.export-inline BUDGET KEY...}, a read: as {@link #EXPORT}, but a payload of more than {@link
   * #EXPORT_INLINE_MAX} bytes is answered as the integer -1, and read with {@link #EXPORT_PART}; a reshard copies
   * the keys it names. (A name of its own, so that no reshard that does not know the -1 takes it for a missing key.)
   */
  public static final String EXPORT_INLINE = "cluster.export-inline";
  /**
   * {@code cluster.export-part KEY OFFSET LENGTH}, a read: an array of the key's absolute expiry (as {@link #EXPORT}'s),
   * the length of its {@code DUMP} payload (0 for no key) and the payload's bytes from OFFSET, at most LENGTH of them
   * (at most {@link #EXPORT_PART_MAX}). A reshard reads a large key of a frozen slot so, a part at a time; the
   * payload is written out whole for each part.
   */
  public static final String EXPORT_PART = "cluster.export-part";
  /**
   * The largest payload an {@link #EXPORT_INLINE} answer carries for one key: a larger one is read with {@link #EXPORT_PART}
   * (it goes through the target's log in parts anyway), so that no export holds much more than this in memory.
   */
  public static final int EXPORT_INLINE_MAX = 4 << 20;
  /**
   * The largest part {@link #EXPORT_PART} reads: far below the 520 MiB a cluster's gRPC messages may carry, so that
   * a part, its copy into the message and the message fit a node's heap beside the key; large enough that a payload
   * of 2 GiB, written out whole for each part, is read in 32 parts.
   */
  public static final int EXPORT_PART_MAX = 64 << 20;
  /** The largest payload {@link #STAGE} takes: what a Java array holds. */
  public static final long STAGED_MAX = StagedCopies.MAX_TOTAL;
  /**
   * {@code cluster.stage KEY EXPIREAT TOTAL OFFSET BYTES}: part of a key's {@code DUMP} payload of TOTAL bytes, sent
   * by a reshard when the key is too large for one log entry, in order from OFFSET 0 (which starts the copy again);
   * the part that completes it restores the key ({@code RESTORE KEY EXPIREAT PAYLOAD REPLACE ABSTTL}, EXPIREAT -1 for
   * none) and answers as that would; the others answer {@code OK}. A part that does not follow the last one is
   * refused and the copy forgotten ({@link StagedCopies}).
   */
  public static final String STAGE = "cluster.stage";
  /**
   * {@code cluster.part ID STARTED TOTAL OFFSET BYTES}: part of a client's write too large for one log entry (a
   * {@code RESTORE} of a large key, a large transaction): the bytes of its request ({@link ShardCommand#encodeBatch})
   * of TOTAL bytes, sent in order from OFFSET 0 by the node that leads the shard, ID that node's name for the write
   * and STARTED when it sent the first part (its clock, in Unix milliseconds). The part that completes the request
   * applies its commands, with nothing between them, and answers the array of their replies; the others answer
   * {@code OK}. A part that does not follow the last one is refused and the write forgotten; so is a write whose parts
   * did not all come within {@link #PART_WINDOW_MILLIS} of STARTED (by the leaders' clocks stamped on the entries):
   * nothing of a forgotten write is applied.
   */
  public static final String PART = "cluster.part";
  /** How long after its first part a client's large write may still be completed ({@link #PART}). */
  public static final long PART_WINDOW_MILLIS = 10 * 60 * 1000;
  /**
   * {@code cluster.guard RESERVE KEY STORE ERROR_RATE CAPACITY}, {@code cluster.guard DROP KEY} or {@code
   * cluster.guard REBUILD KEY}: declares or drops a guarded key ({@link GuardDeclarations}), or has it rebuilt;
   * every replica's node then opens, drops or rebuilds its own guard of it. A name already taken (guarded, or a key
   * of the keyspace) is refused as GUARD.RESERVE refuses it. {@code cluster.guard ADOPT KEY STORE ERROR_RATE
   * CAPACITY} is a reshard's RESERVE of a key moving here: the same declaration made again is accepted.
   */
  public static final String GUARD = "cluster.guard";
  /**
   * {@code cluster.guarded SLOT...}, a read: the guarded keys of these slots, each as an array of its name, store,
   * error rate and capacity (what a reshard declares on the shard it moves them to).
   */
  public static final String GUARDED = "cluster.guarded";
  /**
   * {@code cluster.guard-ready KEY}, a read: whether this replica's node has built its guard of the key: {@code
   * ready}, or what it is doing instead ({@code building}, or why it failed). A reshard waits for the target's
   * leader to be ready before the key leaves its source, so that no lookup meets a guard still being built.
   */
  public static final String GUARD_READY = "cluster.guard-ready";
  /** The error reply, for the node only, to a write of a frozen slot: nothing was applied; try again shortly. */
  public static final String FROZEN = "BLOOMERY-FROZEN";
  /** The error reply, for the node only, to a command of a gone slot: nothing was applied; redirect it. */
  public static final String GONE = "BLOOMERY-GONE";

  private final Keyspace keyspace = new Keyspace(CommandClock::now);
  private final SlotStates slots = new SlotStates();
  private final StagedCopies staged = new StagedCopies(StagedCopies.COPIES);
  private final StagedCopies writes = new StagedCopies(StagedCopies.WRITES);
  private final GuardDeclarations guarded;
  private final Settings applied = new Settings();
  private final Settings node;
  private final Dispatcher dispatcher;
  private final ClientState applier = new ClientState(0, "raft-log", "raft-log", 0, true);
  /** Held shared by queries and exclusively while a snapshot replaces the keyspace, which no query may see half done. */
  private final ReentrantReadWriteLock loading = new ReentrantReadWriteLock();

  /**
   * @param node this replica's settings: when it leads, the module defaults it stamps on the commands it accepts
   */
  public ShardStateMachine(Settings node) {
    this(node, GuardDeclarations.Listener.NONE);
  }

  /**
   * @param node this replica's settings: when it leads, the module defaults it stamps on the commands it accepts
   * @param guards what this replica's node does as guarded keys are declared and dropped
   */
  public ShardStateMachine(Settings node, GuardDeclarations.Listener guards) {
    this.node = Objects.requireNonNull(node, "node");
    this.applied.maxmemory(0);
    this.guarded = new GuardDeclarations(guards);
    this.dispatcher = CommandFamilies.dispatcher(ServerContext.builder(keyspace, applied).guards(guarded).build());
  }

  /** The guarded keys the shard's log declared. */
  public GuardDeclarations guarded() {
    return guarded;
  }

  /** The replica's keyspace: the state every committed entry has been applied to. */
  public Keyspace keyspace() {
    return keyspace;
  }

  /**
   * Whether a shard's log carries {@code spec}: a command that changes the keyspace (the {@code write} flag), runs
   * to its end on the thread that applies it and means the same on every replica. Not: transactions (MULTI/EXEC run
   * per connection) and GUARD.* (its store commit is the truth, and only a leader may talk to the store).
   * {@code BF.LOADCHUNK} is carried for RedisBloom's chunks and whole Bloomery files, not for a Bloomery file's header
   * that more chunks follow ({@link #stagesAFile}).
   */
  public static boolean replicates(CommandSpec spec) {
    return spec != null && spec.flags().contains(CommandSpec.Flag.WRITE)
        && !spec.flags().contains(CommandSpec.Flag.NOMULTI) && !"guard".equals(spec.group());
  }

  /**
   * Whether {@code argv} is a {@code BF.LOADCHUNK} that begins loading a Bloomery file in more chunks than this one
   * (what {@code BF.SCANDUMP} of a fixed or blocked filter sends): staging it in a node's own directory is no entry
   * every replica can replay alike, so the log carries the file only whole, in one {@code BF.LOADCHUNK key 1 FILE},
   * which the node leading the key's shard sends once it has every chunk. RedisBloom's chunks load through the log.
   */
  private static boolean stagesAFile(List<byte[]> argv) {
    return argv.size() == 4 && name(argv).equalsIgnoreCase("bf.loadchunk")
        && io.bloomery.server.persistence.load.FileLoads.isFileHeader(argv.get(3))
        && !io.bloomery.server.persistence.load.FileLoads.isWholeFile(argv.get(3));
  }

  /** Whether {@code spec} only reads the keyspace (the {@code readonly} flag), so a replica may answer it alone. */
  public static boolean reads(CommandSpec spec) {
    return spec != null && spec.flags().contains(CommandSpec.Flag.READONLY)
        && !spec.flags().contains(CommandSpec.Flag.WRITE);
  }

  /** The command table entries are checked against. */
  public CommandSpec spec(byte[] name) {
    return dispatcher.table().get(name);
  }

  /**
   * Replaces the keyspace and the slots' state with {@code file}'s (none for {@code null}); no query sees it half
   * done.
   */
  @Override
  protected String loadSnapshot(Path file) throws IOException {
    loading.writeLock().lock();
    try {
      try (Keyspace.Write all = keyspace.writeAll()) {
        all.clear();
      }
      slots.clear();
      staged.clear();
      writes.clear();
      if (file == null) {
        guarded.replace(null);
        return "no keys";
      }
      byte[][] declarations = new byte[1][];
      String loaded = SnapshotFiles.read(file, new io.bloomery.server.persistence.KeyLoader() {
        @Override
        public void load(byte[] key, Object value, long expireAtMillis) {
          keyspace.restore(key, value, expireAtMillis);
        }

        @Override
        public void metadata(byte[] name, byte[] bytes) {
          String what = new String(name, java.nio.charset.StandardCharsets.UTF_8);
          if (what.equals(SlotStates.METADATA)) {
            slots.decode(bytes);
          } else if (what.equals(staged.metadata())) {
            staged.decode(bytes);
          } else if (what.equals(writes.metadata())) {
            writes.decode(bytes);
          } else if (what.equals(GuardDeclarations.METADATA)) {
            declarations[0] = bytes;
          }
        }
      }) + " keys";
      guarded.replace(declarations[0]);
      return loaded;
    } finally {
      loading.writeLock().unlock();
    }
  }

  /**
   * The server's snapshot file of the keyspace, with the slots' state as metadata when a reshard froze or dropped
   * any: its copy-on-write cut lets reads go on meanwhile. Taken on the thread that applies entries, so the slots'
   * state does not change while it is written.
   */
  @Override
  protected String writeSnapshot(Path file) throws IOException {
    return SnapshotFiles.write((atCut, sink) -> {
      keyspace.snapshot(atCut, sink);
      byte[] state = slots.encode();
      if (state != null) {
        sink.metadata(SlotStates.METADATA.getBytes(java.nio.charset.StandardCharsets.UTF_8), state);
      }
      for (StagedCopies parts : List.of(staged, writes)) {
        for (byte[] part : parts.encode()) {
          sink.metadata(parts.metadata().getBytes(java.nio.charset.StandardCharsets.UTF_8), part);
        }
      }
      byte[] declared = guarded.encode();
      if (declared != null) {
        sink.metadata(GuardDeclarations.METADATA.getBytes(java.nio.charset.StandardCharsets.UTF_8), declared);
      }
    }, file, System::currentTimeMillis) + " keys";
  }

  /** Whether a reshard froze {@code slot} here: its writes are refused until it is dropped. */
  public boolean frozen(int slot) {
    return slots.any() && slots.frozen(slot);
  }

  /** Whether a reshard moved {@code slot} away from here: every command of it is refused. */
  public boolean gone(int slot) {
    return slots.any() && slots.gone(slot);
  }

  /**
   * On the leader, before the command (or batch, {@link ShardCommand}) enters the log: checks that the log carries
   * every command, refuses a lone {@code denyoom} command while the shard's keys hold more than this node's
   * {@code maxmemory} ({@link #refusal}; a batch's sender checks each of its commands before it batches them), and
   * stamps the leader's clock and module defaults on the entry. A refused request fails without an entry.
   */
  @Override
  public TransactionContext startTransaction(RaftClientRequest request) {
    TransactionContext.Builder trx = TransactionContext.newBuilder().setStateMachine(this).setClientRequest(request);
    ShardCommand.Request commands;
    try {
      commands = ShardCommand.decodeRequest(request.getMessage().getContent().asReadOnlyByteBuffer());
      boolean restoresOnly = commands.commands().stream().allMatch(argv -> name(argv).equalsIgnoreCase("restore"));
      for (List<byte[]> argv : commands.commands()) {
        CommandSpec spec = spec(argv.get(0));
        if (internal(argv) != null) {
          continue;
        }
        if (name(argv).equals(GUARD)) {
          guardCommand(argv);
          continue;
        }
        if (name(argv).equals(PART)) {
          stageNumbers(argv); // its sender checked the write's commands before it split the write
          continue;
        }
        if (name(argv).equals(STAGE)) {
          // the first part of a large key's copy is checked as its RESTORE would be
          String refused = stageNumbers(argv)[2] == 0 ? refusal(spec(bytes("RESTORE"))) : null;
          if (refused != null) {
            throw new RefusedException(refused);
          }
          continue;
        }
        if (!replicates(spec) && !(commands.batch() && reads(spec)) || stagesAFile(argv)) {
          // a transaction's reads go with its writes
          throw new IllegalArgumentException("a shard's log does not carry " + name(argv));
        }
        // A batch's sender checked each of its commands, except a reshard's batch of copies: one of RESTOREs only is
        // checked here (every RESTORE of it would be refused alone too: the check depends only on the memory used)
        String refused = commands.batch() && !restoresOnly ? null : refusal(spec);
        if (refused != null) {
          throw new RefusedException(refused);
        }
      }
    } catch (IllegalArgumentException | RefusedException e) {
      TransactionContext refused = trx.build();
      refused.setException(e);
      return refused;
    }
    ShardCommand command = ShardCommand.of(System.currentTimeMillis(), ShardCommand.ModuleDefaults.of(node), commands);
    return trx.setLogData(ByteString.copyFrom(command.encode())).build();
  }

  /**
   * The error reply the leader gives instead of accepting {@code spec} into the log, or {@code null} to accept it:
   * Redis's {@code OOM ...} for a {@code denyoom} command while the shard's keys hold more than this node's
   * {@code maxmemory} (as Redis refuses it before it runs). The check is the leader's alone, so every replica applies
   * the same entries.
   */
  public String refusal(CommandSpec spec) {
    long max = node.maxmemory();
    return max > 0 && spec.has(CommandSpec.Flag.DENYOOM) && keyspace.usedBytes() > max ? Errors.OOM : null;
  }

  /**
   * {@link #refusal} of a command that makes a value of {@code bytes}: refused too when the shard's keys and that value
   * would hold more than this node's {@code maxmemory}, as a single node admits a filter it allocates.
   */
  public String refusal(CommandSpec spec, long bytes) {
    String refused = refusal(spec);
    long max = node.maxmemory();
    return refused != null || max <= 0 || keyspace.usedBytes() + bytes <= max ? refused : Errors.OOM;
  }

  /**
   * A command the leader refuses before it enters the log, with the error reply the client gets verbatim (Redis's
   * {@code OOM ...} when the shard's keys hold more than the leader's {@code maxmemory}).
   */
  public static final class RefusedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    RefusedException(String reply) {
      super(reply, null, false, false);
    }
  }

  /**
   * Applies one committed entry and answers its reply ({@link ReplyCodec}): the command's, or for a batch an array of
   * its commands' replies in order.
   */
  @Override
  public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
    LogEntryProto entry = trx.getLogEntry();
    ShardCommand command;
    try {
      command = ShardCommand.decode(entry.getStateMachineLogEntry().getLogData().asReadOnlyByteBuffer());
    } catch (IllegalArgumentException e) {
      // Only a leader that validated it appends an entry: one that does not decode is a log this build cannot read.
      return CompletableFuture.failedFuture(new IllegalStateException("log entry " + TermIndex.valueOf(entry)
          + " is not a shard command: " + e.getMessage(), e));
    }
    command.defaults().applyTo(applied);
    if (!writes.isEmpty()) {
      writes.forgetStampedBefore(command.timeMillis() - PART_WINDOW_MILLIS);
    }
    Reply reply = CommandClock.at(command.timeMillis(), () -> {
      return command.batch() ? applyAll(command.commands()) : apply(command.argv());
    });
    updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex());
    return CompletableFuture.completedFuture(message(reply));
  }

  /** {@link #apply} at the leader's clock {@code timeMillis}, as an entry's command is: for tests of one replica. */
  Reply applyAt(long timeMillis, List<byte[]> argv) {
    return CommandClock.at(timeMillis, () -> apply(argv));
  }

  /** A batch's commands in order, nothing between them: the array of their replies. */
  private Reply applyAll(List<List<byte[]>> commands) {
    List<Reply> replies = new ArrayList<>(commands.size());
    for (List<byte[]> argv : commands) {
      replies.add(apply(argv));
    }
    return new Reply.Array(replies);
  }

  /** One command of an entry: a reshard's, or a client's unless its slot is frozen (a write) or gone. */
  private Reply apply(List<byte[]> argv) {
    String internal = internal(argv);
    if (internal != null) {
      return reshard(internal, argv);
    }
    if (name(argv).equals(STAGE)) {
      return stage(argv);
    }
    if (name(argv).equals(PART)) {
      return part(argv);
    }
    if (name(argv).equals(GUARD)) {
      return guard(argv);
    }
    if (slots.any()) {
      CommandSpec spec = spec(argv.get(0));
      int slot = slotOf(spec, argv);
      if (slot >= 0 && slots.gone(slot)) {
        return new Reply.Error(GONE);
      }
      if (slot >= 0 && slots.frozen(slot) && replicates(spec)) {
        return new Reply.Error(FROZEN);
      }
    }
    return dispatcher.execute(applier, argv).reply();
  }

  /** The slot of {@code argv}'s first key, or -1 for a keyless command. */
  private static int slotOf(CommandSpec spec, List<byte[]> argv) {
    if (spec == null) {
      return -1;
    }
    List<io.bloomery.server.keyspace.Key> keys = Dispatcher.keysOf(spec, argv);
    return keys.isEmpty() ? -1 : io.bloomery.cluster.slot.HashSlot.of(keys.get(0).bytes());
  }

  /** {@link #FREEZE}, {@link #DROP}, {@link #IMPORT} or {@link #THAW} for a reshard's command with valid slots, else {@code null}. */
  private static String internal(List<byte[]> argv) {
    String name = name(argv);
    if (!name.equals(FREEZE) && !name.equals(DROP) && !name.equals(IMPORT) && !name.equals(THAW)) {
      return null;
    }
    for (int i = 1; i < argv.size(); i++) {
      Integer slot = parseSlot(argv.get(i));
      if (slot == null) {
        throw new IllegalArgumentException(name + ": '" + new String(argv.get(i), java.nio.charset.StandardCharsets.UTF_8)
            + "' is not a slot");
      }
    }
    return argv.size() > 1 ? name : null;
  }

  private static Integer parseSlot(byte[] arg) {
    try {
      int slot = Integer.parseInt(new String(arg, java.nio.charset.StandardCharsets.US_ASCII));
      return slot >= 0 && slot < io.bloomery.cluster.slot.HashSlot.SLOTS ? slot : null;
    } catch (NumberFormatException e) {
      return null;
    }
  }

  private Reply reshard(String name, List<byte[]> argv) {
    java.util.BitSet given = new java.util.BitSet();
    for (int i = 1; i < argv.size(); i++) {
      given.set(parseSlot(argv.get(i)));
    }
    switch (name) {
      case IMPORT -> {
        given.stream().forEach(slots::arrive);
        staged.forget(given);
        return Reply.OK;
      }
      case THAW -> {
        given.stream().forEach(slots::thaw);
        return Reply.OK;
      }
      case FREEZE -> {
        given.stream().filter(s -> !slots.gone(s)).forEach(slots::freeze);
        List<Reply> names = new ArrayList<>();
        for (io.bloomery.server.keyspace.Key k : keysIn(given)) {
          names.add(Reply.bulk(k.bytes()));
        }
        return new Reply.Array(names);
      }
      default -> {
        for (int s = given.nextSetBit(0); s >= 0; s = given.nextSetBit(s + 1)) {
          if (!slots.gone(s) && !slots.frozen(s)) {
            return new Reply.Error("ERR slot " + s + " is not frozen: freeze it and copy its keys first");
          }
        }
        List<io.bloomery.server.keyspace.Key> keys = keysIn(given);
        try (Keyspace.Write w = keyspace.write(keys)) {
          for (io.bloomery.server.keyspace.Key k : keys) {
            w.remove(k);
          }
        }
        // the guarded keys went with the reshard too (declared on the target): each node here drops its own guard
        // and replication slot of them; their rows stay in the store
        List<io.bloomery.server.keyspace.Key> guardedKeys = guarded.in(given);
        guardedKeys.forEach(guarded::moved);
        given.stream().forEach(slots::drop);
        return Reply.integer(keys.size() + guardedKeys.size());
      }
    }
  }

  /**
   * {@link #GUARD}'s declaration: RESERVE's store, error rate and capacity ({@code null} for DROP and REBUILD); a
   * request of any other shape is refused.
   */
  private static GuardDeclarations.Declaration guardCommand(List<byte[]> argv) {
    String verb = guardVerb(argv);
    if ((verb.equals("DROP") || verb.equals("REBUILD")) && argv.size() == 3) {
      return null;
    }
    if (!(verb.equals("RESERVE") || verb.equals("ADOPT")) || argv.size() != 6) {
      throw new IllegalArgumentException(GUARD + " RESERVE|ADOPT KEY STORE ERROR_RATE CAPACITY, " + GUARD
          + " DROP KEY or " + GUARD + " REBUILD KEY");
    }
    try {
      double rate = Double.parseDouble(new String(argv.get(4), java.nio.charset.StandardCharsets.US_ASCII));
      long capacity = Long.parseLong(new String(argv.get(5), java.nio.charset.StandardCharsets.US_ASCII));
      if (!(rate > 0 && rate < 1) || capacity <= 0) {
        throw new IllegalArgumentException(GUARD + ": error rate " + rate + " or capacity " + capacity
            + " out of range");
      }
      return new GuardDeclarations.Declaration(new String(argv.get(3), java.nio.charset.StandardCharsets.UTF_8),
          rate, capacity);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(GUARD + ": the error rate or capacity is not a number");
    }
  }

  private static String guardVerb(List<byte[]> argv) {
    return argv.size() > 1 ? new String(argv.get(1), java.nio.charset.StandardCharsets.UTF_8) : "";
  }

  /** {@link #GUARD}'s reply. */
  private Reply guard(List<byte[]> argv) {
    GuardDeclarations.Declaration d;
    try {
      d = guardCommand(argv);
    } catch (IllegalArgumentException e) {
      return new Reply.Error("ERR " + e.getMessage());
    }
    io.bloomery.server.keyspace.Key key = io.bloomery.server.keyspace.Key.of(argv.get(2));
    int slot = io.bloomery.cluster.slot.HashSlot.of(key.bytes());
    if (slots.any() && slots.gone(slot)) {
      return new Reply.Error(GONE);
    }
    if (slots.any() && slots.frozen(slot)) {
      return new Reply.Error(FROZEN);
    }
    if (d == null) {
      if (!guarded.isGuarded(key)) {
        return new Reply.Error("ERR no such guarded key (create it with GUARD.RESERVE key store error_rate capacity)");
      }
      if (guardVerb(argv).equals("REBUILD")) {
        guarded.rebuild(key);
      } else {
        guarded.drop(key);
      }
      return Reply.OK;
    }
    GuardDeclarations.Declaration had = guarded.get(key);
    if (had != null) {
      if (!guardVerb(argv).equals("ADOPT")) {
        return new Reply.Error("ERR item exists");
      }
      return had.equals(d) ? Reply.OK : new Reply.Error("ERR item exists (guarded with another store or sizing: "
          + had + ")");
    }
    if (keyspace.peek(key) != null) {
      return new Reply.Error("ERR item exists (a key of another type has this name)");
    }
    guarded.declare(key, d);
    return Reply.OK;
  }

  /**
   * {@link #STAGE}'s numbers (EXPIREAT, TOTAL and OFFSET) or {@link #PART}'s (STARTED, TOTAL and OFFSET); a request of
   * any other shape is refused.
   */
  private static long[] stageNumbers(List<byte[]> argv) {
    if (argv.size() != 6) {
      throw new IllegalArgumentException(name(argv) + (name(argv).equals(PART) ? " ID STARTED" : " KEY EXPIREAT")
          + " TOTAL OFFSET BYTES: " + (argv.size() - 1) + " arguments");
    }
    long[] n = new long[3];
    for (int i = 0; i < 3; i++) {
      try {
        n[i] = Long.parseLong(new String(argv.get(2 + i), java.nio.charset.StandardCharsets.US_ASCII));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(name(argv) + ": '" + new String(argv.get(2 + i),
            java.nio.charset.StandardCharsets.UTF_8) + "' is not an integer");
      }
    }
    return n;
  }

  /** {@link #STAGE}'s reply. */
  private Reply stage(List<byte[]> argv) {
    byte[] whole;
    long expireAt;
    try {
      long[] n = stageNumbers(argv);
      expireAt = n[0];
      whole = staged.part(io.bloomery.server.keyspace.Key.of(argv.get(1)), n[0], n[1], n[2], argv.get(5));
    } catch (IllegalArgumentException e) {
      return new Reply.Error("ERR " + e.getMessage());
    }
    if (whole == null) {
      return Reply.OK;
    }
    return dispatcher.execute(applier, List.of(bytes("RESTORE"), argv.get(1),
        bytes(Long.toString(Math.max(0, expireAt))), whole, bytes("REPLACE"), bytes("ABSTTL"))).reply();
  }

  /** {@link #PART}'s reply. */
  private Reply part(List<byte[]> argv) {
    byte[] whole;
    try {
      long[] n = stageNumbers(argv);
      whole = writes.part(io.bloomery.server.keyspace.Key.of(argv.get(1)), n[0], n[1], n[2], argv.get(5));
    } catch (IllegalArgumentException e) {
      return new Reply.Error("ERR " + e.getMessage() + ": nothing of the write was applied");
    }
    if (whole == null) {
      return Reply.OK;
    }
    ShardCommand.Request request;
    try {
      request = ShardCommand.decodeRequest(java.nio.ByteBuffer.wrap(whole));
    } catch (IllegalArgumentException e) {
      return new Reply.Error("ERR " + PART + ": the parts do not make a request (" + e.getMessage()
          + "): nothing of the write was applied");
    }
    return applyAll(request.commands());
  }

  private static byte[] bytes(String s) {
    return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }

  /** {@link #EXPORT}'s reply ({@code inlineMax} {@link Integer#MAX_VALUE}) or {@link #EXPORT_INLINE}'s. */
  private Reply export(List<byte[]> argv, int inlineMax) {
    long budget;
    try {
      budget = Long.parseLong(name(argv.subList(1, 2)));
    } catch (NumberFormatException e) {
      return new Reply.Error("ERR " + name(argv) + " BUDGET KEY...: the budget is not an integer");
    }
    List<Reply> out = new ArrayList<>();
    long bytes = 0;
    for (int i = 2; i < argv.size() && (out.isEmpty() || bytes <= budget); i++) {
      io.bloomery.server.keyspace.Key key = io.bloomery.server.keyspace.Key.of(argv.get(i));
      Reply payload;
      try {
        payload = keyspace.readLocked(key, value -> {
          if (value == null) {
            return null;
          }
          byte[] inline = inlineMax == Integer.MAX_VALUE ? io.bloomery.server.rdb.DumpPayload.dump(value)
              : io.bloomery.server.rdb.DumpPayload.dumpAtMost(value, inlineMax);
          return inline == null ? new Reply.Int(-1) : new Reply.Bulk(inline);
        });
      } catch (IllegalArgumentException e) {
        return new Reply.Error("ERR " + name(argv) + ": key '" + new String(argv.get(i), StandardCharsets.UTF_8)
            + "': " + e.getMessage());
      }
      long expireAt = payload == null ? -2 : keyspace.expireAt(key);
      out.add(new Reply.Array(List.of(new Reply.Int(expireAt), payload == null ? Reply.NIL : payload)));
      bytes += payload instanceof Reply.Bulk b ? b.bytes().length : payload == null ? 0 : inlineMax;
    }
    return new Reply.Array(out);
  }

  /** {@link #EXPORT_PART}'s reply. */
  private Reply exportPart(List<byte[]> argv) {
    long offset;
    long length;
    try {
      offset = Long.parseLong(new String(argv.get(2), StandardCharsets.UTF_8));
      length = Long.parseLong(new String(argv.get(3), StandardCharsets.UTF_8));
    } catch (NumberFormatException e) {
      offset = -1;
      length = -1;
    }
    if (offset < 0 || length < 0 || length > EXPORT_PART_MAX) {
      return new Reply.Error("ERR " + EXPORT_PART + " KEY OFFSET LENGTH: OFFSET is an integer from 0, LENGTH one "
          + "from 0 to " + EXPORT_PART_MAX);
    }
    io.bloomery.server.keyspace.Key key = io.bloomery.server.keyspace.Key.of(argv.get(1));
    long from = offset;
    int most = (int) length;
    io.bloomery.server.rdb.DumpPayload.Part part;
    try {
      part = keyspace.readLocked(key, value -> value == null ? null
          : io.bloomery.server.rdb.DumpPayload.part(value, from, most));
    } catch (IllegalArgumentException e) {
      return new Reply.Error("ERR " + EXPORT_PART + ": key '" + new String(argv.get(1), StandardCharsets.UTF_8)
          + "': " + e.getMessage());
    }
    if (part == null) {
      return Reply.arrayOf(new Reply.Int(-2), new Reply.Int(0), Reply.NIL);
    }
    return Reply.arrayOf(new Reply.Int(keyspace.expireAt(key)), new Reply.Int(part.total()),
        new Reply.Bulk(part.bytes()));
  }

  /** The keys of the slots in {@code given}. */
  private List<io.bloomery.server.keyspace.Key> keysIn(java.util.BitSet given) {
    List<io.bloomery.server.keyspace.Key> out = new ArrayList<>();
    for (io.bloomery.server.keyspace.Key k : keyspace.keys()) {
      if (given.get(io.bloomery.cluster.slot.HashSlot.of(k.bytes()))) {
        out.add(k);
      }
    }
    return out;
  }

  /**
   * Answers a read-only command from the keyspace as this replica has applied it. Anything else is answered with an
   * error reply, not a failure (Ratis's client would retry a failed query).
   */
  @Override
  public CompletableFuture<Message> query(Message request) {
    List<byte[]> argv;
    try {
      argv = ShardCommand.decodeArguments(request.getContent().asReadOnlyByteBuffer());
    } catch (IllegalArgumentException e) {
      return CompletableFuture.completedFuture(message(new Reply.Error("ERR not a command: " + e.getMessage())));
    }
    if (name(argv).equals(GUARDED)) {
      java.util.BitSet given = new java.util.BitSet();
      for (int i = 1; i < argv.size(); i++) {
        Integer slot = parseSlot(argv.get(i));
        if (slot == null) {
          return CompletableFuture.completedFuture(message(new Reply.Error("ERR " + GUARDED + ": '"
              + new String(argv.get(i), java.nio.charset.StandardCharsets.UTF_8) + "' is not a slot")));
        }
        given.set(slot);
      }
      List<Reply> declared = new ArrayList<>();
      for (io.bloomery.server.keyspace.Key k : guarded.in(given)) {
        GuardDeclarations.Declaration d = guarded.get(k);
        if (d != null) {
          declared.add(Reply.arrayOf(Reply.bulk(k.bytes()), Reply.bulk(d.store()),
              Reply.bulk(Double.toString(d.errorRate())), Reply.bulk(Long.toString(d.capacity()))));
        }
      }
      return CompletableFuture.completedFuture(message(new Reply.Array(declared)));
    }
    if (name(argv).equals(GUARD_READY) && argv.size() == 2) {
      io.bloomery.server.keyspace.Key key = io.bloomery.server.keyspace.Key.of(argv.get(1));
      return CompletableFuture.completedFuture(message(guarded.isGuarded(key)
          ? Reply.bulk(guarded.state(key)) : new Reply.Error("ERR no such guarded key")));
    }
    if ((name(argv).equals(EXPORT) || name(argv).equals(EXPORT_INLINE)) && argv.size() > 2
        || name(argv).equals(EXPORT_PART) && argv.size() == 4) {
      loading.readLock().lock();
      try {
        return CompletableFuture.completedFuture(message(name(argv).equals(EXPORT) ? export(argv, Integer.MAX_VALUE)
            : name(argv).equals(EXPORT_INLINE) ? export(argv, EXPORT_INLINE_MAX) : exportPart(argv)));
      } finally {
        loading.readLock().unlock();
      }
    }
    CommandSpec spec = spec(argv.get(0));
    if (!reads(spec)) {
      return CompletableFuture.completedFuture(message(new Reply.Error("ERR " + name(argv)
          + " is not a read-only command")));
    }
    int slot = slots.any() ? slotOf(spec, argv) : -1;
    if (slot >= 0 && slots.gone(slot)) {
      return CompletableFuture.completedFuture(message(new Reply.Error(GONE)));
    }
    ClientState reader = new ClientState(0, "raft-read", "raft-read", 0, true);
    Dispatcher.Outcome outcome;
    loading.readLock().lock();
    try {
      outcome = dispatcher.execute(reader, argv);
    } finally {
      loading.readLock().unlock();
    }
    if (outcome.reply() == null && outcome.deferred() != null) {
      // answered off the event loop: the last BF.SCANDUMP chunk of a large filter streams all of it for the CRC
      return outcome.deferred().handle((r, failure) -> message(failure == null ? r
          : new Reply.Error("ERR " + name(argv) + " failed: " + failure.getMessage()))).toCompletableFuture();
    }
    return CompletableFuture.completedFuture(message(outcome.reply()));
  }

  private static Message message(Reply reply) {
    return Message.valueOf(ByteString.copyFrom(ReplyCodec.encode(reply)));
  }

  private static String name(List<byte[]> argv) {
    return new String(argv.get(0), java.nio.charset.StandardCharsets.UTF_8);
  }

  /** The reply a state machine answered, from a Ratis reply's message. */
  public static Reply reply(Message message) {
    ByteBuffer bytes = message.getContent().asReadOnlyByteBuffer();
    return ReplyCodec.decode(bytes);
  }
}
