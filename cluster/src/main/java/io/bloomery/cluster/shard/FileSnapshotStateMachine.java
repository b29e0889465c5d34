package io.bloomery.cluster.shard;

import java.io.File;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.ratis.io.MD5Hash;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.util.LifeCycle;
import org.apache.ratis.util.MD5FileUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Ratis state machine whose snapshot is one file, {@code snapshot.TERM_INDEX} in the group's state machine
 * directory with an MD5 file beside it, as Ratis's {@link SimpleStateMachineStorage} names them: Ratis then purges
 * the log up to a snapshot and ships the file, in chunks, to a member that needs entries it purged. This class does
 * the Ratis side (the latest snapshot loaded on start, the pause and reload around an installed one, the MD5); a
 * subclass writes and reads its state ({@link #writeSnapshot}, {@link #loadSnapshot}).
 *
 * <p>A snapshot is taken on the thread that applies entries, so it is exactly the state at the last applied index.
 * A subclass writes it through a temporary file named {@code .snapshot.*.tmp} renamed into place whole; one a crash
 * left behind is deleted on the next start.
 */
public abstract class FileSnapshotStateMachine extends BaseStateMachine {
  private static final Logger LOG = LoggerFactory.getLogger(FileSnapshotStateMachine.class);

  private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();

  /**
   * Writes the state, as of the last applied entry, to {@code file}, whole or not at all (through a
   * {@code .snapshot.*.tmp} file in the same directory).
   *
   * @return a few words on what it holds, for the log
   */
  protected abstract String writeSnapshot(Path file) throws IOException;

  /**
   * Replaces the state with {@code file}'s, or with the empty state for {@code null} (no snapshot yet).
   *
   * @return a few words on what it held, for the log
   * @throws IOException if the file cannot be read or is not such a snapshot: the state must not be half replaced
   */
  protected abstract String loadSnapshot(Path file) throws IOException;

  /** Loads the latest snapshot, if any; the state machine is then running (Ratis pauses it to install a snapshot). */
  @Override
  public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
    getLifeCycle().startAndTransition(() -> {
      super.initialize(server, groupId, raftStorage);
      storage.init(raftStorage);
      deleteUnfinishedSnapshots(raftStorage.getStorageDir().getStateMachineDir().toPath());
      load(storage.getLatestSnapshot());
    }, IOException.class);
  }

  private void deleteUnfinishedSnapshots(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return;
    }
    try (DirectoryStream<Path> unfinished = Files.newDirectoryStream(dir, ".snapshot.*.tmp")) {
      for (Path file : unfinished) {
        Files.deleteIfExists(file);
        LOG.info("{}: deleted {}, a snapshot a crash interrupted", getId(), file.getFileName());
      }
    }
  }

  /** Before Ratis installs a snapshot from the leader: no entry is applied until {@link #reinitialize}. */
  @Override
  public void pause() {
    if (getLifeCycleState() == LifeCycle.State.RUNNING) {
      getLifeCycle().transition(LifeCycle.State.PAUSING);
      getLifeCycle().transition(LifeCycle.State.PAUSED);
    }
  }

  /** After Ratis paused the state machine and put a snapshot from the leader in its directory: loads it, runs again. */
  @Override
  public void reinitialize() throws IOException {
    load(storage.loadLatestSnapshot());
    if (getLifeCycleState() == LifeCycle.State.PAUSED) {
      getLifeCycle().transition(LifeCycle.State.STARTING);
      getLifeCycle().transition(LifeCycle.State.RUNNING);
    }
  }

  @Override
  public SimpleStateMachineStorage getStateMachineStorage() {
    return storage;
  }

  private void load(SingleFileSnapshotInfo snapshot) throws IOException {
    if (snapshot == null) {
      loadSnapshot(null);
      return;
    }
    Path file = snapshot.getFile().getPath();
    MD5Hash md5 = snapshot.getFile().getFileDigest();
    if (md5 != null) {
      MD5FileUtil.verifySavedMD5(file.toFile(), md5);
    }
    String held = loadSnapshot(file);
    setLastAppliedTermIndex(snapshot.getTermIndex());
    LOG.info("{}: loaded snapshot {} ({}) at {}", getId(), file.getFileName(), held, snapshot.getTermIndex());
  }

  @Override
  public long takeSnapshot() throws IOException {
    TermIndex last = getLastAppliedTermIndex();
    if (last == null || last.getIndex() < 0) {
      return RaftLog.INVALID_LOG_INDEX;
    }
    File file = storage.getSnapshotFile(last.getTerm(), last.getIndex());
    Files.createDirectories(file.toPath().getParent());
    String held = writeSnapshot(file.toPath());
    MD5Hash md5 = MD5FileUtil.computeAndSaveMd5ForFile(file);
    storage.updateLatestSnapshot(new SingleFileSnapshotInfo(new FileInfo(file.toPath(), md5), last));
    LOG.info("{}: snapshot {} written ({})", getId(), file.getName(), held);
    return last.getIndex();
  }
}
