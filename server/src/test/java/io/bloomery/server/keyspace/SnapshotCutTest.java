package io.bloomery.server.keyspace;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.filter.Summary;
import io.bloomery.format.FilterFormat;
import io.bloomery.format.RedisBloomDump;
import io.bloomery.scalable.ScalableBloomFilter;
import io.bloomery.server.CommandFamilies;
import io.bloomery.server.command.Dispatcher;
import io.bloomery.server.persistence.CommandJournal;
import io.bloomery.server.resp.Reply;
import io.bloomery.server.state.ClientState;
import io.bloomery.server.state.ServerContext;
import io.bloomery.server.state.Settings;
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
import org.junit.jupiter.api.Test;

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

  /** A keyspace journaling into a {@link RecordingJournal}, with a dispatcher and one client on it. */
  private static final class Live {
    final Keyspace keyspace = new Keyspace(System::currentTimeMillis);
    final RecordingJournal journal = new RecordingJournal();
    final ServerContext context = new ServerContext(keyspace, new Settings());
    final Dispatcher dispatcher = CommandFamilies.dispatcher(context);
    final ClientState client = context.connect("test", "test");

    Live() {
      keyspace.journal(journal);
    }
  }

  private static Map<String, String> dump(Keyspace ks) {
    Map<String, String> out = new TreeMap<>();
    ks.forEach((k, v) -> {
      StringBuilder sb = new StringBuilder(ValueType.of(v).typeReply());
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
    Live fixture = new Live();
    Keyspace live = fixture.keyspace;
    RecordingJournal journal = fixture.journal;
    ServerContext context = fixture.context;
    Dispatcher dispatcher = fixture.dispatcher;
    ClientState client = fixture.client;
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
          Object copy = FilterFormat.fromBytes(FilterFormat.toBytes((Summary) value)); // valid during the call only
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
    Dispatcher replayer = CommandFamilies.dispatcher(new ServerContext(rebuilt, new Settings()));
    List<List<byte[]>> after;
    synchronized (journal.records) {
      after = new ArrayList<>(journal.records.subList(journal.cut, journal.records.size()));
    }
    for (List<byte[]> record : after) {
      replayer.replay(record);
    }
    assertThat(dump(rebuilt)).isEqualTo(dump(live));
  }

  /** Adds made to the key the walk has not reached. */
  private static final int DURING = 5;

  private static long integer(Dispatcher dispatcher, ClientState client, String... parts) {
    Reply r = dispatcher.execute(client, argv(parts)).reply();
    if (r instanceof Reply.Bool b) {
      return b.value() ? 1 : 0;
    }
    assertThat(r).as(String.join(" ", parts)).isInstanceOf(Reply.Int.class);
    return ((Reply.Int) r).value();
  }

  /**
   * A write to a big scalable key the walk has not reached yet: the live key changes at once, the snapshot still
   * holds the key exactly as at the cut, the write preserved only the 64 KiB pages it changed (not the key), and the
   * journal's records after the cut bring the restored key up to the live one.
   */
  @Test
  void aWriteDuringTheWalkCopiesOnlyThePagesItChangesAndTheSnapshotHoldsTheCut() throws Exception {
    Live f = new Live();
    for (String key : List.of("first", "second")) {
      f.dispatcher.execute(f.client, argv("BF.RESERVE", key, "0.01", "16000000")); // 22 MB, 8 hashes each
      for (int i = 0; i < 50; i++) {
        f.dispatcher.execute(f.client, argv("BF.ADD", key, "before-" + i));
      }
    }
    Map<String, byte[]> atCut = new TreeMap<>();
    f.keyspace.forEach((k, v) -> atCut.put(k.toString(), FilterFormat.toBytes((Summary) v)));
    long keyBytes = ((ScalableBloomFilter) f.keyspace.read(Key.of("second".getBytes(StandardCharsets.UTF_8))))
        .memoryUsage();

    Map<String, byte[]> written = new TreeMap<>();
    Map<String, Long> copied = new TreeMap<>();
    f.keyspace.snapshot(() -> f.journal.cut = f.journal.records.size(), (key, value, expireAt) -> {
      String name = new String(key, StandardCharsets.UTF_8);
      if (written.isEmpty()) {
        // the walker holds this key; another client writes the key it has not reached yet
        String other = name.equals("first") ? "second" : "first";
        Thread writer = new Thread(() -> {
          ClientState c = f.context.connect("writer", "writer");
          for (int i = 0; i < DURING; i++) {
            f.dispatcher.execute(c, argv("BF.ADD", other, "during-" + i));
          }
        });
        writer.start();
        try {
          writer.join();
        } catch (InterruptedException e) {
          throw new AssertionError(e);
        }
      }
      if (value instanceof ScalableBloomFilter.Frozen view) {
        copied.put(name, view.copiedBytes());
      }
      written.put(name, FilterFormat.toBytes((Summary) value));
    });

    assertThat(written.keySet()).containsExactlyInAnyOrderElementsOf(atCut.keySet());
    for (String key : atCut.keySet()) {
      assertThat(written.get(key)).as(key + " as written").isEqualTo(atCut.get(key));
    }
    assertThat(copied).hasSize(1);
    long preserved = copied.values().iterator().next();
    assertThat(preserved).as("bytes the write preserved").isPositive()
        .isLessThanOrEqualTo(DURING * 8L * ScalableBloomFilter.Frozen.PAGE_BYTES).isLessThan(keyBytes / 4);

    String changed = copied.keySet().iterator().next();
    Keyspace rebuilt = new Keyspace(System::currentTimeMillis);
    for (Map.Entry<String, byte[]> e : written.entrySet()) {
      rebuilt.restore(e.getKey().getBytes(StandardCharsets.UTF_8), FilterFormat.fromBytes(e.getValue()), -1);
    }
    ServerContext rebuiltContext = new ServerContext(rebuilt, new Settings());
    Dispatcher replayer = CommandFamilies.dispatcher(rebuiltContext);
    ClientState reader = rebuiltContext.connect("reader", "reader");
    for (int i = 0; i < DURING; i++) {
      assertThat(integer(f.dispatcher, f.client, "BF.EXISTS", changed, "during-" + i)).as("live during-" + i).isOne();
      assertThat(integer(replayer, reader, "BF.EXISTS", changed, "during-" + i)).as("snapshot during-" + i).isZero();
    }
    assertThat(integer(replayer, reader, "BF.CARD", changed)).isEqualTo(50);
    List<List<byte[]>> after = new ArrayList<>(f.journal.records.subList(f.journal.cut, f.journal.records.size()));
    assertThat(after).hasSize(DURING);
    for (List<byte[]> record : after) {
      replayer.replay(record);
    }
    for (int i = 0; i < 50; i++) {
      assertThat(integer(replayer, reader, "BF.EXISTS", changed, "before-" + i)).isOne();
    }
    for (int i = 0; i < DURING; i++) {
      assertThat(integer(replayer, reader, "BF.EXISTS", changed, "during-" + i)).isOne();
    }
    assertThat(integer(replayer, reader, "BF.CARD", changed)).isEqualTo(50 + DURING);
    assertThat(dump(rebuilt)).isEqualTo(dump(f.keyspace));
  }

  /**
   * A key a writer froze is written under the key's lock like a live one: the frozen view reads the pages no write
   * copied from the live layer, so a writer of that key must not run while it does. Here a second writer of the key
   * starts while the view is being written; it stays blocked until the key is written, and the written key is the
   * key at the cut byte for byte.
   */
  @Test
  void aFrozenKeyIsWrittenUnderItsLockAndStaysExact() throws Exception {
    Live f = new Live();
    for (String key : List.of("first", "second")) {
      f.dispatcher.execute(f.client, argv("BF.RESERVE", key, "0.01", "4000000"));
      f.dispatcher.execute(f.client, argv("BF.ADD", key, "before"));
    }
    Map<String, byte[]> atCut = new TreeMap<>();
    f.keyspace.forEach((k, v) -> atCut.put(k.toString(), FilterFormat.toBytes((Summary) v)));
    Map<String, byte[]> written = new TreeMap<>();
    AtomicBoolean secondWriterRanDuringTheWrite = new AtomicBoolean();
    List<Thread> secondWriters = new ArrayList<>();
    f.keyspace.snapshot(() -> { }, (key, value, expireAt) -> {
      String name = new String(key, StandardCharsets.UTF_8);
      String other = name.equals("first") ? "second" : "first";
      try {
        if (written.isEmpty()) { // freeze the key the walk has not reached
          Thread writer = new Thread(() -> f.dispatcher.execute(f.context.connect("w", "w"), argv("BF.ADD", other, "x")));
          writer.start();
          writer.join();
        } else {
          assertThat(value).isInstanceOf(ScalableBloomFilter.Frozen.class);
          CountDownLatch done = new CountDownLatch(1);
          Thread writer = new Thread(() -> {
            ClientState c = f.context.connect("w2", "w2");
            for (int i = 0; i < 2000; i++) {
              f.dispatcher.execute(c, argv("BF.ADD", name, "while-written-" + i));
            }
            done.countDown();
          });
          writer.start();
          secondWriters.add(writer);
          secondWriterRanDuringTheWrite.set(done.await(2, java.util.concurrent.TimeUnit.SECONDS));
        }
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
      written.put(name, FilterFormat.toBytes((Summary) value));
    });
    for (Thread t : secondWriters) {
      t.join();
    }
    assertThat(secondWriters).hasSize(1);
    assertThat(secondWriterRanDuringTheWrite).as("a writer of the key ran while its frozen view was written").isFalse();
    for (String key : atCut.keySet()) {
      assertThat(written.get(key)).as(key + " as written").isEqualTo(atCut.get(key));
    }
  }
}
