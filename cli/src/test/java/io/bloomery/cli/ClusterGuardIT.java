package io.bloomery.cli;

import static io.bloomery.cli.ClusterNodes.command;
import static io.bloomery.cli.ClusterNodes.leaderNamedBy;
import static io.bloomery.cli.ClusterNodes.leaderPort;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.cli.ClusterNodes.Run;
import io.bloomery.cluster.slot.HashSlot;
import io.bloomery.guard.PostgresCluster;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Response;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisMovedDataException;

/**
 * A guarded key (GUARD.*) in a cluster of three real node processes, one shard of three replicas, every node started
 * with {@code --store main=URL} on one real PostgreSQL database. GUARD.RESERVE on the shard's leader goes through the
 * shard's log and every replica opens the key on the same table with a replication slot of its own; the other
 * GUARD.* commands run on the leader only (MOVED elsewhere), but lookups after READONLY, which a follower answers
 * from its own copy.
 *
 * <p>Then four writer clients add, with GUARD.MADDONCE and a fresh token per request (a request that got no reply,
 * or an error, is sent again with the same token, to whatever node is the leader by then), items of their own and
 * items all writers add, while one reader keeps asking GUARD.EXISTS of items already acknowledged, and the shard's
 * leader is killed with SIGKILL three times (each time restarted on its directory). Afterwards every distinct item
 * was answered 1 exactly once over all clients, the table holds exactly the items added, the reader was never told
 * {@code maybe_present=0} for an acknowledged item, and neither is anyone on the final leader. Last, other commands'
 * writes to the guarded key answer WRONGTYPE and GUARD.DROP removes the key and every replica's slot.
 *
 * <p>{@code -Dchaos.seed=S} replays a run's choices (the kill moments, how long each killed node stays down, which
 * items the reader asks about); every failure names its seed.
 */
@Timeout(value = 170, unit = TimeUnit.SECONDS)
class ClusterGuardIT {
  private static final long SEED = Long.getLong("chaos.seed", System.nanoTime());
  private static final String KEY = "seen{g}";
  /** Added on the leader once the key is reserved, to be read on the followers after READONLY. */
  private static final String FOLLOWER_ITEM = "seen-on-followers";
  private static final int SLOT = HashSlot.of(KEY.getBytes(StandardCharsets.UTF_8));
  private static final int WRITERS = 4;
  private static final int KILLS = 3;
  /** Requests each writer sends at most (a bound on the run's length and on the final checks). */
  private static final int MAX_REQUESTS = 5_000;
  /** How long one request (or read) may go unanswered, retried, before the test fails. */
  private static final long REQUEST_SECONDS = 60;
  /** Cluster-mode slot names: {@code bloomery_g}, 16 hex digits (the key), {@code _}, 12 hex digits (the replica). */
  private static final String SLOT_NAME = "bloomery_g[0-9a-f]{16}_[0-9a-f]{12}";

  /** Kept when the test fails: the nodes' logs (node-PORT.log, and node-PORT.log.before-* of earlier starts). */
  @TempDir(cleanup = CleanupMode.ON_SUCCESS) Path dir;
  private ClusterNodes nodes;
  private final Random random = new Random(SEED);
  /** Nodes running now (a killed one is out until it is back), asked where the shard's leader is. */
  private final List<Integer> live = Collections.synchronizedList(new ArrayList<>());
  /** Errors clients were answered and retried, by kind (first word), with a few whole messages, for the output. */
  private final Map<String, AtomicInteger> retriedErrors = new ConcurrentHashMap<>();
  private final Map<String, String> retriedExamples = new ConcurrentHashMap<>();

  @AfterEach
  void stopNodes() throws InterruptedException {
    if (nodes != null) {
      nodes.close();
    }
  }

