package io.bloomery.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The one contract every {@link ExactStore} passes (SQLite and PostgreSQL subclasses): byte-exact
 * items, atomic exactly-once insert under concurrency (threads and separate connection pools),
 * batches with repeats, consistent scans and watermarks. {@link LedgerStoreContract} adds the delivery
 * ledger's rows for the stores that keep them.
 */
abstract class ExactStoreContract {
  private final List<ExactStore> opened = new ArrayList<>();

  /** A fresh, empty store; each call of {@link #sameDataStore()} after it opens the same data. */
  protected abstract ExactStore createEmptyStore();

  /** Another store instance (own connections) on the data of the last {@link #createEmptyStore()}. */
  protected abstract ExactStore sameDataStore();

  /**
   * Writes a row behind the store's back (plain SQL into the last created store's table), as a
   * foreign writer or a tampered table would: {@code digest} need not be the item's.
   */
  protected abstract void plantRow(byte[] digest, byte[] item) throws Exception;

  protected final <S extends ExactStore> S track(S store) {
    opened.add(store);
    return store;
  }

  @AfterEach
  void closeStores() {
    opened.forEach(ExactStore::close);
  }

  static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  static Set<ItemDigest.Key> scanAll(ExactStore store) {
    Set<ItemDigest.Key> items = new HashSet<>();
    store.scan(item -> assertThat(items.add(new ItemDigest.Key(item))).isTrue());
    return items;
  }

  @Test
  void emptyStoreHoldsNothing() {
    ExactStore store = track(createEmptyStore());
    assertThat(store.contains(bytes("a"))).isFalse();
    assertThat(store.watermark()).isZero();
    assertThat(store.scan(item -> { }).rows()).isZero();
    assertThat(store.isReadOnly()).isFalse();
  }

  @Test
  void insertIsNewOnceThenDuplicate() {
    ExactStore store = track(createEmptyStore());
    assertThat(store.insertIfAbsent(bytes("https://example.org/a"))).isTrue();
    assertThat(store.insertIfAbsent(bytes("https://example.org/a"))).isFalse();
    assertThat(store.contains(bytes("https://example.org/a"))).isTrue();
    assertThat(store.contains(bytes("https://example.org/b"))).isFalse();
    // The filter's hint changes the route, never the answer.
    assertThat(store.insertIfAbsent(bytes("https://example.org/a"), true)).isFalse();
    assertThat(store.insertIfAbsent(bytes("https://example.org/c"), true)).isTrue();
    assertThat(store.insertIfAbsent(bytes("https://example.org/c"), false)).isFalse();
    assertThat(store.insertIfAbsent(bytes("https://example.org/d"), false)).isTrue();
  }

  @Test
  void itemsAreExactBytes() {
    ExactStore store = track(createEmptyStore());
    byte[] empty = new byte[0];
    byte[] allValues = new byte[256];
    for (int i = 0; i < 256; i++) {
      allValues[i] = (byte) i;
    }
    byte[] oneBitOff = allValues.clone();
    oneBitOff[255] ^= 1;
    assertThat(store.insertIfAbsent(empty)).isTrue();
    assertThat(store.insertIfAbsent(allValues)).isTrue();
    assertThat(store.insertIfAbsent(oneBitOff)).isTrue();
    // Two Unicode forms of "é" are two items: no normalisation.
    assertThat(store.insertIfAbsent(bytes("\u00e9"))).isTrue();
    assertThat(store.insertIfAbsent(bytes("e\u0301"))).isTrue();
    assertThat(store.insertIfAbsent(empty)).isFalse();
    assertThat(store.contains(empty)).isTrue();
    assertThat(scanAll(store)).containsExactlyInAnyOrder(new ItemDigest.Key(empty),
        new ItemDigest.Key(allValues), new ItemDigest.Key(oneBitOff),
        new ItemDigest.Key(bytes("\u00e9")), new ItemDigest.Key(bytes("e\u0301")));
  }

  @Test
  void largeDocumentsFitTheUniqueIndex() {
    ExactStore store = track(createEmptyStore());
    byte[] document = new byte[200_000]; // far above PostgreSQL's ~2.7 kB btree entry limit
    new Random(7).nextBytes(document);
    byte[] sibling = document.clone();
    sibling[100_000] ^= 0x40;
    assertThat(store.insertIfAbsent(document)).isTrue();
    assertThat(store.insertIfAbsent(sibling)).isTrue();
    assertThat(store.insertIfAbsent(document.clone())).isFalse();
    assertThat(store.contains(sibling)).isTrue();
  }

  @Test
  void batchReportsPerItemIncludingRepeatsInsideTheBatch() {
    ExactStore store = track(createEmptyStore());
    store.insertIfAbsent(bytes("old"));
    boolean[] inserted = store.insertAllIfAbsent(
        List.of(bytes("x"), bytes("old"), bytes("y"), bytes("x"), new byte[0], bytes("y")));
    assertThat(inserted).containsExactly(true, false, true, false, true, false);
    assertThat(store.insertAllIfAbsent(List.of())).isEmpty();
    assertThat(scanAll(store)).hasSize(4);
  }

