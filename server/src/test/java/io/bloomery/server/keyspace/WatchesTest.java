package io.bloomery.server.keyspace;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.sketch.CountMinSketch;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Which changes of a watched key mark its watcher, as Redis's touched keys do. */
class WatchesTest {
  private final AtomicLong now = new AtomicLong(1_000_000);
  private final Keyspace keyspace = new Keyspace(now::get);

  private static Key key(String name) {
    return Key.of(name.getBytes(StandardCharsets.UTF_8));
  }

  private void put(String name) {
    try (Keyspace.Write w = keyspace.write(key(name))) {
      w.put(key(name), CountMinSketch.initByDimensions(2, 2));
    }
  }

  @Test
  void writesExpiryDeletionsAndFlushMarkOnlyTheirKeys() {
    put("a");
    put("b");
    Watches.Watcher watcher = keyspace.watches().newWatcher();
    watcher.watch(key("a"));
    assertThat(watcher.touchedOrExpired()).isFalse();

    try (Keyspace.Write w = keyspace.write(key("b"))) {
      w.get(key("b"));
    }
    try (Keyspace.Write w = keyspace.write(key("a"))) {
      w.peek(key("a"));
    }
    assertThat(watcher.touchedOrExpired()).as("another key's write, a read under a write").isFalse();

    try (Keyspace.Write w = keyspace.write(key("a"))) {
      w.get(key("a"));
    }
    assertThat(watcher.touchedOrExpired()).as("a value handed out for change").isTrue();

    watcher.unwatchAll();
    assertThat(watcher.touchedOrExpired()).isFalse();
    watcher.watch(key("a"));
    try (Keyspace.Write w = keyspace.write(key("a"))) {
      w.expire(key("a"), now.get() + 10_000);
    }
    assertThat(watcher.touchedOrExpired()).as("an expiry set").isTrue();

    watcher.unwatchAll();
    watcher.watch(key("a"));
    now.addAndGet(20_000);
    assertThat(watcher.touchedOrExpired()).as("expired since WATCH, not yet removed").isTrue();

    watcher.unwatchAll();
    watcher.watch(key("missing"));
    try (Keyspace.Write w = keyspace.writeAll()) {
      w.clear();
    }
    assertThat(watcher.touchedOrExpired()).as("FLUSHALL touches only keys that exist").isFalse();
    put("missing");
    assertThat(watcher.touchedOrExpired()).as("a watched key created").isTrue();

    watcher.unwatchAll();
    watcher.watch(key("missing"));
    try (Keyspace.Write w = keyspace.writeAll()) {
      w.clear();
    }
    assertThat(watcher.touchedOrExpired()).as("FLUSHALL removing a watched key").isTrue();
  }
}