  @Test
  void guardedKeyKeepsExactlyOnceAndAcknowledgedItemsThroughLeaderKills() throws Exception {
    System.out.printf("ClusterGuardIT: seed %d (replay with -Dchaos.seed=%d), key %s in slot %d, nodes under %s%n",
        SEED, SEED, KEY, SLOT, dir);
    String url = PostgresCluster.shared().createDatabase();
    List<Integer> ports = startCluster(url, 3);

    // ---------------------------------------------------------------------------------- reserve, on every replica
    int leader;
    try (LeaderClient client = new LeaderClient("reserve")) { // to the leader, through an election if one runs
      assertThat(text(client.call("GUARD.RESERVE", KEY, "main", "0.01", "100000"))).as("seed %d: GUARD.RESERVE", SEED)
          .isEqualTo("OK");
      leader = client.port;
    }
    try (Jedis j = new Jedis("127.0.0.1", leader, 60_000)) {
      // the leader answers OK once its own copy is built: it answers at once, without a retry
      assertThat(j.sendCommand(command("GUARD.EXISTS"), KEY, "never-added")).isEqualTo(List.of(0L, 0L, 0L));
      assertThatThrownBy(() -> j.sendCommand(command("GUARD.RESERVE"), KEY, "main", "0.01", "1000"))
          .as("GUARD.RESERVE of a guarded key's name").isInstanceOf(JedisDataException.class)
          .hasMessageContaining("item exists");
      assertThat(j.sendCommand(command("BF.ADD"), "bloom{g}", "x")).isEqualTo(1L);
      assertThatThrownBy(() -> j.sendCommand(command("GUARD.RESERVE"), "bloom{g}", "main", "0.01", "1000"))
          .as("GUARD.RESERVE of a Bloom key's name").isInstanceOf(JedisDataException.class)
          .hasMessageContaining("item exists");
      assertThatThrownBy(() -> j.sendCommand(command("GUARD.RESERVE"), "other{g}", "nostore", "0.01", "1000"))
          .as("GUARD.RESERVE on a store not declared").isInstanceOf(JedisDataException.class)
          .hasMessageContaining("no store");
    }
    for (int follower : ports) {
      if (follower == leader) {
        continue;
      }
      try (Jedis j = new Jedis("127.0.0.1", follower, 10_000)) {
        for (String[] c : List.of(new String[] {"GUARD.EXISTS", KEY, "x"}, new String[] {"GUARD.ADD", KEY, "x"},
            new String[] {"GUARD.MADD", KEY, "x", "y"}, new String[] {"GUARD.INFO", KEY})) {
          assertThatThrownBy(() -> j.sendCommand(command(c[0]), List.of(c).subList(1, c.length)
              .toArray(String[]::new))).as("%s on the follower %d", c[0], follower)
              .isInstanceOf(JedisMovedDataException.class).hasMessage("MOVED " + SLOT + " 127.0.0.1:" + leader);
        }
      }
    }
    assertFollowersAnswerLookupsAfterReadonly(ports, leader);
    List<String> slots = awaitSlots(url, "every replica's replication slot", s -> s.size() == 3);
    assertThat(slots).as("seed %d: slot names", SEED).allMatch(s -> s.matches(SLOT_NAME)).doesNotHaveDuplicates();
    assertThat(slots.stream().map(s -> s.substring(0, "bloomery_g".length() + 16)).distinct())
        .as("one key's slots").hasSize(1);
    System.out.printf("ClusterGuardIT: leader %d, slots %s%n", leader, slots);

    // --------------------------------------------------------------------------- writers and a reader, with kills
    AtomicBoolean running = new AtomicBoolean(true);
    Map<String, AtomicInteger> ones = new ConcurrentHashMap<>(); // item: times answered 1
    Set<String> answered = ConcurrentHashMap.newKeySet(); // every item of an answered request
    List<String> acknowledged = Collections.synchronizedList(new ArrayList<>()); // in the order answered
    ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>(); // a thread's end by an exception
    ConcurrentLinkedQueue<String> wrongReplies = new ConcurrentLinkedQueue<>();
    ConcurrentLinkedQueue<String> missedReads = new ConcurrentLinkedQueue<>();
    AtomicLong requests = new AtomicLong();
    AtomicLong reads = new AtomicLong();
    AtomicInteger writersDone = new AtomicInteger();
    List<Thread> threads = new ArrayList<>();
    for (int w = 0; w < WRITERS; w++) {
      int writer = w;
      threads.add(Thread.ofPlatform().name("guard-writer-" + w).daemon().start(() -> {
        try (LeaderClient client = new LeaderClient("writer " + writer)) {
          for (int r = 0; r < MAX_REQUESTS && running.get(); r++) {
            // two items of its own and one that every writer adds (at about the same time: they go at one pace)
            List<String> items = List.of(item("w" + writer, r, 0), item("shared", r, 0), item("w" + writer, r, 1));
            List<String> args = new ArrayList<>(List.of(KEY, "t-" + SEED + "-" + writer + "-" + r));
            args.addAll(items);
            Object reply = client.call("GUARD.MADDONCE", args.toArray(String[]::new));
            if (!(reply instanceof List<?> list) || list.size() != items.size()
                || !list.stream().allMatch(v -> v.equals(0L) || v.equals(1L))) {
              wrongReplies.add("GUARD.MADDONCE " + args + " answered " + describe(reply));
              continue;
            }
            for (int i = 0; i < items.size(); i++) {
              if (list.get(i).equals(1L)) {
                ones.computeIfAbsent(items.get(i), x -> new AtomicInteger()).incrementAndGet();
              }
              answered.add(items.get(i));
              acknowledged.add(items.get(i));
            }
            requests.incrementAndGet();
            Thread.sleep(15);
          }
        } catch (Throwable e) {
          failures.add(Thread.currentThread().getName() + ": " + e);
          e.printStackTrace();
        } finally {
          writersDone.incrementAndGet();
        }
      }));
    }
    Random readerRandom = new Random(random.nextLong());
    threads.add(Thread.ofPlatform().name("guard-reader").daemon().start(() -> {
      try (LeaderClient client = new LeaderClient("reader")) {
        while (running.get()) {
          int known = acknowledged.size(); // each of these was answered before the read is sent
          if (known == 0) {
            Thread.sleep(20);
            continue;
          }
          String item = acknowledged.get(readerRandom.nextInt(known));
          Object reply = client.call("GUARD.EXISTS", KEY, item);
          if (!(reply instanceof List<?> v) || v.size() != 3) {
            wrongReplies.add("GUARD.EXISTS " + item + " answered " + describe(reply));
          } else if (!v.get(0).equals(1L) || v.get(1).equals(1L) && !v.get(2).equals(1L)) {
            missedReads.add(item + " (acknowledged) answered " + v + " by node " + client.port);
          }
          reads.incrementAndGet();
          Thread.sleep(2);
        }
      } catch (Throwable e) {
        failures.add(Thread.currentThread().getName() + ": " + e);
        e.printStackTrace();
      }
    }));

    try {
      for (int kill = 0; kill < KILLS; kill++) {
        awaitProgress(acknowledged, writersDone, failures, "before kill " + (kill + 1));
        Thread.sleep(random.nextInt(2_000));
        int victim = leaderPort(someLive(), SLOT);
        int before = acknowledged.size();
        live.remove((Integer) victim);
        nodes.kill(victim);
        long down = 500 + random.nextInt(1_500);
        System.out.printf("ClusterGuardIT: kill %d of the leader %d after %d acknowledged items; back in %d ms%n",
            kill + 1, victim, before, down);
        Thread.sleep(down);
        nodes.launch(victim);
        nodes.awaitReady(victim);
        live.add(victim);
        awaitProgress(acknowledged, writersDone, failures, "after kill " + (kill + 1));
        int now = leaderPort(someLive(), SLOT);
        nodes.awaitCaughtUp(victim, now);
        System.out.printf("ClusterGuardIT: leader now %d; %d killed is back and caught up%n", now, victim);
      }
      awaitProgress(acknowledged, writersDone, failures, "after the last kill");
    } finally {
      running.set(false);
      for (Thread t : threads) {
        t.join(TimeUnit.SECONDS.toMillis(REQUEST_SECONDS + 30));
        if (t.isAlive()) {
          failures.add(t.getName() + " did not end");
        }
      }
      System.out.printf("ClusterGuardIT: seed %d: %d requests answered, %d distinct items, %d reads; errors "
          + "retried %s, e.g. %s%n", SEED, requests.get(), answered.size(), reads.get(), retriedErrors,
          retriedExamples.values());
    }

    // -------------------------------------------------------------------------------------------- what is left
    assertThat(failures).as("seed %d: clients that failed", SEED).isEmpty();
    assertThat(wrongReplies).as("seed %d: replies of the wrong shape", SEED).isEmpty();
    assertThat(requests.get()).as("seed %d: answered requests", SEED).isPositive();
    assertThat(reads.get()).as("seed %d: answered reads", SEED).isPositive();
    assertThat(missedReads).as("seed %d: reads that missed an acknowledged item", SEED).isEmpty();
    Map<String, Integer> notOnce = new LinkedHashMap<>();
    for (String item : answered) {
      int n = ones.containsKey(item) ? ones.get(item).get() : 0;
      if (n != 1) {
        notOnce.put(item, n);
      }
    }
    assertThat(notOnce).as("seed %d: items not answered 1 exactly once (item: times)", SEED).isEmpty();
    assertThat(ones.keySet()).as("seed %d: items answered 1 were all sent", SEED).isSubsetOf(answered);

    List<String> table = tableItems(url);
    assertThat(table).as("seed %d: the store's rows", SEED).doesNotHaveDuplicates();
    Set<String> added = new HashSet<>(answered);
    added.add(FOLLOWER_ITEM); // added before the writers began, to read it on the followers
    assertThat(new HashSet<>(table)).as("seed %d: the store holds exactly the items added", SEED).isEqualTo(added);

    int last = leaderPort(someLive(), SLOT);
    List<String> all = new ArrayList<>(answered);
    try (LeaderClient client = new LeaderClient("final check")) {
      List<String> missing = client.existsAll(all);
      assertThat(missing).as("seed %d: acknowledged items the final leader (%d) does not say present", SEED, last)
          .isEmpty();
      // a duplicate is answered 0 by the new leader, a new item 1 once
      assertThat(client.call("GUARD.ADD", KEY, all.get(0))).isEqualTo(0L);
      assertThat(client.call("GUARD.ADD", KEY, "after-the-kills-" + SEED)).isEqualTo(1L);
      assertThat(client.call("GUARD.ADD", KEY, "after-the-kills-" + SEED)).isEqualTo(0L);
    }
    List<String> afterKills = awaitSlots(url, "every replica's slot followed (active) after the kills, none left"
        + " over", s -> s.size() == 3 && activeSlots(url) == 3);
    assertThat(afterKills).as("seed %d: slot names after the kills", SEED).allMatch(s -> s.matches(SLOT_NAME));

    // ---------------------------------------------------- GUARD.REBUILD, on every replica: seen after a failover
    Instant beforeRebuild = Instant.now();
    int rebuiltOn;
    try (LeaderClient client = new LeaderClient("rebuild")) {
      assertThat(text(client.call("GUARD.REBUILD", KEY))).isEqualTo("OK");
      assertThat(builtAt(client.call("GUARD.INFO", KEY))).as("seed %d: the leader's filter after GUARD.REBUILD",
          SEED).isAfterOrEqualTo(beforeRebuild.truncatedTo(java.time.temporal.ChronoUnit.SECONDS));
      rebuiltOn = client.port;
    }
    int successor = live.stream().filter(p -> p != rebuiltOn).findFirst().orElseThrow();
    Run failover = nodes.cli("cluster", "failover", "127.0.0.1:" + successor);
    assertThat(failover.status()).as(failover.toString()).isZero();
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(REQUEST_SECONDS);
    Instant successorBuilt;
    do {
      try (Jedis j = new Jedis("127.0.0.1", successor, 10_000)) {
        successorBuilt = builtAt(j.sendCommand(command("GUARD.INFO"), KEY));
      } catch (JedisDataException e) { // MOVED while the transfer settles
        successorBuilt = Instant.EPOCH;
      }
    } while (successorBuilt.isBefore(beforeRebuild.truncatedTo(java.time.temporal.ChronoUnit.SECONDS))
        && System.nanoTime() < until && sleep(200));
    assertThat(successorBuilt).as("seed %d: node %d's filter, a follower when GUARD.REBUILD ran, now the leader",
        SEED, successor).isAfterOrEqualTo(beforeRebuild.truncatedTo(java.time.temporal.ChronoUnit.SECONDS));

    // ------------------------------------------------------------------------------- other commands, and the drop
    try (LeaderClient client = new LeaderClient("drop")) {
      assertThatThrownBy(() -> client.call("BF.ADD", KEY, "x")).as("BF.ADD on the guarded key")
          .isInstanceOf(JedisDataException.class).hasMessageStartingWith("WRONGTYPE");
      assertThatThrownBy(() -> client.call("CF.ADD", KEY, "x")).as("CF.ADD on the guarded key")
          .isInstanceOf(JedisDataException.class).hasMessageStartingWith("WRONGTYPE");
      assertThat(client.call("GUARD.EXISTS", KEY, all.get(0))).as("the guarded key after those")
          .isEqualTo(List.of(1L, 1L, 1L));
      assertThat(text(client.call("GUARD.DROP", KEY))).isEqualTo("OK");
      assertThatThrownBy(() -> client.call("GUARD.EXISTS", KEY, all.get(0))).as("GUARD.EXISTS after GUARD.DROP")
          .isInstanceOf(JedisDataException.class).hasMessageContaining("no such guarded key");
    }
    awaitSlots(url, "no slot of the dropped key", List::isEmpty);
  }

