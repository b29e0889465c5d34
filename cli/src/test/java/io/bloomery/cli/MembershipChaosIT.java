package io.bloomery.cli;

import static io.bloomery.cli.ClusterNodes.command;
import static io.bloomery.cli.ClusterNodes.leaderPort;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.cli.ClusterNodes.Run;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisMovedDataException;

/**
 * Membership changes under load with the shard's leader killed in the middle of each: four writer clients add
 * unique items ({@code BF.ADD}) and increment one counter ({@code CMS.INCRBY}) all along, recording each operation
 * as acknowledged, refused (a redirection or {@code CLUSTERDOWN}: not applied) or uncertain (a lost connection, or
 * "may or may not have been applied"). Each cycle {@code bloomery cluster add-node}s the spare node through a
 * follower and {@code kill -9}s the leader at a random moment of it, restarts it, then {@code del-node}s a member
 * (perhaps the leader about to be killed, perhaps the node just added) the same way; the removed node's directory
 * is emptied and it is the next cycle's spare.
 *
 * <p>Afterwards every acknowledged add is on every member, each member read at the same applied log index, and the
 * counter is at least the acknowledged increments and at most those plus the uncertain ones: none was lost and none
 * applied twice. {@code -Dchaos.cycles=N} (2 by default) sets the number of cycles, two kills each;
 * {@code -Dchaos.seed=S} replays a run's moments (every failure names its seed).
 */
class MembershipChaosIT {
  private static final long SEED = Long.getLong("chaos.seed", System.nanoTime());
  private static final int CYCLES = Integer.getInteger("chaos.cycles", 2);
  private static final int WRITERS = 4;

  @TempDir(cleanup = CleanupMode.ON_SUCCESS) Path dir; // a failed run keeps its nodes' logs
  private ClusterNodes nodes;
  private final Random random = new Random(SEED);

  @BeforeEach
  void nodes() {
    nodes = new ClusterNodes(dir);
  }

  @AfterEach
  void stopNodes() throws InterruptedException {
    nodes.close();
  }

