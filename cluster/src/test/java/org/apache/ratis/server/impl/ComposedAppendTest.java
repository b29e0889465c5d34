package org.apache.ratis.server.impl;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.cluster.shard.ShardReplica;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.impl.ServerImplUtils.NavigableIndices;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Why every replica runs with Ratis's "append entries compose" off ({@link ShardReplica#properties}): with it on, a
 * follower answers an append request whose first entry's index is already being appended with that earlier append's
 * completion, so it acknowledges entries it never wrote. This test drives the follower's own structure for it
 * (package-private, hence this package) and fails once a Ratis upgrade stops doing so: then the setting may go.
 */
class ComposedAppendTest {
  @Test
  void aLongerRequestFromTheSameIndex_isAcknowledgedWithoutItsExtraEntries(@TempDir Path dir) throws Exception {
    List<Long> written = new CopyOnWriteArrayList<>();
    CompletableFuture<Void> firstWrite = new CompletableFuture<>();
    NavigableIndices follower = new NavigableIndices();

    CompletableFuture<Void> first = follower.append(entries(7, 10_653, 10_653), e -> {
      e.forEach(entry -> written.add(entry.getIndex()));
      return firstWrite; // the log's write is still in progress
    });
    CompletableFuture<Void> resent = follower.append(entries(7, 10_653, 10_654), e -> {
      e.forEach(entry -> written.add(entry.getIndex()));
      return CompletableFuture.completedFuture(null);
    });
    firstWrite.complete(null);
    first.get(10, TimeUnit.SECONDS);
    resent.get(10, TimeUnit.SECONDS);

    assertThat(written).as("the entries written to the log, once both appends completed").containsExactly(10_653L);
    assertThat(RaftServerConfigKeys.Log.appendEntriesComposeEnabled(
        ShardReplica.properties(dir, "127.0.0.1", 0, Duration.ofSeconds(1), 10_000, 8 << 20)))
        .as("compose, in every replica's properties").isFalse();
  }

  private static List<LogEntryProto> entries(long term, long from, long to) {
    return LongStream.rangeClosed(from, to)
        .mapToObj(i -> LogEntryProto.newBuilder().setTerm(term).setIndex(i).build()).toList();
  }
}
