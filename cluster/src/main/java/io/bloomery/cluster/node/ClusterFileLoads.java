package io.bloomery.cluster.node;

import io.bloomery.cluster.shard.ShardStateMachine;
import io.bloomery.server.command.Args;
import io.bloomery.server.command.CommandSpec;
import io.bloomery.server.command.Errors;
import io.bloomery.server.command.RedisBloomErrors;
import io.bloomery.server.command.bloom.FileLoadReplies;
import io.bloomery.server.keyspace.HeapAdmission;
import io.bloomery.server.keyspace.Key;
import io.bloomery.server.keyspace.ValueType;
import io.bloomery.server.persistence.load.FileLoads;
import io.bloomery.server.persistence.load.LoadCaller;
import io.bloomery.server.persistence.load.LoadException;
import io.bloomery.server.resp.Reply;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/*
 * Why the chunks are staged on one node and not sent through the log one by one: a single node stages a Bloomery
 * file per key in its own directory and reads it back after the last chunk; replayed chunk by chunk on every
 * replica, a load abandoned half way (its client gone) would leave a staged file on each replica that no later entry
 * removes alike. The file whole, in one write, is what every replica can apply alike: BF.LOADCHUNK key 1 FILE is
 * the record a single node journals for a file that came in one chunk, and it parses the file (CRC-32C included)
 * and creates the key, or refuses it whole.
 */

/**
 * {@code BF.LOADCHUNK} of a Bloomery file (what {@code BF.SCANDUMP} of a fixed or blocked filter sends: the header,
 * then its body in chunks) on a cluster node. The node that leads the key's shard stages the chunks in its own
 * directory, as a single node does ({@link FileLoads}: per key, abandoned when its client disconnects or stays idle);
 * after the last chunk it sends the whole file as one write, {@code BF.LOADCHUNK key 1 FILE}, through the shard's
 * log (in parts when large), and answers the last chunk with that write's reply. A file that comes whole in its
 * first chunk is such a write already and is not staged.
 */
