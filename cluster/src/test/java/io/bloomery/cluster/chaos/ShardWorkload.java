package io.bloomery.cluster.chaos;

import static io.bloomery.cluster.shard.ShardClient.argv;

import io.bloomery.cluster.chaos.History.Add;
import io.bloomery.cluster.chaos.History.Effect;
import io.bloomery.cluster.chaos.History.Increment;
import io.bloomery.cluster.chaos.History.Op;
import io.bloomery.cluster.chaos.History.Query;
import io.bloomery.cluster.chaos.History.Read;
import io.bloomery.cluster.shard.ShardClient;
import io.bloomery.cluster.shard.ShardGroup;
import io.bloomery.server.resp.Reply;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.ratis.protocol.exceptions.RaftRetryFailureException;
import org.apache.ratis.protocol.exceptions.TimeoutIOException;

/**
 * Writers and readers on one shard through {@link ShardClient}s, each on its own thread and client, recording
 * every operation in a {@link History}:
 * <ul>
 *   <li>writers: {@code BF.ADD} and {@code BF.MADD} of items no one else adds to {@code bf:0..3};
 *       {@code CF.ADD} of the one item {@code x} to a cuckoo key {@code cf:N} (N advancing every 16 adds, so CF.COUNT
 *       counts a single item's copies, exactly); {@code CMS.INCRBY} of items {@code a..d} of {@code cms:0..3} by
 *       1..5 (sketches of 2000×5 counters holding four items: exact but for a collision in all five rows);</li>
 *   <li>readers: linearizable {@code BF.MEXISTS} of items already sent, {@code CF.EXISTS}, {@code CF.COUNT} and
 *       {@code CMS.QUERY}.</li>
 * </ul>
 * A reply that is an error, or of a shape the command never answers, stops the workload as a failure: none is
 * expected. After {@link #stop}, {@link #readEverythingAt} reads every key on every replica at one log index into the
 * history and checks that the replicas hold the same bytes.
 */
public final class ShardWorkload implements AutoCloseable {
  private static final int BLOOM_KEYS = 4;
  private static final int SKETCH_KEYS = 4;
  private static final List<String> SKETCH_ITEMS = List.of("a", "b", "c", "d");
  private static final int ADDS_PER_CUCKOO_KEY = 16;

  private final ShardGroup group;
  private final History history;
  private final long seed;
  private final Duration retryFor;
  private final List<Thread> threads = new ArrayList<>();
  private final List<ShardClient> clients = new CopyOnWriteArrayList<>();
  private final Map<String, List<String>> sent = new ConcurrentHashMap<>();
  private final AtomicInteger cuckooAdds = new AtomicInteger();
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private volatile boolean running;

  /**
   * @param retryFor how long each client retries one request (a leader being elected) before the operation is
   *     recorded as timed out
   */
  public ShardWorkload(ShardGroup group, History history, long seed, Duration retryFor) {
    this.group = group;
    this.history = history;
    this.seed = seed;
    this.retryFor = retryFor;
  }

  /** Creates the sketches the writers increment (before any fault). */
  public void prepare(ShardClient client) throws IOException {
    for (int k = 0; k < SKETCH_KEYS; k++) {
      expect(client.write(argv("CMS.INITBYDIM", "cms:" + k, "2000", "5")).reply(), "CMS.INITBYDIM");
    }
  }

  /** Starts {@code writers} writer and {@code readers} reader threads. */
  public void start(int writers, int readers) {
    running = true;
    for (int w = 0; w < writers; w++) {
      spawn("writer-" + w, new Random(seed * 31 + w), this::writeOnce);
    }
    for (int r = 0; r < readers; r++) {
      spawn("reader-" + r, new Random(seed * 37 + 1000 + r), this::readOnce);
    }
  }

  private interface Step {
    void run(String name, ShardClient client, Random random);
  }

  private void spawn(String name, Random random, Step step) {
    ShardClient client = new ShardClient(group, retryFor);
    clients.add(client);
    Thread t = new Thread(() -> {
      try {
        while (running && failure.get() == null) {
          step.run(name, client, random);
        }
      } catch (Throwable e) {
        failure.compareAndSet(null, e);
      }
    }, "workload-" + name);
    t.setDaemon(true);
    threads.add(t);
    t.start();
  }

