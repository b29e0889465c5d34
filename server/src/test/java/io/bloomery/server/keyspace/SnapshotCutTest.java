package io.bloomery.server.keyspace;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.format.RedisBloomDump;
import io.bloomery.redisbloom.ScalableBloomFilter;
import io.bloomery.server.command.ClientState;
import io.bloomery.server.command.Dispatcher;
import io.bloomery.server.command.ServerContext;
import io.bloomery.server.command.Settings;
import io.bloomery.server.persistence.CommandJournal;
import io.bloomery.server.resp.Reply;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.RepeatedTest;

/**
 * The copy-on-write cut: while writers run, a snapshot plus every journal record after the cut rebuilds exactly
 * the final keyspace (no record applied twice, none missed).
 */
class SnapshotCutTest {

  private static List<byte[]> argv(String... parts) {
    List<byte[]> out = new ArrayList<>();
    for (String p : parts) {
      out.add(p.getBytes(StandardCharsets.UTF_8));
    }
    return out;
  }

  /** A journal that keeps every record in order, with a mark at the cut. */
  private static final class RecordingJournal implements CommandJournal {
    final List<List<byte[]>> records = Collections.synchronizedList(new ArrayList<>());
    volatile int cut = -1;

    @Override
    public CompletableFuture<Void> append(List<byte[]> record) {
      records.add(record);
      return CompletableFuture.completedFuture(null);
    }
  }

  private static Map<String, String> dump(Keyspace ks) {
    Map<String, String> out = new TreeMap<>();
    ks.forEach((k, v) -> {
      StringBuilder sb = new StringBuilder(Values.typeName(v));
      if (v instanceof ScalableBloomFilter f) {
        for (RedisBloomDump.Chunk c : RedisBloomDump.scanDumpAll(f)) {
          sb.append(':').append(java.util.Arrays.hashCode(c.data())).append('@').append(c.iterator());
        }
        sb.append(":n=").append(f.insertedCount());
      }
      out.put(k.toString(), sb.toString());
    });
    return out;
  }

  @RepeatedTest(5)
  void snapshotPlusRecordsAfterTheCutEqualsTheFinalState() throws Exception {
    Keyspace live = new Keyspace(System::currentTimeMillis);
    RecordingJournal journal = new RecordingJournal();
    live.journal(journal);
    ServerContext context = new ServerContext(live, new Settings());
    Dispatcher dispatcher = new Dispatcher(context);
    ClientState client = context.connect("test", "test");
    for (int k = 0; k < 16; k++) {
      dispatcher.execute(client, argv("BF.RESERVE", "key" + k, "0.01", "50"));
    }
    int writers = 4;
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger errors = new AtomicInteger();
    CountDownLatch started = new CountDownLatch(writers);
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < writers; t++) {
      int seed = t;
      Thread th = new Thread(() -> {
        SplittableRandom random = new SplittableRandom(seed);
        ClientState c = context.connect("w" + seed, "w");
        started.countDown();
        int i = 0;
        while (!stop.get() || i < 2000) {
          String key = "key" + random.nextInt(20);
          Reply r = switch (random.nextInt(10)) {
            case 0 -> dispatcher.execute(c, argv("DEL", key)).reply();
            case 1 -> dispatcher.execute(c, argv("BF.MADD", key, "m" + seed + "-" + i, "n" + i)).reply();
            default -> dispatcher.execute(c, argv("BF.ADD", key, "item-" + seed + "-" + i)).reply();
          };
          if (r instanceof Reply.Error e && !e.text().startsWith("WRONGTYPE")) {
            errors.incrementAndGet();
          }
          i++;
        }
      });
      th.start();
      threads.add(th);
    }
    started.await();
    Map<String, Object[]> snapshot = new TreeMap<>();
    live.snapshot(() -> journal.cut = journal.records.size(),
        (key, value, expireAt) -> {
          Object copy = Values.copy(value);
          snapshot.put(new String(key, StandardCharsets.UTF_8), new Object[] {copy, expireAt});
        });
    stop.set(true);
    for (Thread th : threads) {
      th.join();
    }
    assertThat(errors.get()).isZero();
    assertThat(journal.cut).isPositive();

    Keyspace rebuilt = new Keyspace(System::currentTimeMillis);
    snapshot.forEach((k, v) -> rebuilt.restore(k.getBytes(StandardCharsets.UTF_8), v[0], (Long) v[1]));
    Dispatcher replayer = new Dispatcher(new ServerContext(rebuilt, new Settings()));
    List<List<byte[]>> after;
    synchronized (journal.records) {
      after = new ArrayList<>(journal.records.subList(journal.cut, journal.records.size()));
    }
    for (List<byte[]> record : after) {
      replayer.replay(record);
    }
    assertThat(dump(rebuilt)).isEqualTo(dump(live));
  }
}