  @Test
  void membershipChangesWithTheLeaderKilledMidwayLoseNoAcknowledgedWrite() throws Exception {
    List<Integer> ports = nodes.start(4, -1);
    Run created = nodes.create(3, ClusterNodes.addresses(ports.subList(0, 3)));
    assertThat(created.status()).as(created.toString()).isZero();
    List<Integer> members = new ArrayList<>(ports.subList(0, 3));
    int spare = ports.get(3);
    try (Jedis j = new Jedis("127.0.0.1", leaderPort(members.get(0), 0))) {
      assertThat(j.sendCommand(command("CMS.INITBYDIM"), "counts", "1000", "5")).isNotNull();
    }

    AtomicBoolean running = new AtomicBoolean(true);
    ConcurrentLinkedQueue<String> acknowledged = new ConcurrentLinkedQueue<>();
    AtomicLong increments = new AtomicLong();
    AtomicLong uncertainIncrements = new AtomicLong();
    AtomicLong uncertainAdds = new AtomicLong();
    List<Integer> live = java.util.Collections.synchronizedList(new ArrayList<>(members));
    List<Thread> writers = new ArrayList<>();
    for (int w = 0; w < WRITERS; w++) {
      int writer = w;
      writers.add(Thread.ofPlatform().name("writer-" + w).start(() -> {
        int leader = -1;
        for (long i = 0; running.get(); i++) {
          try {
            if (leader < 0) {
              leader = leaderPort(live.get((int) (i % live.size())), 0);
            }
            try (Jedis j = new Jedis("127.0.0.1", leader, 10_000)) {
              for (int n = 0; n < 50 && running.get(); n++, i++) {
                String item = "w" + writer + "-" + i;
                if (write(j, "BF.ADD", uncertainAdds, "urls", item)) {
                  acknowledged.add(item);
                }
                if (write(j, "CMS.INCRBY", uncertainIncrements, "counts", "x", "1")) {
                  increments.incrementAndGet();
                }
              }
            }
          } catch (Redirected | RuntimeException e) {
            leader = -1; // a redirection, a refusal, a dead or unknown leader: find the leader again
            pause(50);
          } catch (InterruptedException e) {
            return;
          }
        }
      }));
    }

    try {
      for (int cycle = 0; cycle < CYCLES; cycle++) {
        int leader = leaderPort(members.get(0), 0);
        int via = members.stream().filter(p -> p != leader).findFirst().orElseThrow();
        String adding = "127.0.0.1:" + spare;
        Run added = withLeaderKilled(leader, live, () -> nodes.cli("cluster", "add-node", adding,
            "127.0.0.1:" + via));
        assertThat(added.status()).as("seed %d, cycle %d: %s", SEED, cycle, added).isZero();
        members.add(spare);
        live.add(spare);

        int current = leaderPort(members.get(0), 0);
        int through = members.stream().filter(p -> p != current).findFirst().orElseThrow();
        int removed = members.stream().filter(p -> p != through).skip(random.nextInt(members.size() - 1))
            .findFirst().orElseThrow();
        String removedId;
        try (Jedis j = new Jedis("127.0.0.1", removed)) {
          removedId = j.clusterMyId();
        }
        Run deleted = withLeaderKilled(current, live, () -> nodes.cli("cluster", "del-node", "127.0.0.1:" + through,
            removedId));
        assertThat(deleted.status()).as("seed %d, cycle %d: %s", SEED, cycle, deleted).isZero();
        members.remove((Integer) removed);
        live.remove((Integer) removed);
        // a removed node is emptied before it serves again (docs/CLUSTER.md), and is the next spare
        nodes.kill(removed);
        try (Stream<Path> files = Files.walk(nodes.directory(removed))) {
          files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
        nodes.launch(removed);
        nodes.awaitReady(removed);
        spare = removed;
      }
      pause(1_000); // writes go on a moment after the last change
    } finally {
      running.set(false);
      long stopping = System.nanoTime();
      for (Thread t : writers) {
        t.join(60_000);
      }
      System.out.printf("MembershipChaosIT: writers stopped in %d ms%n", (System.nanoTime() - stopping) / 1_000_000);
    }

    int leader = addThroughLeader(members.get(0), "last"); // an entry of the leader's term: every member applies
    List<String> items = new ArrayList<>(acknowledged);
    System.out.printf("MembershipChaosIT: %d cycles (%d kills), seed %d: %d adds acknowledged, %d uncertain; "
        + "%d increments acknowledged, %d uncertain%n", CYCLES, 2 * CYCLES, SEED, items.size(), uncertainAdds.get(),
        increments.get(), uncertainIncrements.get());
    assertThat(items).as("seed %d: acknowledged adds", SEED).isNotEmpty();
    for (int member : members) {
      nodes.awaitCaughtUp(member, leader);
      try (Jedis j = new Jedis("127.0.0.1", member, 30_000)) {
        if (member != leader) {
          j.readonly();
        }
        for (int from = 0; from < items.size(); from += 1_000) {
          List<String> args = new ArrayList<>(List.of("urls"));
          args.addAll(items.subList(from, Math.min(items.size(), from + 1_000)));
          @SuppressWarnings("unchecked")
          Object found = j.sendCommand(command("BF.MEXISTS"), args.toArray(String[]::new));
          assertThat((List<Object>) found).as("seed %d: node %d holds every acknowledged add", SEED, member)
              .containsOnly(1L);
        }
        long count = (Long) ((List<?>) j.sendCommand(command("CMS.QUERY"), "counts", "x")).get(0);
        assertThat(count).as("seed %d: node %d's counter", SEED, member).isBetween(increments.get(),
            increments.get() + uncertainIncrements.get());
      }
    }
  }

  /** A leader that moved, or a shard with none at the moment: the write was not applied. */
  private static final class Redirected extends Exception {
    private static final long serialVersionUID = 1L;

    Redirected(String message) {
      super(message, null, false, false);
    }
  }

  /**
   * Sends one write: {@code true} once acknowledged; throws {@link Redirected} if it was refused unapplied; counts
   * it in {@code uncertain} and rethrows if its fate is unknown (the connection lost, or the node says it may or may
   * not have been applied).
   */
  private static boolean write(Jedis j, String name, AtomicLong uncertain, String... args) throws Redirected {
    try {
      j.sendCommand(command(name), args);
      return true;
    } catch (JedisDataException e) {
      String m = String.valueOf(e.getMessage());
      if (m.startsWith("MOVED") || m.startsWith("CLUSTERDOWN") || m.startsWith("READONLY")) {
        throw new Redirected(m);
      }
      uncertain.incrementAndGet();
      throw e;
    } catch (JedisConnectionException e) {
      if (e.getCause() instanceof java.net.ConnectException) {
        throw new Redirected("not sent: " + e.getMessage()); // a dead node: the write never left
      }
      uncertain.incrementAndGet();
      throw e;
    } catch (RuntimeException e) {
      uncertain.incrementAndGet();
      throw e;
    }
  }

  private interface Change {
    Run run() throws Exception;
  }

  /**
   * Runs {@code change} while, at a random moment in its first 3 s, the node of {@code leader} is killed with
   * SIGKILL, then started again on its directory 1 s later.
   */
  private Run withLeaderKilled(int leader, List<Integer> live, Change change) throws Exception {
    long delay = random.nextInt(3_000);
    long start = System.nanoTime();
    Thread killer = Thread.ofPlatform().name("killer").start(() -> {
      try {
        Thread.sleep(delay);
        live.remove((Integer) leader);
        nodes.kill(leader);
        Thread.sleep(1_000);
        nodes.launch(leader);
        nodes.awaitReady(leader);
        live.add(leader);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    try {
      Run run = change.run();
      // where a slow run's time went: each change's duration, printed with the kill's moment
      System.out.printf("MembershipChaosIT: %s took %d ms, leader %d killed after %d ms, status %d%n",
          run.err().isEmpty() ? "a change" : "a change (" + run.err().strip() + ")",
          (System.nanoTime() - start) / 1_000_000, leader, delay, run.status());
      return run;
    } finally {
      killer.join(120_000);
    }
  }

  /**
   * Adds {@code item} to "urls" through the shard's leader, as a cluster client finds it: first the one that the node
   * on {@code port} names, then the one each MOVED names (a node's view may lag an election after the last change),
   * asking again after a CLUSTERDOWN; 30 s at most. Returns the port of the leader that took it.
   */
  private static int addThroughLeader(int port, String item) throws InterruptedException {
    long deadline = System.nanoTime() + 30_000_000_000L;
    int leader = leaderPort(port, 0);
    while (true) {
      // 30 s to answer: a member killed by the last cycle may be needed for the shard's majority as it catches up
      try (Jedis j = new Jedis("127.0.0.1", leader, 30_000)) {
        j.sendCommand(command("BF.ADD"), "urls", item);
        return leader;
      } catch (JedisDataException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
        if (e instanceof JedisMovedDataException moved) {
          leader = moved.getTargetNode().getPort();
        } else { // CLUSTERDOWN while the shard elects
          Thread.sleep(100);
          leader = leaderPort(port, 0);
        }
      }
    }
  }

  private static void pause(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
