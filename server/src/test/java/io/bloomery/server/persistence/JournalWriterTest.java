package io.bloomery.server.persistence;

import static io.bloomery.server.persistence.TestKeyspace.argv;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JournalWriterTest {
  @TempDir Path dir;

  private JournalWriter writer(FsyncPolicy policy, long postponeNanos) throws IOException {
    JournalWriter.PreparedSegment segment = JournalWriter.createSegment(dir, 1);
    segment.channel().close();
    return new JournalWriter(1, segment.path(), policy, postponeNanos);
  }

  private long records() throws IOException {
    return JournalFormat.scan(dir.resolve(DataDirectory.segmentName(1)), 1, 0, (o, a) -> {}).records();
  }

  @Test
  void everysecPostponesAcknowledgementsOnceTheOldestUnforcedRecordIsTooOld() throws Exception {
    // With a threshold of 0 every record after the first unforced one is "late": its acknowledgement must
    // wait for the fsync that covers it, as when the disk falls behind by more than 2 s.
    try (JournalWriter writer = writer(FsyncPolicy.EVERYSEC, 0)) {
      CompletableFuture<Void> first = writer.append(argv("BF.ADD", "k", "a")).toCompletableFuture();
      assertThat(first).isDone();
      Thread.sleep(1);
      List<CompletableFuture<Void>> later = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        later.add(writer.append(argv("BF.ADD", "k", "b" + i)).toCompletableFuture());
      }
      CompletableFuture.allOf(later.toArray(CompletableFuture[]::new)).join();
      // Only an append that finds an older unforced record waits (one right after a background fsync does
      // not), so on a very slow machine fewer than 20 may have waited; each that did was released by an fsync.
      assertThat(writer.postponedCount()).isPositive();
      assertThat(writer.fsyncStats().coveredAppends()).isEqualTo(writer.postponedCount());
      assertThat(records()).isEqualTo(21);
    }
  }

  @Test
  void underNoNothingWaitsAndCloseStillForcesEverything() throws IOException {
    JournalWriter writer = writer(FsyncPolicy.NO, JournalWriter.EVERYSEC_POSTPONE_NANOS);
    for (int i = 0; i < 50; i++) {
      assertThat(writer.append(argv("DEL", "k" + i)).toCompletableFuture()).isDone();
    }
    assertThat(writer.lagSeconds()).isGreaterThanOrEqualTo(0);
    writer.close();
    assertThat(writer.fsyncStats().count()).isPositive();
    assertThat(records()).isEqualTo(50);
  }

  @Test
  void appendsAfterCloseAreRefusedNeverAcknowledged() throws IOException {
    JournalWriter writer = writer(FsyncPolicy.ALWAYS, JournalWriter.EVERYSEC_POSTPONE_NANOS);
    writer.append(argv("DEL", "k")).toCompletableFuture().join();
    writer.close();
    CompletableFuture<Void> late = writer.append(argv("DEL", "k")).toCompletableFuture();
    Assertions.assertThatThrownBy(late::join).isInstanceOf(CompletionException.class)
        .hasMessageContaining("the journal is closed");
    assertThat(records()).isEqualTo(1);
  }
}