  private void writeOnce(String name, ShardClient client, Random random) {
    int kind = random.nextInt(10);
    if (kind < 3) {
      String key = "bf:" + random.nextInt(BLOOM_KEYS);
      String item = name + "-" + random.nextLong();
      write(name, client, List.of(new Add(key, item)), "BF.ADD", key, item);
    } else if (kind < 5) {
      String key = "bf:" + random.nextInt(BLOOM_KEYS);
      List<String> args = new ArrayList<>(List.of("BF.MADD", key));
      List<Effect> effects = new ArrayList<>();
      for (int i = 1 + random.nextInt(4); i > 0; i--) {
        String item = name + "-" + random.nextLong();
        args.add(item);
        effects.add(new Add(key, item));
      }
      write(name, client, effects, args.toArray(String[]::new));
    } else if (kind < 7) {
      String key = "cf:" + cuckooAdds.getAndIncrement() / ADDS_PER_CUCKOO_KEY;
      write(name, client, List.of(new Add(key, "x"), new Increment(key, "x", 1)), "CF.ADD", key, "x");
    } else {
      String key = "cms:" + random.nextInt(SKETCH_KEYS);
      List<String> args = new ArrayList<>(List.of("CMS.INCRBY", key));
      List<Effect> effects = new ArrayList<>();
      for (String item : SKETCH_ITEMS) {
        if (random.nextBoolean()) {
          long by = 1 + random.nextInt(5);
          args.addAll(List.of(item, Long.toString(by)));
          effects.add(new Increment(key, item, by));
        }
      }
      if (!effects.isEmpty()) {
        write(name, client, effects, args.toArray(String[]::new));
      }
    }
  }

  private void write(String name, ShardClient client, List<Effect> effects, String... args) {
    for (Effect e : effects) {
      if (e instanceof Add a) {
        sent.computeIfAbsent(a.key(), k -> new CopyOnWriteArrayList<>()).add(a.item());
      }
    }
    Op op = history.write(name, String.join(" ", args), effects);
    try {
      ShardClient.Answer answer = client.write(argv(args));
      expect(answer.reply(), op.description());
      op.ok(answer.logIndex());
    } catch (IOException e) {
      complete(op, e);
    }
  }

