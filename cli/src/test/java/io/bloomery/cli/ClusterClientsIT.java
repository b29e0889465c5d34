package io.bloomery.cli;

import static io.bloomery.cli.ClusterNodes.leaderPort;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.cli.ClusterNodes.Run;
import io.bloomery.cluster.slot.HashSlot;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.BooleanOutput;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.ProtocolKeyword;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cluster clients nobody here wrote, used unchanged, against one cluster of six nodes in two shards of three (real
 * processes, made a cluster by {@code bloomery cluster create}): Lettuce's {@code RedisClusterClient}, redis-py's
 * {@code RedisCluster} (Debian's python3-redis under {@code /usr/bin/python3}) and node-redis's {@code createCluster}
 * with {@code @redis/bloom} (the packages {@code server/src/test/clients/node/package-lock.json} pins). Each adds
 * Bloom and Cuckoo items in keys whose {@code {hashtag}}s fall in both shards (as {@code CLUSTER KEYSLOT} says), has
 * a shard's leader killed with SIGKILL halfway, adds more, and finds every acknowledged add still there. The killed
 * node is started again, and has caught up, before the next client's turn.
 */
class ClusterClientsIT {
  /** Hashtags each client spreads its keys over, and items it adds to each key before and after the kill. */
  private static final int TAGS = 12;
  private static final int ITEMS = 10;
  /** How long one add or read may keep failing (while the shard elects a leader and the client finds it). */
  private static final Duration RETRY_FOR = Duration.ofSeconds(60);
  /** The first errors Lettuce's calls threw (and {@link #retried} retried), for the test's output. */
  private static final List<String> LETTUCE_ERRORS = new ArrayList<>();

  /** Kept when a test fails: the nodes' logs (node-PORT.log, and .before-* of a killed node's earlier start). */
  @TempDir(cleanup = CleanupMode.ON_SUCCESS) static Path dir;
  private static ClusterNodes nodes;
  private static List<Integer> ports;

  @BeforeAll
  static void formCluster() throws Exception {
    nodes = new ClusterNodes(dir);
    ports = nodes.start(6, -1);
    Run created = nodes.create(3, ClusterNodes.addresses(ports));
    assertThat(created.status()).as(created.toString()).isZero();
    assertThat(created.out()).contains("6 nodes, 2 shard(s) of 3 members");
  }

  @AfterAll
  static void stopNodes() throws InterruptedException {
    if (nodes != null) {
      nodes.close();
    }
  }

  // ------------------------------------------------------------------------------------------------ Lettuce

  /** RedisBloom's commands, which Lettuce has no API for: sent with {@code dispatch}, as Lettuce's users do. */
  private enum Bloom implements ProtocolKeyword {
    BF_ADD, BF_EXISTS, CF_ADD, CF_COUNT;

    private final byte[] name = name().replace('_', '.').getBytes(StandardCharsets.US_ASCII);

    @Override
    public byte[] getBytes() {
      return name;
    }

    @Override
    public String toString() {
      return new String(name, StandardCharsets.US_ASCII);
    }
  }

  @Test
  void lettuceRedisClusterClientKeepsEveryAcknowledgedAddThroughAKilledLeader() throws Exception {
    RedisClusterClient client = RedisClusterClient.create(RedisURI.Builder.redis("127.0.0.1", ports.get(1))
        .withTimeout(Duration.ofSeconds(10)).build()); // else Lettuce's defaults, topology refresh options included
    try (StatefulRedisClusterConnection<String, String> connection = client.connect()) {
      RedisAdvancedClusterCommands<String, String> redis = connection.sync();
      List<String> tags = new ArrayList<>();
      Map<String, Integer> masterOf = new LinkedHashMap<>(); // tag -> the client's master for its slot, before the kill
      int[] perShard = new int[2];
      for (int t = 0; t < TAGS; t++) {
        String tag = "{lettuce-" + t + "}";
        long slot = redis.clusterKeyslot(tag + ":bf");
        assertThat(slot).as("CLUSTER KEYSLOT of " + tag + ":bf").isEqualTo(redis.clusterKeyslot(tag + ":cf"))
            .isEqualTo(HashSlot.of(tag.substring(1, tag.length() - 1).getBytes(StandardCharsets.UTF_8)));
        perShard[slot < 8192 ? 0 : 1]++;
        tags.add(tag);
        masterOf.put(tag, connection.getPartitions().getPartitionBySlot((int) slot).getUri().getPort());
      }
      assertThat(perShard[0]).as("hashtags in the first shard's slots").isPositive();
      assertThat(perShard[1]).as("hashtags in the second shard's slots").isPositive();

      Map<String, Integer> failedAttempts = new LinkedHashMap<>(); // "key item" -> failed attempts before its ack
      lettuceAdds(redis, tags, "before", failedAttempts);
      int killed = killLeader(0);
      try {
        long started = System.nanoTime();
        lettuceAdds(redis, tags, "after", failedAttempts);
        double afterSeconds = (System.nanoTime() - started) / 1e9;
        int bfChecked = 0;
        int cfChecked = 0;
        for (Map.Entry<String, Integer> add : failedAttempts.entrySet()) {
          String[] keyItem = add.getKey().split(" ");
          if (keyItem[0].endsWith(":bf")) {
            assertThat(retried(() -> redis.dispatch(Bloom.BF_EXISTS, new BooleanOutput<>(StringCodec.UTF8),
                args(keyItem[0], keyItem[1])))).as("BF.EXISTS " + add.getKey()).isTrue();
            bfChecked++;
          } else {
            assertThat(retried(() -> redis.dispatch(Bloom.CF_COUNT, new IntegerOutput<>(StringCodec.UTF8),
                args(keyItem[0], keyItem[1])))).as("CF.COUNT " + add.getKey()).isBetween(1L, 1L + add.getValue());
            cfChecked++;
          }
        }
        assertThat(redis.dispatch(Bloom.BF_EXISTS, new BooleanOutput<>(StringCodec.UTF8),
            args(tags.get(0) + ":none", "before-0"))).as("BF.EXISTS of a key never added to").isFalse();
        List<String> onKilled = tags.stream().filter(tag -> masterOf.get(tag) == killed).toList();
        assertThat(onKilled).as("hashtags served by the killed node").isNotEmpty();
        for (String tag : onKilled) {
          assertThat(connection.getPartitions().getPartitionBySlot(HashSlot.of(tag.getBytes(StandardCharsets.UTF_8)))
              .getUri().getPort()).as("Lettuce's master for " + tag).isNotEqualTo(killed);
        }
        System.out.printf("Lettuce: %d BF.ADD and %d CF.ADD acknowledged (%d failed attempts retried, the adds after "
            + "the kill took %.1f s; first errors: %s) in %d keys of both shards (%d and %d hashtags), all visible "
            + "after the leader on %d was killed%n", bfChecked, cfChecked,
            failedAttempts.values().stream().mapToInt(Integer::intValue).sum(), afterSeconds, LETTUCE_ERRORS,
            2 * TAGS, perShard[0], perShard[1], killed);
        assertThat(bfChecked).isEqualTo(cfChecked).isEqualTo(2 * TAGS * ITEMS);
      } finally {
        restart(killed);
      }
    } finally {
      client.shutdown();
    }
  }

  /** BF.ADD and CF.ADD of ITEMS items {@code PHASE-i} to each tag's keys, each retried until acknowledged. */
  private static void lettuceAdds(RedisAdvancedClusterCommands<String, String> redis, List<String> tags, String phase,
      Map<String, Integer> failedAttempts) throws InterruptedException {
    for (int i = 0; i < ITEMS; i++) {
      for (String tag : tags) {
        String item = phase + "-" + i;
        for (String key : List.of(tag + ":bf", tag + ":cf")) {
          int[] failed = {0};
          Bloom add = key.endsWith(":bf") ? Bloom.BF_ADD : Bloom.CF_ADD;
          Boolean added = retried(() -> redis.dispatch(add, new BooleanOutput<>(StringCodec.UTF8), args(key, item)),
              failed);
          failedAttempts.put(key + " " + item, failed[0]);
          if (failed[0] == 0) { // else an attempt that failed may have added it already: BF.ADD then answers 0
            assertThat(added).as(add + " " + key + " " + item).isTrue();
          }
        }
      }
    }
  }

  private static CommandArgs<String, String> args(String key, String item) {
    return new CommandArgs<>(StringCodec.UTF8).addKey(key).addValue(item);
  }

  private static <T> T retried(Supplier<T> call) throws InterruptedException {
    return retried(call, new int[1]);
  }

  /**
   * {@code call}'s result once it does not throw, for {@link #RETRY_FOR} at most; {@code failed[0]} counts the
   * attempts that threw (a shard without a leader, a connection to the killed node, a command that timed out).
   */
  private static <T> T retried(Supplier<T> call, int[] failed) throws InterruptedException {
    long deadline = System.nanoTime() + RETRY_FOR.toNanos();
    while (true) {
      try {
        return call.get();
      } catch (RedisException e) {
        failed[0]++;
        if (LETTUCE_ERRORS.size() < 5) {
          LETTUCE_ERRORS.add(e.toString());
        }
        if (System.nanoTime() > deadline) {
          throw new AssertionError("still failing after " + RETRY_FOR + " and " + failed[0] + " attempts", e);
        }
        Thread.sleep(200);
      }
    }
  }

  // ------------------------------------------------------------------------------------------------ redis-py

  /**
   * Seeded with a node of the first shard, redis-py has the second shard's leader killed. Debian's redis-py 4.3.4
   * cannot reread the topology once the first node of its list (the first of {@code CLUSTER SLOTS}: the leader of the
   * shard of slot 0) has died: {@code NodesManager.initialize} deep-copies its connection kwargs, which hold a bound
   * method, and fails with "cannot pickle '_thread.lock' object" (a client bug, discussed in redis/redis-py#2377).
   */
  @Test
  void redisPyRedisClusterKeepsEveryAcknowledgedAddThroughAKilledLeader() throws Exception {
    Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")), "no /usr/bin/python3");
    Assumptions.assumeTrue(new ProcessBuilder("/usr/bin/python3", "-c", "import redis.cluster").start().waitFor() == 0,
        "redis-py is not installed for /usr/bin/python3: apt-get install python3-redis (./run-tests does)");
    Path script = testFile("cli/src/test/resources/cluster-clients/redis_py_cluster.py");
    String out = runKillingALeader(List.of("/usr/bin/python3", script.toString(), "--port",
        Integer.toString(ports.get(2)), "--tags", Integer.toString(TAGS), "--items", Integer.toString(ITEMS)),
        script.getParent(), 8192);
    assertThat(out).contains("all checks passed: redis-py " + 2 * TAGS * ITEMS + " BF.ADD and " + 2 * TAGS * ITEMS
        + " CF.ADD acknowledged");
  }

  // ------------------------------------------------------------------------------------------------ node-redis

  @Test
  void nodeRedisCreateClusterKeepsEveryAcknowledgedAddThroughAKilledLeader() throws Exception {
    Path suite = testFile("server/src/test/clients/node");
    Assumptions.assumeTrue(new ProcessBuilder("node", "--version").start().waitFor() == 0, "node is not installed");
    Assumptions.assumeTrue(Files.isDirectory(suite.resolve("node_modules/@redis/bloom")),
        "node-redis is not installed: run 'npm ci' in " + suite + " (./run-tests does)");
    String out = runKillingALeader(List.of("node", "cluster-check.mjs", "--port", Integer.toString(ports.get(4)),
        "--tags", Integer.toString(TAGS), "--items", Integer.toString(ITEMS)), suite, 0);
    assertThat(out).contains("all checks passed: node-redis " + 2 * TAGS * ITEMS + " BF.MADD items and "
        + 2 * TAGS * ITEMS + " CF.ADD acknowledged");
  }

  // ------------------------------------------------------------------------------------------------ helpers

  /** {@code path}, from the repository's root, found from the module's directory (the ITs' working directory). */
  private static Path testFile(String path) {
    Path fromModule = Path.of("..").resolve(path);
    return (Files.exists(fromModule) ? fromModule : Path.of(path)).toAbsolutePath().normalize();
  }

  /**
   * Runs a client script (5 minutes at most) that prints {@code kill-leader} halfway and then waits for a line on its
   * stdin: then the leader of the shard of {@code slot} is killed with SIGKILL, and the script is told {@code killed
   * PORT}. Asserts that it exits 0; returns its output (stdout and stderr). The killed node is started again at the
   * end.
   */
  private static String runKillingALeader(List<String> command, Path workDir, int slot) throws Exception {
    ProcessBuilder builder = new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true);
    builder.environment().put("NO_COLOR", "1");
    Process p = builder.start();
    StringBuffer output = new StringBuffer();
    BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    Thread reader = new Thread(() -> {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = in.readLine()) != null; ) {
          output.append(line).append('\n');
          lines.add(line);
        }
      } catch (Exception e) {
        output.append("(reading the client's output failed: ").append(e).append(")\n");
      }
      lines.add("\0end");
    });
    reader.start();
    int killed = -1;
    try {
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
      for (String line = ""; !line.equals("kill-leader"); ) {
        line = lines.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        if (line == null || line.equals("\0end")) {
          throw new AssertionError(String.join(" ", command) + " did not ask for the kill; its output:\n" + output);
        }
      }
      killed = killLeader(slot);
      try (OutputStream in = p.getOutputStream()) {
        in.write(("killed " + killed + "\n").getBytes(StandardCharsets.UTF_8));
      }
      if (!p.waitFor(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
        throw new AssertionError(String.join(" ", command) + " did not end in 5 minutes; its output:\n" + output);
      }
      reader.join(10_000);
      System.out.print(output);
      assertThat(p.exitValue()).as(String.join(" ", command) + "'s exit status; its output:\n" + output).isZero();
      return output.toString();
    } finally {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      if (killed > 0) {
        restart(killed);
      }
    }
  }

  /** The members of the shard of {@code slot}: {@code cluster create} makes every three nodes in a row one shard. */
  private static List<Integer> shard(int slot) {
    return slot < 8192 ? ports.subList(0, 3) : ports.subList(3, 6);
  }

  /** Kills the leader of the shard of {@code slot} with SIGKILL; returns its port. */
  private static int killLeader(int slot) throws Exception {
    int leader = leaderPort(ports.get(slot < 8192 ? 3 : 0), slot); // as a node of the other shard knows it
    assertThat(shard(slot)).contains(leader);
    nodes.kill(leader);
    return leader;
  }

  /**
   * Waits until the killed node's shard names another leader, starts the killed node again on its directory, and
   * waits until it has applied as much of its shard's log as the others had.
   */
  private static void restart(int killed) throws Exception {
    int slot = ports.indexOf(killed) < 3 ? 0 : 8192;
    int asked = ports.get(slot < 8192 ? 3 : 0);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (leaderPort(asked, slot) == killed) {
      assertThat(System.nanoTime()).as("a leader other than the killed " + killed).isLessThan(deadline);
      Thread.sleep(200);
    }
    nodes.launch(killed);
    nodes.awaitReady(killed);
    for (int peer : shard(slot)) {
      if (peer != killed) {
        nodes.awaitCaughtUp(killed, peer);
      }
    }
  }
}
