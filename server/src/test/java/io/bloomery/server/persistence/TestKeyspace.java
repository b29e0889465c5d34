package io.bloomery.server.persistence;

import io.bloomery.filter.BloomFilter;
import io.bloomery.format.FilterFormat;
import io.bloomery.sketch.CountMinSketch;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A small keyspace of the tests' own that plays the command layer's part of the persistence seam: it
 * applies {@code BF.ADD key item}, {@code CMS.INCRBY key item n} and {@code DEL key}, journals each
 * applied command while it holds the key and the shared side of its cut lock, and walks a copy-on-cut
 * view for snapshots. Values are real core filters, so snapshots exercise the core format.
 */
final class TestKeyspace implements SnapshotSource, CommandReplayer, KeyLoader {
  private record Entry(Object value, long expireAtMillis) {}

  private final ConcurrentHashMap<String, Entry> keys = new ConcurrentHashMap<>();
  private final ReentrantReadWriteLock cutLock = new ReentrantReadWriteLock();
  private volatile CommandJournal journal = CommandJournal.NONE;

  void journalTo(CommandJournal journal) {
    this.journal = journal;
  }

  static List<byte[]> argv(String... words) {
    List<byte[]> argv = new ArrayList<>();
    for (String word : words) {
      argv.add(word.getBytes(StandardCharsets.UTF_8));
    }
    return argv;
  }

  /** Applies a command as a client's would be, returning the journal's acknowledgement. */
  CompletionStage<Void> apply(List<byte[]> argv) {
    cutLock.readLock().lock();
    try {
      CompletionStage<?>[] ack = new CompletionStage<?>[1];
      String key = text(argv.get(1));
      keys.compute(key, (k, entry) -> {
        Entry next = applyTo(entry, argv);
        ack[0] = journal.append(argv);
        return next;
      });
      @SuppressWarnings("unchecked")
      CompletionStage<Void> done = (CompletionStage<Void>) ack[0];
      return done;
    } finally {
      cutLock.readLock().unlock();
    }
  }

  CompletionStage<Void> apply(String... words) {
    return apply(argv(words));
  }

  @Override
  public void replay(List<byte[]> argv) {
    String key = text(argv.get(1));
    keys.compute(key, (k, entry) -> applyTo(entry, argv));
  }

  private static Entry applyTo(Entry entry, List<byte[]> argv) {
    String command = text(argv.get(0));
    switch (command) {
      case "BF.ADD" -> {
        BloomFilter filter = entry == null ? BloomFilter.create(1000, 0.01) : (BloomFilter) entry.value();
        filter.add(argv.get(2));
        return new Entry(filter, -1);
      }
      case "CMS.INCRBY" -> {
        CountMinSketch sketch = entry == null ? CountMinSketch.initByDimensions(64, 4) : (CountMinSketch) entry.value();
        sketch.incrementBy(argv.get(2), Long.parseLong(text(argv.get(3))));
        return new Entry(sketch, -1);
      }
      case "DEL" -> {
        return null;
      }
      default -> throw new IllegalStateException("unknown command " + command);
    }
  }

  @Override
  public void load(byte[] key, Object value, long expireAtMillis) {
    if (keys.putIfAbsent(text(key), new Entry(value, expireAtMillis)) != null) {
      throw new IllegalStateException("key loaded twice: " + text(key));
    }
  }

  @Override
  public void snapshot(Runnable atCut, SnapshotSink sink) throws IOException {
    Map<String, byte[]> view = new TreeMap<>();
    Map<String, Long> expiries = new TreeMap<>();
    cutLock.writeLock().lock();
    try {
      atCut.run();
      // Copying every value under the cut is this test keyspace's simple stand-in for copy-on-write.
      keys.forEach((key, entry) -> {
        view.put(key, FilterFormat.toBytes((io.bloomery.filter.Summary) entry.value()));
        expiries.put(key, entry.expireAtMillis());
      });
    } finally {
      cutLock.writeLock().unlock();
    }
    for (Map.Entry<String, byte[]> e : view.entrySet()) {
      sink.accept(e.getKey().getBytes(StandardCharsets.UTF_8), FilterFormat.fromBytes(e.getValue()), expiries.get(e.getKey()));
    }
  }

  /** Every key with its value's core-format bytes in hex, sorted: equal dumps mean equal keyspaces. */
  Map<String, String> dump() {
    Map<String, String> dump = new TreeMap<>();
    keys.forEach((key, entry) -> dump.put(key, HexFormat.of().formatHex(FilterFormat.toBytes((io.bloomery.filter.Summary) entry.value()))));
    return dump;
  }

  Object value(String key) {
    Entry entry = keys.get(key);
    return entry == null ? null : entry.value();
  }

  private static String text(byte[] bytes) {
    return new String(bytes, StandardCharsets.UTF_8);
  }
}