  private void readOnce(String name, ShardClient client, Random random) {
    int kind = random.nextInt(4);
    if (kind == 0) {
      String key = "bf:" + random.nextInt(BLOOM_KEYS);
      List<String> items = sent.getOrDefault(key, List.of());
      if (items.isEmpty()) {
        return;
      }
      List<String> pick = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        pick.add(items.get(items.size() - 1 - random.nextInt(Math.min(items.size(), 64))));
      }
      read(name, client, Read.linearizable(Query.CONTAINS, key, pick));
    } else if (kind < 3) {
      int last = cuckooAdds.get() / ADDS_PER_CUCKOO_KEY;
      String key = "cf:" + Math.max(0, last - random.nextInt(3));
      read(name, client, Read.linearizable(kind == 1 ? Query.CONTAINS : Query.COUNT, key, List.of("x")));
    } else {
      read(name, client, Read.linearizable(Query.COUNT, "cms:" + random.nextInt(SKETCH_KEYS), SKETCH_ITEMS));
    }
  }

  /** The command that asks {@code read} of a key of this workload's. */
  private static List<byte[]> command(Read read) {
    String kind = read.key().substring(0, read.key().indexOf(':'));
    List<String> args = new ArrayList<>();
    switch (kind) {
      case "bf" -> args.add("BF.MEXISTS");
      case "cf" -> args.add(read.query() == Query.CONTAINS ? "CF.EXISTS" : "CF.COUNT");
      case "cms" -> args.add("CMS.QUERY");
      default -> throw new IllegalArgumentException("not a workload key: " + read.key());
    }
    args.add(read.key());
    args.addAll(read.items());
    return argv(args.toArray(String[]::new));
  }

  private void read(String name, ShardClient client, Read read) {
    List<byte[]> command = command(read);
    Op op = history.read(name, new String(command.get(0), java.nio.charset.StandardCharsets.UTF_8) + " "
        + read.key() + " " + read.items(), read);
    try {
      Reply reply = client.read(command).reply();
      op.ok(values(reply, read.items().size(), op.description()));
    } catch (IOException e) {
      complete(op, e);
    }
  }

  /** Records a failed request: timed out when the client gave up retrying or waiting, failed otherwise. */
  private static void complete(Op op, IOException e) {
    if (e instanceof TimeoutIOException || e instanceof RaftRetryFailureException
        || e.getCause() instanceof TimeoutException) {
      op.timeout(e.toString());
    } else {
      op.fail(e.toString());
    }
  }

  private static Reply expect(Reply reply, String what) {
    if (reply instanceof Reply.Error error) {
      throw new IllegalStateException(what + " answered " + error.text());
    }
    return reply;
  }

  /** A read's reply as one value per item: booleans as 1/0, integers as they are. */
  private static List<Long> values(Reply reply, int items, String what) {
    expect(reply, what);
    List<Reply> elements = reply instanceof Reply.Array a ? a.elements() : List.of(reply);
    if (elements.size() != items) {
      throw new IllegalStateException(what + " answered " + elements.size() + " values for " + items + " items");
    }
    List<Long> out = new ArrayList<>(items);
    for (Reply e : elements) {
      out.add(switch (e) {
        case Reply.Bool b -> b.value() ? 1L : 0L;
        case Reply.Int i -> i.value();
        default -> throw new IllegalStateException(what + " answered " + e);
      });
    }
    return out;
  }

  /** Stops every thread; rethrows what stopped one early. */
  public void stop() throws Exception {
    running = false;
    for (Thread t : threads) {
      t.join(Duration.ofMinutes(2));
      if (t.isAlive()) {
        throw new IllegalStateException(t.getName() + " did not stop in 2 min");
      }
    }
    Throwable e = failure.get();
    if (e != null) {
      throw new AssertionError("a workload thread failed (seed " + seed + ")", e);
    }
  }

  /** Every key a writer touched. */
  private List<String> keys() {
    List<String> keys = new ArrayList<>();
    for (int k = 0; k < BLOOM_KEYS; k++) {
      keys.add("bf:" + k);
    }
    for (int k = 0; k < SKETCH_KEYS; k++) {
      keys.add("cms:" + k);
    }
    for (int k = 0; k <= (cuckooAdds.get() - 1) / ADDS_PER_CUCKOO_KEY; k++) {
      keys.add("cf:" + k);
    }
    return keys;
  }

  /**
   * After {@link #stop}: reads, on each of {@code replicas} once it has applied {@code index}, every item any writer
   * sent (membership and counts, recorded in the history as reads at that index), and checks that every replica
   * answers the same and holds the same bytes for every key ({@code DUMP}). Retries a replica that is not there
   * yet for up to {@code patience}.
   */
  public void readEverythingAt(ShardClient client, List<String> replicas, long index, Duration patience)
      throws Exception {
    Map<String, Map<String, Object>> seenBy = new LinkedHashMap<>();
    for (String replica : replicas) {
      Map<String, Object> seen = new LinkedHashMap<>();
      for (String key : keys()) {
        List<Read> reads = new ArrayList<>();
        if (key.startsWith("bf:")) {
          reads.add(Read.atIndex(Query.CONTAINS, key, sent.getOrDefault(key, List.of("none")), index));
        } else if (key.startsWith("cf:")) {
          reads.add(Read.atIndex(Query.CONTAINS, key, List.of("x"), index));
          reads.add(Read.atIndex(Query.COUNT, key, List.of("x"), index));
        } else {
          reads.add(Read.atIndex(Query.COUNT, key, SKETCH_ITEMS, index));
        }
        for (Read read : reads) {
          List<byte[]> command = command(read);
          Reply reply = patiently(client, replica, index, command, patience);
          Op op = history.read("final@" + replica, new String(command.get(0), java.nio.charset.StandardCharsets.UTF_8)
              + " " + key, read);
          List<Long> values = values(reply, read.items().size(), op.description());
          op.ok(values);
          seen.put(op.description(), values);
        }
        Reply dump = patiently(client, replica, index, argv("DUMP", key), patience);
        seen.put("DUMP " + key, dump instanceof Reply.Bulk b ? Arrays.hashCode(b.bytes()) + "/" + b.bytes().length
            : dump.toString());
      }
      seenBy.put(replica, seen);
    }
    Map<String, Object> first = seenBy.values().iterator().next();
    seenBy.forEach((replica, seen) -> {
      if (!seen.equals(first)) {
        List<String> differ = seen.keySet().stream().filter(k -> !seen.get(k).equals(first.get(k))).toList();
        throw new AssertionError("replica " + replica + " differs from " + replicas.get(0) + " at index " + index
            + " in " + differ + " (seed " + seed + ")");
      }
    });
  }

  /**
   * {@code command}'s reply from {@code replica} once it has applied {@code index}, asking again every 100 ms while
   * the replica is not there yet (starting, or behind) for up to {@code patience}.
   */
  public static Reply patiently(ShardClient client, String replica, long index, List<byte[]> command,
      Duration patience) throws Exception {
    long deadline = System.nanoTime() + patience.toNanos();
    while (true) {
      try {
        return client.readAt(replica, index, command).reply();
      } catch (IOException notYet) { // the replica is starting, or has not applied index yet
        if (System.nanoTime() > deadline) {
          throw new AssertionError(replica + " did not reach index " + index + " in " + patience, notYet);
        }
        Thread.sleep(100);
      }
    }
  }

  /** Writes acknowledged so far. */
  public long acknowledgedWrites() {
    return history.ops().stream().filter(op -> op.read() == null && op.ok()).count();
  }

  @Override
  public void close() throws IOException {
    running = false;
    for (ShardClient c : clients) {
      c.close();
    }
  }
}
