package io.bloomery.cluster.shard;

import static io.bloomery.cluster.shard.ShardClient.argv;

import io.bloomery.cluster.chaos.ShardWorkload;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * The failover benchmark of docs/BENCHMARKS.md (run by {@code bench/cluster-failover}, not a test): a three-replica
 * shard of real processes on loopback; {@code KILLS} times, at a random moment, {@code kill -9} of the leader, then
 * the time from the kill to the first write a {@link ShardClient} gets acknowledged (the client retries as it does
 * for any caller: it finds the new leader itself), then the killed replica started again and caught up before the
 * next kill. Prints every sample, p50 and p99, the parameters and the machine.
 *
 * <p>Usage: {@code FailoverBench [KILLS] [ELECTION_TIMEOUT_MS]} (defaults 20 and the replica's default).
 */
public final class FailoverBench {
  private FailoverBench() {}

  public static void main(String[] args) throws Exception {
    int kills = args.length > 0 ? Integer.parseInt(args[0]) : 20;
    long electionMillis = args.length > 1 ? Long.parseLong(args[1])
        : ShardReplica.Options.DEFAULT_ELECTION_TIMEOUT.toMillis();
    Path dir = Files.createTempDirectory("bloomery-failover-bench.");
    ShardGroup group = FreePorts.group("failover-bench", 3);
    Random random = new Random(1);
    double[] seconds = new double[kills];
    List<String> loads = new ArrayList<>();
    try (ReplicaProcesses replicas = new ReplicaProcesses(group, dir, electionMillis,
        ShardReplica.Options.DEFAULT_SNAPSHOT_EVERY, ShardReplica.Options.DEFAULT_LOG_SEGMENT_BYTES);
        ShardClient client = new ShardClient(group, Duration.ofSeconds(60))) {
      replicas.startAll();
      long index = 0;
      for (int i = 0; i < 100; i++) {
        index = client.write(argv("BF.ADD", "warm", Integer.toString(i))).logIndex();
      }
      for (int k = 0; k < kills; k++) {
        for (String id : group.peers().keySet()) { // every replica up to date: the next election has all voters
          ShardWorkload.patiently(client, id, index, argv("BF.EXISTS", "warm", "0"), Duration.ofSeconds(60));
        }
        Thread.sleep(200 + random.nextInt(1000));
        client.read(argv("BF.EXISTS", "warm", "0"));
        String leader = client.leader();
        loads.add(load());
        long killed = System.nanoTime();
        replicas.kill9(leader);
        index = client.write(argv("BF.ADD", "after-kill", Integer.toString(k))).logIndex();
        seconds[k] = (System.nanoTime() - killed) / 1e9;
        System.out.printf(Locale.ROOT, "kill %2d: %s, first write acknowledged after %.3f s by %s%n", k + 1, leader,
            seconds[k], client.leader());
        replicas.start(leader);
      }
    } finally {
      try (var files = Files.walk(dir)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
      }
    }
    double[] sorted = seconds.clone();
    Arrays.sort(sorted);
    System.out.printf(Locale.ROOT,
        "n=%d kills, election timeout %d-%d ms (min-max), p50 %.3f s, p99 %.3f s, max %.3f s%n", kills,
        electionMillis, 2 * electionMillis, rank(sorted, 0.50), rank(sorted, 0.99), sorted[kills - 1]);
    System.out.printf("machine: %d CPUs (%s), load average (1 min) at the kills: %s%n",
        Runtime.getRuntime().availableProcessors(), cpuModel(), loads);
  }

  /** The nearest-rank percentile of sorted samples. */
  private static double rank(double[] sorted, double p) {
    return sorted[Math.max(0, (int) Math.ceil(p * sorted.length) - 1)];
  }

  private static String load() throws IOException {
    return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
  }

  private static String cpuModel() throws IOException {
    return Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name")).findFirst()
        .map(l -> l.substring(l.indexOf(':') + 1).trim()).orElse("unknown CPU");
  }
}