  @Test
  void aBatchWhoseBeforeCommitFailsCommitsNothing() throws Exception {
    ExactStore store = track(createEmptyStore());
    store.insertIfAbsent(bytes("old"));
    List<boolean[]> seen = new ArrayList<>();
    assertThatThrownBy(() -> store.insertAllIfAbsent(List.of(bytes("a"), bytes("old"), bytes("b")),
        inserted -> {
          seen.add(inserted);
          throw new java.io.IOException("No space left on device");
        })).isInstanceOf(java.io.IOException.class).hasMessage("No space left on device");
    assertThat(seen).singleElement().satisfies(inserted ->
        assertThat(inserted).containsExactly(true, false, true)); // the answers came first
    assertThat(store.contains(bytes("a"))).isFalse();
    assertThat(store.contains(bytes("b"))).isFalse();
    assertThat(scanAll(store)).hasSize(1);
    // Sent again, the batch finds its items new: the failed delivery recorded nothing.
    assertThat(store.insertAllIfAbsent(List.of(bytes("a"), bytes("old"), bytes("b"))))
        .containsExactly(true, false, true);
  }

  @Test
  void aDigestCollisionRollsTheWholeBatchBack() throws Exception {
    ExactStore store = track(createEmptyStore());
    plantRow(ItemDigest.of(bytes("later")), bytes("a foreign row under later's digest"));
    assertThatThrownBy(() -> store.insertAllIfAbsent(List.of(bytes("fresh"), bytes("later"))))
        .isInstanceOf(DigestCollisionException.class);
    assertThatThrownBy(() -> store.insertAllIfAbsent(List.of(bytes("later"), bytes("fresh2")),
        inserted -> { }))
        .isInstanceOf(DigestCollisionException.class);
    // Neither the item before nor the one after the collision was committed.
    assertThat(store.contains(bytes("fresh"))).isFalse();
    assertThat(store.contains(bytes("fresh2"))).isFalse();
    assertThat(scanAll(store)).hasSize(1);
    assertThat(store.insertAllIfAbsent(List.of(bytes("fresh"), bytes("fresh2"))))
        .containsExactly(true, true);
  }

  @Test
  void nullItemIsRejected() {
    ExactStore store = track(createEmptyStore());
    assertThatThrownBy(() -> store.insertIfAbsent(null)).isInstanceOf(NullPointerException.class);
    List<byte[]> withNull = new ArrayList<>();
    withNull.add(bytes("a"));
    withNull.add(null);
    assertThatThrownBy(() -> store.insertAllIfAbsent(withNull))
        .isInstanceOf(NullPointerException.class);
    assertThat(store.contains(bytes("a"))).isFalse(); // nothing of the refused batch was written
  }

  @Test
  void watermarkAndScanAfterFollowInsertOrder() {
    ExactStore store = track(createEmptyStore());
    store.insertAllIfAbsent(List.of(bytes("a"), bytes("b")));
    long watermark = store.watermark();
    assertThat(watermark).isPositive();
    store.insertIfAbsent(bytes("a")); // a duplicate adds no row
    store.insertIfAbsent(bytes("c"));
    store.insertIfAbsent(bytes("d"));
    List<String> after = new ArrayList<>();
    long rows = store.scanAfter(watermark,
        item -> after.add(new String(item, StandardCharsets.UTF_8)));
    assertThat(after).containsExactly("c", "d");
    assertThat(rows).isEqualTo(2);
    ExactStore.ScanResult all = store.scan(item -> { });
    assertThat(all.rows()).isEqualTo(4);
    assertThat(all.watermark()).isEqualTo(store.watermark()).isGreaterThan(watermark);
    assertThat(store.scanAfter(store.watermark(), item -> { })).isZero();
  }

  @Test
  void insertsProceedWhileAScanIsOpenAndTheScanKeepsItsSnapshot() {
    // A rebuild streams the whole store while inserts continue: an open scan must not hold the
    // write lock (on SQLite a reader transaction begun IMMEDIATE would make every insert wait for
    // the scan to finish, or fail after the busy timeout).
    ExactStore store = track(createEmptyStore());
    store.insertAllIfAbsent(List.of(bytes("a"), bytes("b")));
    List<Boolean> insertedDuringScan = new ArrayList<>();
    ExactStore.ScanResult scan = store.scan(item -> {
      if (insertedDuringScan.isEmpty()) {
        insertedDuringScan.add(store.insertIfAbsent(bytes("c")));
      }
    });
    assertThat(insertedDuringScan).containsExactly(true);
    assertThat(scan.rows()).isEqualTo(2); // the row committed during the scan is not in its snapshot
    assertThat(store.contains(bytes("c"))).isTrue();
    assertThat(store.watermark()).isGreaterThan(scan.watermark());
  }

  @Test
  void concurrentCallersGetEachItemNewExactlyOnce() throws Exception {
    ExactStore first = track(createEmptyStore());
    ExactStore second = track(sameDataStore()); // its own connections, like another process
    int threads = 6;
    int distinct = 600;
    List<byte[]> items = new ArrayList<>();
    for (int i = 0; i < distinct; i++) {
      items.add(bytes("https://example.org/page/" + i));
    }
    Map<ItemDigest.Key, AtomicInteger> wins = ConcurrentOffers.race(threads, items, 25,
        (thread, batch) -> {
          ExactStore store = thread % 2 == 0 ? first : second;
          return thread % 3 == 0 ? singly(store, batch) : store.insertAllIfAbsent(batch);
        });
    assertThat(wins).hasSize(distinct);
    assertThat(wins.values()).allSatisfy(count -> assertThat(count.get()).isEqualTo(1));
    Set<ItemDigest.Key> expected = new HashSet<>();
    items.forEach(item -> expected.add(new ItemDigest.Key(item)));
    assertThat(scanAll(first)).isEqualTo(expected);
  }

  private static boolean[] singly(ExactStore store, List<byte[]> batch) {
    boolean[] inserted = new boolean[batch.size()];
    for (int i = 0; i < batch.size(); i++) {
      inserted[i] = store.insertIfAbsent(batch.get(i));
    }
    return inserted;
  }
}
