package io.bloomery.cluster.shard;

import io.bloomery.server.state.Settings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

/**
 * Runs one shard replica in this process until it is killed:
 * {@code ReplicaMain --shard NAME --id ID --peers id=host:port,... --dir DIR [--election-timeout-ms N]
 * [--snapshot-every N] [--log-segment-bytes N]}. Prints {@code Replica ID of shard NAME serving on HOST:PORT} once it serves; errors in the
 * arguments exit with status 2 and a line saying what is wrong.
 */
public final class ReplicaMain {

  private ReplicaMain() {}

  public static void main(String[] args) throws Exception {
    String shard = null;
    String id = null;
    String peers = null;
    Path dir = null;
    long electionMillis = ShardReplica.Options.DEFAULT_ELECTION_TIMEOUT.toMillis();
    long snapshotEvery = ShardReplica.Options.DEFAULT_SNAPSHOT_EVERY;
    long segmentBytes = ShardReplica.Options.DEFAULT_LOG_SEGMENT_BYTES;
    try {
      for (int i = 0; i < args.length; i += 2) {
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException(args[i] + " needs a value");
        }
        String value = args[i + 1];
        switch (args[i]) {
          case "--shard" -> shard = value;
          case "--id" -> id = value;
          case "--peers" -> peers = value;
          case "--dir" -> dir = Path.of(value);
          case "--election-timeout-ms" -> electionMillis = Long.parseLong(value);
          case "--snapshot-every" -> snapshotEvery = Long.parseLong(value);
          case "--log-segment-bytes" -> segmentBytes = Long.parseLong(value);
          default -> throw new IllegalArgumentException("unknown option " + args[i]);
        }
      }
      if (shard == null || id == null || peers == null || dir == null) {
        throw new IllegalArgumentException("--shard, --id, --peers and --dir are required");
      }
    } catch (IllegalArgumentException e) {
      System.err.println("replica: " + e.getMessage());
      System.exit(2);
      return;
    }
    ShardGroup group = ShardGroup.parse(shard, peers);
    ShardReplica.Options options = new ShardReplica.Options(group, id, dir, Duration.ofMillis(electionMillis),
        snapshotEvery, segmentBytes);
    ShardReplica replica = ShardReplica.start(options, new Settings());
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        replica.close();
      } catch (Exception e) {
        System.err.println("replica: close failed: " + e);
      }
    }, "replica-shutdown"));
    var address = group.peers().get(id);
    System.out.println("Replica " + id + " of shard " + shard + " serving on " + address.getHostString() + ":"
        + address.getPort());
    System.out.flush();
    new CountDownLatch(1).await();
  }
}
