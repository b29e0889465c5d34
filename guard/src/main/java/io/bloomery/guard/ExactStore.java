package io.bloomery.guard;

import java.io.IOException;
import java.util.List;

/**
 * The authoritative record of which items have been seen: the store a {@link Guard} confirms its
 * filter's "maybe" against and whose unique index decides {@link #insertIfAbsent(byte[])}.
 *
 * <p><b>Contract every implementation honours</b> (checked by one contract test suite):
 *
 * <ul>
 *   <li>Items are byte strings compared by exact byte equality; the empty item is valid.
 *   <li>{@link #insertIfAbsent} is atomic: across any number of threads and processes sharing the
 *       store, exactly one caller gets {@code true} for a given item. Nothing is read first and
 *       written later (no SELECT-then-INSERT race); the store's unique index arbitrates.
 *   <li>A failure to reach or write the store raises {@link StoreUnavailableException}; it is never
 *       reported as "absent" or "duplicate".
 *   <li>Rows have a position (an id) that grows with every insert; {@link #watermark()} is the
 *       largest committed position. {@link #scan} reads one consistent snapshot and reports the
 *       watermark of that snapshot; {@link #scanAfter} returns the rows after a watermark.
 *   <li>A batch is all or nothing: if any item of it fails (a digest collision, a store error, a
 *       {@link BeforeCommit} that throws), no row of the batch is committed.
 *   <li>A read-only store ({@link #isReadOnly()}) refuses inserts with {@link ReadOnlyStoreException}
 *       and has no watermark.
 * </ul>
 *
 * <p>Implementations are thread-safe. A store that also keeps the durable half of a {@link DeliveryLedger} (pending
 * marks and token replies in a batch's own transaction) is a {@link LedgerStore}.
 */
public interface ExactStore extends AutoCloseable {

  /** Receives the items of a scan, in position order where the store has one. */
  @FunctionalInterface
  interface ItemSink {
    void accept(byte[] item);
  }

  /**
   * Runs after a batch's inserts and before their commit, with the per-item answers. If it throws,
   * the batch is rolled back: none of its items is recorded as seen. {@code bloomery dedup} writes
   * (and flushes, and for a file fsyncs) the new items here, so that an item is never "seen" in the
   * store before it reached the output.
   */
  @FunctionalInterface
  interface BeforeCommit {
    /** Nothing to do before the commit. */
    BeforeCommit NONE = inserted -> {};

    void accept(boolean[] inserted) throws IOException;
  }

  /** The outcome of a consistent scan: how many rows it read and the watermark of its snapshot. */
  record ScanResult(long rows, long watermark) {}

  /**
   * A stable description of where the items live (e.g. {@code sqlite:/data/seen.db#bloomery_seen});
   * a persisted filter snapshot is only reused for the store with the same identity.
   */
  String identity();

  /** Whether this store belongs to someone else and the guard may only read it. */
  boolean isReadOnly();

  /** Whether the item is stored (exact byte equality). */
  boolean contains(byte[] item);

  /**
   * {@link #contains(byte[])} of each item, in order; a store that can answers in one round trip.
   *
   * @throws StoreUnavailableException if the store cannot be read
   */
  default boolean[] containsAll(List<byte[]> items) {
    boolean[] out = new boolean[items.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = contains(items.get(i));
    }
    return out;
  }

  /**
   * Inserts the item unless it is stored, atomically, and commits.
   *
   * @return {@code true} if this call inserted it, {@code false} if it was already stored
   * @throws StoreUnavailableException if the store could not be reached; the outcome is unknown
   * @throws ReadOnlyStoreException if the store is read-only
   */
  boolean insertIfAbsent(byte[] item);

  /**
   * {@link #insertIfAbsent(byte[])} with a hint: {@code probablyPresent} is the filter's "maybe".
   * A store may then look the item up first (a committed row found by a plain read is a certain
   * duplicate) and insert only if it is absent; the insert still arbitrates atomically. The answer is
   * the same as without the hint.
   */
  default boolean insertIfAbsent(byte[] item, boolean probablyPresent) {
    return insertIfAbsent(item);
  }

  /**
   * Inserts each item unless stored, in one round trip (one transaction) for the whole list.
   * An item repeated inside the list is new at most once (its first occurrence).
   *
   * @return for each item, in order, whether this call inserted it
   */
  default boolean[] insertAllIfAbsent(List<byte[]> items) {
    try {
      return insertAllIfAbsent(items, BeforeCommit.NONE);
    } catch (IOException e) {
      throw new AssertionError("BeforeCommit.NONE throws nothing", e);
    }
  }

  /**
   * {@link #insertAllIfAbsent(List)} in one transaction that commits only after {@code
   * beforeCommit} returned. If it throws, or anything else fails, nothing of the batch is committed.
   *
   * @throws IOException what {@code beforeCommit} threw (the batch was rolled back)
   * @throws StoreUnavailableException if the store failed; the outcome is unknown only when the
   *     commit itself failed, i.e. after {@code beforeCommit} returned
   * @throws DigestCollisionException if an item's digest belongs to different stored bytes (the
   *     batch was rolled back)
   */
  boolean[] insertAllIfAbsent(List<byte[]> items, BeforeCommit beforeCommit) throws IOException;

  /** The largest committed row position, 0 for an empty store. */
  long watermark();

  /** A cheap estimate of the number of stored items (for sizing a filter before a scan). */
  long estimatedRows();

  /** Streams every stored item from one consistent snapshot. */
  ScanResult scan(ItemSink sink);

  /**
   * Streams the items at positions greater than {@code watermark}, in position order.
   *
   * @return the number of items streamed
   */
  long scanAfter(long watermark, ItemSink sink);

  /**
   * Streams the rows that other connections committed since the store last looked, where the
   * store can tell exactly and cheaply ({@link SqliteStore#openFollowingOtherWriters}); a {@link
   * Guard} calls it before answering a filter negative. The default sees none.
   *
   * @return the number of rows streamed
   */
  default long catchUp(ItemSink sink) {
    return 0;
  }

  /**
   * Whether {@link #catchUp} can see anything (a store call before a filter negative is trusted);
   * {@code false} for the default, which sees none.
   */
  default boolean catchesUp() {
    return false;
  }

  /** Releases connections. */
  @Override
  void close();
}