  /**
   * Six nodes, two shards of three: {@code bloomery cluster reshard} of the highest 1000 slots of the first shard,
   * among them the guarded key's, moves the key with them while a client keeps adding to it. Afterwards the second
   * shard's leader answers for it: every item acknowledged before, during and after the move is there, an item added
   * before answers 0 when added again (exactly once, decided by the store), and the replication slots of the key are
   * the second shard's three nodes' only (the first shard's nodes dropped theirs; the rows stayed in the store).
   */
  /**
   * After READONLY a follower answers GUARD.EXISTS, MEXISTS and INFO from its own copy, which follows the store: an
   * item added on the leader shows there once the follower's stream brings its row; writes still go to the leader,
   * and READWRITE ends it.
   */
  private static void assertFollowersAnswerLookupsAfterReadonly(List<Integer> ports, int leader) throws Exception {
    try (Jedis j = new Jedis("127.0.0.1", leader, 60_000)) {
      assertThat(j.sendCommand(command("GUARD.ADD"), KEY, FOLLOWER_ITEM)).isEqualTo(1L);
    }
    for (int follower : ports) {
      if (follower == leader) {
        continue;
      }
      try (Jedis j = new Jedis("127.0.0.1", follower, 10_000)) {
        assertThat(text(j.sendCommand(command("READONLY")))).isEqualTo("OK");
        assertThat(j.sendCommand(command("GUARD.EXISTS"), KEY, "never-added")).as("follower %d", follower)
            .isEqualTo(List.of(0L, 0L, 0L));
        await("the follower " + follower + " answers 1 for an item added on the leader",
            () -> ((List<?>) j.sendCommand(command("GUARD.EXISTS"), KEY, FOLLOWER_ITEM)).get(0).equals(1L));
        List<?> both = (List<?>) j.sendCommand(command("GUARD.MEXISTS"), KEY, FOLLOWER_ITEM, "never-added");
        assertThat(both.stream().map(v -> ((List<?>) v).get(0)).toList()).isEqualTo(List.of(1L, 0L));
        assertThat(((List<?>) j.sendCommand(command("GUARD.INFO"), KEY)).stream().map(ClusterGuardIT::text))
            .as("GUARD.INFO on follower %d", follower).contains("state", "ready");
        assertThatThrownBy(() -> j.sendCommand(command("GUARD.ADD"), KEY, "y")).as("a write after READONLY")
            .isInstanceOf(JedisMovedDataException.class).hasMessage("MOVED " + SLOT + " 127.0.0.1:" + leader);
        assertThat(text(j.sendCommand(command("READWRITE")))).isEqualTo("OK");
        assertThatThrownBy(() -> j.sendCommand(command("GUARD.EXISTS"), KEY, "x")).as("a lookup after READWRITE")
            .isInstanceOf(JedisMovedDataException.class).hasMessage("MOVED " + SLOT + " 127.0.0.1:" + leader);
      }
    }
  }