final class ClusterFileLoads {
  private static final byte[] LOADCHUNK = "BF.LOADCHUNK".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] ONE = {'1'};
  /** More than a file's bytes besides its filter's can be: the envelope with the longest seed, the fixed fields. */
  private static final long ENVELOPE_BOUND = 1 << 17;
  static final String LEADER_LOST = "ERR the file load was abandoned: this node no longer leads the shard of its key"
      + " (nothing of it was applied); start again with the header chunk";

  private final FileLoads loads;

  ClusterFileLoads(FileLoads loads) {
    this.loads = loads;
  }

  /**
   * Whether {@code argv} is a chunk of a Bloomery file this node stages: a header that more chunks must follow, or a
   * later chunk of a key whose load this node stages.
   */
  boolean handles(List<byte[]> argv) {
    if (argv.size() != 4 || !isLoadChunk(argv.get(0))) { // asked of every write: no allocation before this
      return false;
    }
    byte[] data = argv.get(3);
    return FileLoads.isFileHeader(data) ? !FileLoads.isWholeFile(data) : loads.pending(Key.of(argv.get(1)));
  }

  /** Whether a command's name is {@code BF.LOADCHUNK}, in any case. */
  private static boolean isLoadChunk(byte[] name) {
    if (name.length != LOADCHUNK.length) {
      return false;
    }
    for (int i = 0; i < name.length; i++) {
      int b = name[i];
      if ((b >= 'a' && b <= 'z' ? b - ('a' - 'A') : b) != LOADCHUNK[i]) {
        return false;
      }
    }
    return true;
  }

  /** Whether a load of {@code key} is staged here, waiting for its next chunk. */
  boolean pending(Key key) {
    return loads.pending(key);
  }

  /** Forgets the staged load of {@code key} (this node stopped leading its shard: it could never be sent). */
  void abandon(Key key) {
    loads.abandon(key);
  }

  /**
   * Stages the chunk {@code argv} of client {@code clientId} on this node, which leads {@code machine}'s shard, and
   * answers it: {@code OK} while more chunks are due, an error that says why the load was refused or abandoned, or,
   * after the last chunk, the reply of {@code send} given the whole file (run off the event loop: reading a large
   * file back takes seconds).
   */
  CompletionStage<Reply> chunk(long clientId, List<byte[]> argv, ShardStateMachine machine,
      Function<byte[], CompletionStage<Reply>> send) {
    Key key = Key.of(argv.get(1));
    byte[] data = argv.get(3);
    Long iterator = Args.parseLong(argv.get(2));
    if (iterator == null) {
      return done(Reply.error(RedisBloomErrors.BF_LOADCHUNK_NOT_NUMERIC));
    }
    FileLoads.Step step;
    try {
      // A single node orders a key's chunks by its write lock; here this lock does (staging is a file write).
      synchronized (this) {
        if (FileLoads.isFileHeader(data) && iterator == 1) {
          Object existing = machine.keyspace().peek(key);
          if (existing != null) {
            loads.abandon(key);
            return done(Reply.error(ValueType.of(existing).isBloom() ? RedisBloomErrors.ITEM_EXISTS
                : Errors.WRONGTYPE));
          }
          step = loads.begin(caller(clientId, machine, key), key, data);
        } else {
          step = loads.next(caller(clientId, machine, key), key, iterator, data);
        }
      }
    } catch (LoadException e) {
      return done(Reply.error(e.reply()));
    }
    if (step == null) {
      return done(Reply.OK);
    }
    if (step instanceof FileLoads.Done) { // whole in one chunk after all: the chunk is the write
      return send.apply(data);
    }
    FileLoads.Finish finish = (FileLoads.Finish) step;
    return FileLoadReplies.offLoop(loads, "the file load",
        () -> send.apply(loads.takeStaged(finish)), () -> loads.drop(finish), () -> {});
  }

  /** The write that loads {@code file}, whole, into {@code key} on every replica. */
  static List<byte[]> write(byte[] key, byte[] file) {
    return List.of(LOADCHUNK, key, ONE, file);
  }

  /**
   * The load's view of the chunk's sender: admits a file the shard's log can carry, that the leader's
   * {@code maxmemory} and heap take (its replicas apply what it admits).
   */
  private static LoadCaller caller(long clientId, ShardStateMachine machine, Key key) {
    return new LoadCaller() {
      @Override
      public long clientId() {
        return clientId;
      }

      @Override
      public boolean replaying() {
        return false;
      }

      @Override
      public void admit(long bytes, long largestArray) {
        // the write holds the file (the filter, its header, at most 64 KiB of seed and fixed fields) and the key
        if (bytes > Proposals.MAX_WRITE_BYTES - key.bytes().length - ENVELOPE_BOUND) {
          throw new LoadException("ERR a Bloomery file of a filter of " + bytes + " bytes is more than a cluster node"
              + " takes in one write (" + Proposals.MAX_WRITE_BYTES + " bytes of arguments): load it into a single"
              + " node, or split it into several keys");
        }
        CommandSpec spec = machine.spec(LOADCHUNK);
        String refused = spec == null ? null : machine.refusal(spec, bytes);
        if (refused != null) {
          throw new LoadException(refused);
        }
        // sent in parts: every replica holds the parts, then the file decoded from them, then the filter
        if (!HeapAdmission.admits(machine.keyspace().usedBytes(), 3 * bytes, bytes)) {
          throw new LoadException("OOM a Bloomery file of " + bytes + " bytes goes through the shard's log in parts,"
              + " which take about three times its size of a node's heap beside its keys; this node's heap cannot"
              + " hold that");
        }
      }

      @Override
      public void admitReserved(long bytes, long largestArray) {
        admit(bytes, largestArray);
      }
    };
  }

  private static CompletionStage<Reply> done(Reply r) {
    return CompletableFuture.completedFuture(r);
  }
}