  @Test
  void reshardMovesAGuardedKeyWithItsSlotWhileItIsWritten() throws Exception {
    System.out.printf("ClusterGuardIT: reshard test, nodes under %s%n", dir);
    String url = PostgresCluster.shared().createDatabase();
    List<Integer> ports = startCluster(url, 6);
    String[] addresses = ClusterNodes.addresses(ports);
    assertThat(SLOT).as("the key's slot is among the first shard's highest 1000 (0-8191)").isBetween(7192, 8191);
    List<String> acknowledged = Collections.synchronizedList(new ArrayList<>());
    try (LeaderClient client = new LeaderClient("reserve")) {
      assertThat(text(client.call("GUARD.RESERVE", KEY, "main", "0.01", "100000"))).isEqualTo("OK");
      assertThat(client.call("GUARD.ADD", KEY, "before-the-reshard")).isEqualTo(1L);
      acknowledged.add("before-the-reshard");
    }
    awaitSlots(url, "the first shard's replication slots", s -> s.size() == 3);

    AtomicBoolean running = new AtomicBoolean(true);
    ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
    Thread writer = Thread.ofPlatform().name("reshard-writer").start(() -> {
      try (LeaderClient client = new LeaderClient("writer")) {
        for (int i = 0; running.get() && i < MAX_REQUESTS; i++) {
          Object answer = client.call("GUARD.ADD", KEY, "during-" + i);
          if (!Long.valueOf(1).equals(answer)) {
            failures.add("during-" + i + " answered " + describe(answer));
          }
          acknowledged.add("during-" + i);
          sleep(5);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (RuntimeException | AssertionError e) {
        failures.add(e.toString());
      }
    });
    // a reader asks for the last acknowledged item, over and over, through the move: never "absent"
    ConcurrentLinkedQueue<String> missedReads = new ConcurrentLinkedQueue<>();
    AtomicLong reads = new AtomicLong();
    Thread reader = Thread.ofPlatform().name("reshard-reader").start(() -> {
      try (LeaderClient client = new LeaderClient("reader")) {
        while (running.get()) {
          String item = acknowledged.get(acknowledged.size() - 1); // acknowledged before this read began
          Object answer = client.call("GUARD.EXISTS", KEY, item);
          reads.incrementAndGet();
          if (!(answer instanceof List<?> v) || v.isEmpty() || !Long.valueOf(1).equals(v.get(0))) {
            missedReads.add(item + " " + describe(answer));
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (RuntimeException | AssertionError e) {
        failures.add("reader: " + e);
      }
    });
    await("the writer acknowledged 20 items", () -> acknowledged.size() > 20 || !writer.isAlive());
    Run moved = nodes.cli("cluster", "reshard", "--from", "0", "--to", "1", "--slots", "1000", addresses[5]);
    assertThat(moved.status()).as("the reshard of the guarded key's slot: %s", moved).isZero();
    assertThat(moved.out()).contains("moved 1000 slots");
    int atMove = acknowledged.size();
    await("the writer acknowledged 20 items after the move", () -> acknowledged.size() > atMove + 20
        || !writer.isAlive());
    running.set(false);
    writer.join(TimeUnit.SECONDS.toMillis(REQUEST_SECONDS * 2));
    reader.join(TimeUnit.SECONDS.toMillis(REQUEST_SECONDS * 2));
    assertThat(failures).as("the writer's wrong answers and failures").isEmpty();
    assertThat(missedReads).as("reads (of %d) that answered an acknowledged item absent", reads.get()).isEmpty();

    Run status = nodes.cli("cluster", "status", addresses[0]);
    assertThat(status.status()).as(status.toString()).isZero();
    assertThat(status.out()).contains("slots 0-7191").doesNotContain("reshard under way");
    int leader = leaderNamedBy(ports.get(0), SLOT);
    assertThat(ports.subList(3, 6)).as("the key's slot is led by a node of the second shard").contains(leader);
    try (LeaderClient client = new LeaderClient("after the reshard")) {
      List<String> all = List.copyOf(acknowledged);
      assertThat(client.existsAll(all)).as("acknowledged items (%d) missing after the move", all.size()).isEmpty();
      assertThat(client.call("GUARD.ADD", KEY, "before-the-reshard")).as("added before: exactly once").isEqualTo(0L);
      assertThat(client.call("GUARD.ADD", KEY, "after-the-reshard")).isEqualTo(1L);
    }
    try (Jedis first = new Jedis("127.0.0.1", ports.get(0), 10_000)) {
      assertThatThrownBy(() -> first.sendCommand(command("GUARD.EXISTS"), KEY, "before-the-reshard"))
          .isInstanceOf(JedisMovedDataException.class).hasMessage("MOVED " + SLOT + " 127.0.0.1:" + leader);
    }
    Set<String> secondShard = new java.util.HashSet<>();
    for (int port : ports.subList(3, 6)) {
      try (Jedis j = new Jedis("127.0.0.1", port, 10_000)) {
        secondShard.add(text(j.sendCommand(command("CLUSTER"), "MYID")).substring(0, 12));
      }
    }
    List<String> slots = awaitSlots(url, "the second shard's replication slots only", s -> s.size() == 3
        && s.stream().allMatch(n -> secondShard.contains(n.substring(n.length() - 12))));
    System.out.printf("ClusterGuardIT: %d items acknowledged and %d reads through the move; slots after it %s%n%s",
        acknowledged.size(), reads.get(), slots, moved.out());
  }

  @Test
  void nodeRemovedWhileDownLeavesNoReplicationSlotBehind() throws Exception {
    System.out.printf("ClusterGuardIT: del-node of a node that is down, nodes under %s%n", dir);
    String url = PostgresCluster.shared().createDatabase();
    List<Integer> ports = startCluster(url, 3);
    int leader;
    try (LeaderClient client = new LeaderClient("reserve")) {
      assertThat(text(client.call("GUARD.RESERVE", KEY, "main", "0.01", "100000"))).isEqualTo("OK");
      assertThat(client.call("GUARD.ADD", KEY, "before-the-removal")).isEqualTo(1L);
      leader = client.port;
    }
    awaitSlots(url, "a replication slot per replica", s -> s.size() == 3);
    int down = ports.stream().filter(p -> p != leader).findFirst().orElseThrow();
    String downId = myId(down);
    String downTag = downId.substring(0, 12);
    nodes.kill(down);
    live.remove(Integer.valueOf(down));
    // PostgreSQL frees the slot once its walsender sees the connection closed
    awaitSlots(url, "the killed node's slot no longer in use", s -> query(url, "SELECT count(*) FROM"
        + " pg_replication_slots WHERE slot_name LIKE '%\\_" + downTag + "' AND NOT active"
        + " AND database = current_database()").equals(List.of("1")));

    Run removed = nodes.cli("cluster", "del-node", "127.0.0.1:" + leader, downId);
    assertThat(removed.status()).as(removed.toString()).isZero();
    assertThat(removed.out()).contains("did not answer LEAVE").doesNotContain("may be left in PostgreSQL")
        .doesNotContain("No remaining node answered");
    List<String> after = slots(url);
    assertThat(after).as("del-node dropped the slot of the node it removed while down, and only that one")
        .hasSize(2).noneMatch(n -> n.endsWith("_" + downTag)).allMatch(n -> n.matches(SLOT_NAME));
    assertThat(query(url, "SELECT count(*) FROM pg_publication WHERE pubname LIKE '%\\_" + downTag + "'"))
        .as("and its publication").isEqualTo(List.of("0"));
    try (LeaderClient client = new LeaderClient("after the removal")) {
      assertThat(client.call("GUARD.ADD", KEY, "before-the-removal")).as("added before: exactly once").isEqualTo(0L);
      assertThat(client.call("GUARD.ADD", KEY, "after-the-removal")).isEqualTo(1L);
    }
    int kept = ports.stream().filter(p -> p != leader && p != down).findFirst().orElseThrow();
    String listedId = myId(leader);
    try (Jedis j = new Jedis("127.0.0.1", kept, 10_000)) {
      assertThatThrownBy(() -> j.sendCommand(command("CLUSTER"), "FORGET", listedId))
          .as("FORGET of a node the cluster lists").isInstanceOf(JedisDataException.class)
          .hasMessageContaining("the cluster still lists node " + listedId);
    }
    assertThat(slots(url)).as("a refused FORGET drops nothing").hasSize(2);
  }

  /** Starts {@code count} nodes that declare store {@code main} at {@code url}, and a cluster of shards of 3. */
  private List<Integer> startCluster(String url, int count) throws Exception {
    nodes = new ClusterNodes(dir, List.of("--store", "main=" + url, "--guard-timeout", "2000"));
    List<Integer> ports = nodes.start(count, -1);
    live.addAll(ports);
    Run created = nodes.create(3, ClusterNodes.addresses(ports));
    assertThat(created.status()).as(created.toString()).isZero();
    return ports;
  }

  private static String myId(int port) {
    try (Jedis j = new Jedis("127.0.0.1", port, 10_000)) {
      return text(j.sendCommand(command("CLUSTER"), "MYID"));
    }
  }

  private static boolean sleep(long millis) throws InterruptedException {
    Thread.sleep(millis);
    return true;
  }

  /** The {@code built_at} of a GUARD.INFO reply (RESP2: field, value, ...). */
  private static Instant builtAt(Object info) {
    List<?> fields = (List<?>) info;
    for (int i = 0; i + 1 < fields.size(); i += 2) {
      if (text(fields.get(i)).equals("built_at")) {
        return Instant.parse(text(fields.get(i + 1)));
      }
    }
    throw new AssertionError("GUARD.INFO has no built_at: " + describe(info));
  }

  // ------------------------------------------------------------------------------------------------- clients

  /**
   * One client's connection to the shard's leader: follows MOVED, finds the leader again (asking the live nodes)
   * after a lost connection or CLUSTERDOWN, and sends a command again after any error but those that no retry can
   * change, for {@link #REQUEST_SECONDS} at most.
   */
  private final class LeaderClient implements AutoCloseable {
    private final String name;
    private Jedis jedis;
    /** The node this client sends to; -1 while it must find the leader. */
    volatile int port = -1;

    LeaderClient(String name) {
      this.name = name;
    }

    Object call(String verb, String... args) throws InterruptedException {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(REQUEST_SECONDS);
      RuntimeException last = null;
      while (System.nanoTime() < deadline) {
        try {
          if (jedis == null) {
            if (port < 0) {
              port = leaderNamedBy(someLive(), SLOT);
            }
            if (port < 0) {
              Thread.sleep(50);
              continue;
            }
            jedis = new Jedis("127.0.0.1", port, 10_000);
          }
          return jedis.sendCommand(command(verb), args);
        } catch (JedisMovedDataException e) {
          retried(e);
          last = e;
          disconnect();
          port = e.getTargetNode().getPort();
        } catch (JedisDataException e) {
          String m = String.valueOf(e.getMessage());
          if (m.startsWith("WRONGTYPE") || m.contains("no such guarded key") || m.contains("item exists")
              || m.contains("no store") || m.contains("wrong number") || m.contains("syntax")
              || m.contains("unknown command")) {
            throw e; // an answer, not a failure of the moment
          }
          retried(e);
          last = e;
          if (m.startsWith("CLUSTERDOWN")) {
            disconnect();
            port = -1;
          }
          Thread.sleep(50);
        } catch (JedisConnectionException e) {
          retried(e);
          last = e;
          disconnect();
          port = -1;
          Thread.sleep(50);
        } catch (RuntimeException e) { // leaderNamedBy of a node just killed, a reply Jedis cannot read, ...
          retried(e);
          last = e;
          disconnect();
          port = -1;
          Thread.sleep(50);
        }
      }
      throw new AssertionError("seed " + SEED + ": " + name + ": " + verb + " " + List.of(args)
          + " got no reply in " + REQUEST_SECONDS + " s", last);
    }

    /** The items of {@code items} GUARD.EXISTS on the leader does not answer maybe_present=1 for. */
    List<String> existsAll(List<String> items) throws InterruptedException {
      List<String> missing = new ArrayList<>();
      for (int from = 0; from < items.size(); from += 500) {
        List<String> batch = items.subList(from, Math.min(items.size(), from + 500));
        List<Object> replies = new ArrayList<>();
        try {
          if (jedis == null) {
            call("PING");
          }
          Pipeline p = jedis.pipelined();
          List<Response<Object>> responses = new ArrayList<>();
          for (String item : batch) {
            responses.add(p.sendCommand(command("GUARD.EXISTS"), KEY, item));
          }
          p.sync();
          for (Response<Object> r : responses) {
            replies.add(r.get());
          }
        } catch (RuntimeException e) { // one by one, retried, where the batch met an error or a redirection
          retried(e);
          disconnect();
          replies.clear();
          for (String item : batch) {
            replies.add(call("GUARD.EXISTS", KEY, item));
          }
        }
        for (int i = 0; i < batch.size(); i++) {
          if (!(replies.get(i) instanceof List<?> v) || !v.equals(List.of(1L, 1L, 1L)) && !(v.size() == 3
              && v.get(0).equals(1L) && v.get(1).equals(0L))) {
            missing.add(batch.get(i) + " " + describe(replies.get(i)));
          }
        }
      }
      return missing;
    }

    private void retried(RuntimeException e) {
      String m = e instanceof JedisDataException ? String.valueOf(e.getMessage())
          : e.getClass().getSimpleName() + ": " + e.getMessage();
      String kind = m.split(" ", 2)[0];
      retriedErrors.computeIfAbsent(kind, k -> new AtomicInteger()).incrementAndGet();
      retriedExamples.putIfAbsent(kind, m);
    }

    private void disconnect() {
      if (jedis != null) {
        try {
          jedis.close();
        } catch (RuntimeException ignored) {
          // a broken connection
        }
        jedis = null;
      }
    }

    @Override
    public void close() {
      disconnect();
    }
  }

  /** A node running now (chosen at random, so a node that names no leader is not asked forever). */
  private int someLive() {
    synchronized (live) {
      return live.get(ThreadLocalRandom.current().nextInt(live.size())); // not seeded: timing decides anyway
    }
  }

  /**
   * Waits (60 s at most) until at least 30 more items are acknowledged than when this began (the writers go on
   * against the shard's leader of the moment), unless every writer ended.
   */
  private static void awaitProgress(List<String> acknowledged, AtomicInteger writersDone,
      ConcurrentLinkedQueue<String> failures, String when) throws InterruptedException {
    int start = acknowledged.size();
    await("seed " + SEED + ": writers acknowledged 30 more items " + when + " (failures: " + failures + ")",
        () -> acknowledged.size() >= start + 30 || writersDone.get() == WRITERS);
  }

  private static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not in 60 s: " + what);
      }
      Thread.sleep(100);
    }
  }

  // ------------------------------------------------------------------------------------------------ PostgreSQL

  private interface SlotsCondition {
    boolean holds(List<String> slots) throws SQLException;
  }

  /** Waits (60 s at most) until this database's guard replication slots satisfy {@code condition}; returns them. */
  private static List<String> awaitSlots(String url, String what, SlotsCondition condition) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      List<String> slots = slots(url);
      if (condition.holds(slots)) {
        return slots;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("seed " + SEED + ": not in 60 s: " + what + "; slots now "
            + query(url, "SELECT slot_name || ' active=' || active FROM pg_replication_slots"
                + " WHERE slot_name LIKE 'bloomery_g%' AND database = current_database()"));
      }
      Thread.sleep(200);
    }
  }

  /** The guard replication slots of this database (the PostgreSQL cluster is shared with other tests). */
  private static List<String> slots(String url) throws SQLException {
    return query(url, "SELECT slot_name FROM pg_replication_slots WHERE slot_name LIKE 'bloomery_g%'"
        + " AND database = current_database() ORDER BY slot_name");
  }

  private static int activeSlots(String url) throws SQLException {
    return Integer.parseInt(query(url, "SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE"
        + " 'bloomery_g%' AND database = current_database() AND active").get(0));
  }

  /** The items in the guarded key's table (the only {@code bloomery_seen_*} table of this fresh database). */
  private static List<String> tableItems(String url) throws SQLException {
    List<String> tables = query(url, "SELECT tablename FROM pg_tables WHERE tablename LIKE 'bloomery_seen_%'"
        + " AND tablename !~ '_(pending|replies)$'");
    assertThat(tables).as("seed %d: the guarded key's table", SEED).hasSize(1);
    List<String> items = new ArrayList<>();
    try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT item FROM " + tables.get(0))) {
      while (rs.next()) {
        items.add(new String(rs.getBytes(1), StandardCharsets.UTF_8));
      }
    }
    return items;
  }

  private static List<String> query(String url, String sql) throws SQLException {
    List<String> rows = new ArrayList<>();
    try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      while (rs.next()) {
        rows.add(rs.getString(1));
      }
    }
    return rows;
  }

  // ------------------------------------------------------------------------------------------------- helpers

  private static String item(String who, int request, int n) {
    return "https://crawl.example/" + who + "/" + request + "/" + n + "?seed=" + (SEED % 1000);
  }

  private static String text(Object reply) {
    return reply instanceof byte[] b ? new String(b, StandardCharsets.UTF_8) : String.valueOf(reply);
  }

  private static String describe(Object reply) {
    return reply instanceof byte[] b ? "\"" + new String(b, StandardCharsets.UTF_8) + "\"" : String.valueOf(reply);
  }
}
