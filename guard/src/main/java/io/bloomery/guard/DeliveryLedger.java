package io.bloomery.guard;

import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One process's delivery ledger for one guarded key: which items it answered new whose answer is not known to have
 * reached a client, and which delivered items' store marks are still to be cleared (docs/GUARD.md, "Acknowledgements
 * across a crash"). It is the one owner of that state; the store keeps the durable half (pending marks and token
 * replies, written by {@link LedgerStore#insertAllIfAbsent(List, LedgerStore.Ledger, LedgerStore.Decide)}).
 *
 * <p>An add of a batch goes through a {@link Batch}: {@link #begin} waits, before any store transaction opens, for the
 * outcome of this process's earlier answers to the batch's items; the store then runs the batch with {@link
 * Batch#decide()}, a rule that only reads what {@code begin} found (it calls nothing and waits for nothing while the
 * transaction is open); afterwards {@link Batch#committed()} or {@link Batch#failed()} records the in-memory marks
 * of the items answered new. Batches of one ledger run one at a time: the marks {@code begin} found then cannot change
 * before the batch's transaction, because only a batch creates or takes them.
 *
 * <p>The store's half is {@link #record}: the one protocol both stores run in a batch's transaction, over the
 * {@link Rows} statements each writes in its own SQL dialect. <b>No call out of a store transaction</b>: nothing in
 * it waits for or calls into the code that delivers the answers; {@link LedgerStore.Decide} only computes.
 *
 * <p>Thread-safe: {@link Mark#settle} and the acknowledgement queue may be used from any thread.
 */
public final class DeliveryLedger {
  /** How long a token's stored reply is kept (a retry after a crash comes far sooner). */
  static final long REPLY_RETENTION_MILLIS = 86_400_000;
  /** How often a store deletes the expired replies (in a batch that stores one). */
  static final long PRUNE_EVERY_MILLIS = 60_000;
  /** How long {@link #begin} waits for an earlier answer's delivery (its batch committed, so it settles soon). */
  private static final long MARK_WAIT_MILLIS = 10_000;

  private final String owner = UUID.randomUUID().toString();
  /** Items answered new whose delivery is not known yet, or failed; a mark completes with "lost". */
  private final ConcurrentHashMap<ByteBuffer, CompletableFuture<Boolean>> unacknowledged = new ConcurrentHashMap<>();
  /** Delivered items whose store marks are still to be cleared. */
  private final ConcurrentLinkedQueue<byte[]> toAcknowledge = new ConcurrentLinkedQueue<>();

  /** Who this ledger's pending marks in the store belong to (new for every ledger, so for every process start). */
  public String owner() {
    return owner;
  }

  /** How many items were answered new whose answer is not known to have been delivered. */
  public int unacknowledged() {
    return unacknowledged.size();
  }

  /** Whether delivered items wait for their store marks to be cleared. */
  public boolean hasAcknowledgements() {
    return !toAcknowledge.isEmpty();
  }

  /** Takes up to {@code max} delivered items whose store marks are to be cleared. */
  public List<byte[]> takeAcknowledgements(int max) {
    List<byte[]> out = new ArrayList<>();
    byte[] ack;
    while (out.size() < max && (ack = toAcknowledge.poll()) != null) {
      out.add(ack);
    }
    return out;
  }

  /** Gives back items taken by {@link #takeAcknowledgements} whose marks could not be cleared. */
  public void requeueAcknowledgements(List<byte[]> items) {
    toAcknowledge.addAll(items);
  }

  /**
   * Starts a batch of adds: waits (up to {@value #MARK_WAIT_MILLIS} ms each) for the delivery outcome of this
   * ledger's earlier answers to its items, so that the store transaction that follows waits for nothing.
   *
   * @param token the batch's token, or {@code null}
   * @param request the digest of the items a token's stored reply is checked against ({@code null} without token)
   * @param acknowledged delivered items whose store marks the batch's transaction clears
   */
  public Batch begin(List<byte[]> items, byte[] token, byte[] request, List<byte[]> acknowledged) {
    Set<ByteBuffer> lost = new HashSet<>();
    for (byte[] item : items) {
      ByteBuffer k = ByteBuffer.wrap(item);
      CompletableFuture<Boolean> m = unacknowledged.get(k);
      if (m != null && !lost.contains(k) && awaitMark(m)) {
        lost.add(k);
      }
    }
    return new Batch(items, token != null, lost,
        new LedgerStore.Ledger(owner, token, request, acknowledged));
  }

  /** Whether a mark's answer reached nobody; its batch committed, so it settles soon. */
  private static boolean awaitMark(CompletableFuture<Boolean> mark) {
    try {
      return mark.get(MARK_WAIT_MILLIS, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (ExecutionException | TimeoutException e) {
      return false;
    }
  }

  /**
   * The in-memory mark of one item answered new: it completes when the answer's delivery is known. A delivered item's
   * store mark is then queued to be cleared; a lost one keeps it, so a later add answers the item new again.
   */
  public final class Mark {
    private final ByteBuffer item;
    private final CompletableFuture<Boolean> lost = new CompletableFuture<>();

    private Mark(ByteBuffer item) {
      this.item = item;
    }

    /**
     * The answer reached its client ({@code delivered}) or not; only the first call counts.
     *
     * @return whether this call queued the item's store mark to be cleared
     */
    public boolean settle(boolean delivered) {
      if (!lost.complete(!delivered)) {
        return false;
      }
      if (delivered && unacknowledged.remove(item, lost)) {
        toAcknowledge.add(item.array());
        return true;
      }
      return false;
    }
  }

  /** One batch of adds between {@link #begin} and {@link #committed()} or {@link #failed()}. */
  public final class Batch {
    private final List<byte[]> items;
    private final boolean withToken;
    /** Items whose earlier answer by this ledger reached nobody: this batch may answer them new again. */
    private final Set<ByteBuffer> lost;
    private final LedgerStore.Ledger ledger;
    /** What {@link #decide()} saw and answered, once the store called it: {inserted, claimed, answers}. */
    private volatile boolean[][] decided;

    private Batch(List<byte[]> items, boolean withToken, Set<ByteBuffer> lost, LedgerStore.Ledger ledger) {
      this.items = items;
      this.withToken = withToken;
      this.lost = lost;
      this.ledger = ledger;
    }

    /** What the store records in the batch's transaction. */
    public LedgerStore.Ledger ledger() {
      return ledger;
    }

    /**
     * The batch's answers, as the store's transaction asks them: new if inserted or claimed from another owner's
     * store mark, or if this ledger answered it new before and that answer reached nobody (at most once per item in
     * the batch). It reads only what {@link #begin} found.
     */
    public LedgerStore.Decide decide() {
      return (inserted, claimed) -> {
        boolean[] answers = new boolean[items.size()];
        Set<ByteBuffer> answeredHere = new HashSet<>();
        for (int i = 0; i < answers.length; i++) {
          ByteBuffer k = ByteBuffer.wrap(items.get(i));
          answers[i] = inserted[i] || claimed[i] || (!answeredHere.contains(k) && lost.contains(k));
          if (answers[i]) {
            answeredHere.add(k);
          }
        }
        decided = new boolean[][] {inserted.clone(), claimed.clone(), answers.clone()};
        return answers;
      };
    }

    /**
     * After the store returned: records the in-memory marks of the items answered new (without a token; with one,
     * the answers are stored under it and an item answered new again takes this ledger's lost mark away).
     *
     * @return each item's mark, {@code null} where it has none
     */
    public Mark[] committed() {
      Mark[] marks = new Mark[items.size()];
      boolean[][] d = decided;
      if (d == null) {
        return marks; // a token's stored reply: the batch did not run again
      }
      for (int i = 0; i < marks.length; i++) {
        if (!d[2][i]) {
          continue;
        }
        ByteBuffer k = ByteBuffer.wrap(items.get(i));
        if (withToken) {
          if (!d[0][i] && !d[1][i]) {
            unacknowledged.remove(k);
          }
        } else {
          marks[i] = new Mark(k);
          unacknowledged.put(k, marks[i].lost);
        }
      }
      return marks;
    }

    /**
     * After the store threw: gives back the acknowledgements the batch carried and, if its answers were decided (so
     * it may have committed), records the marks of the items answered new as {@link #committed()} does, for the
     * caller to settle as lost. With a token nothing changes: its stored reply, if it committed, answers a retry.
     *
     * @return each item's mark, {@code null} where it has none
     */
    public Mark[] failed() {
      toAcknowledge.addAll(ledger.acknowledged());
      return withToken ? new Mark[items.size()] : committed();
    }
  }

  /**
   * The statements of the ledger's protocol in one store's dialect, run in the batch's open transaction; an instance
   * belongs to one batch (tables {@code TABLE_pending} (digest, owner) and {@code TABLE_replies} (token, request
   * digest, answers, created_at)). A {@code pick} has one flag per item of the batch, in order.
   */
  interface Rows {
    /**
     * Inserts the token's row with the request digest unless the token has one (a concurrent holder of the row is
     * waited for); whether this call inserted it.
     */
    boolean takeToken(byte[] token, byte[] request) throws SQLException;

    /** The request digest and the answers stored under the token, or {@code null} if it has no row. */
    byte[][] storedReply(byte[] token) throws SQLException;

    /**
     * Inserts the batch's rows: {@code inserted[i]} whether item i was new, {@code duplicate[i]} whether it is a
     * stored duplicate at its first occurrence in the batch.
     */
    Inserted insert(boolean[] inserted, boolean[] duplicate) throws SQLException;

    /** Deletes other owners' marks on the duplicates; which were claimed. */
    boolean[] claimForeign(String owner, boolean[] duplicate) throws SQLException;

    /** Marks the picked items pending for {@code owner} (taking over any other owner's mark). */
    void markPending(String owner, boolean[] pick) throws SQLException;

    /** Deletes the marks on the picked items, of any owner. */
    void clearPending(boolean[] pick) throws SQLException;

    /** Deletes {@code owner}'s marks on delivered items. */
    void acknowledge(String owner, List<byte[]> items) throws SQLException;

    /** Stores a token's answers (its row was taken by {@link #takeToken}) and prunes expired replies when due. */
    void storeAnswers(byte[] token, boolean[] answers) throws SQLException;

    /** Called once the answers are to be decided: after it the transaction is not sent again. */
    default void deciding() {}
  }

  /**
   * What {@link Rows#insert} also did in its statement: marked the inserted rows pending for the ledger's owner
   * (without a token), and cleared the acknowledged marks.
   */
  record Inserted(boolean markedInserted, boolean acknowledged) {
    /** Nothing beyond the rows. */
    static final Inserted ROWS_ONLY = new Inserted(false, false);
  }

  /**
   * The ledger's protocol for one batch in its store transaction: takes the token (a repeat returns its stored
   * reply), inserts the rows, claims other owners' pending marks on duplicates, decides the answers, then either
   * marks every item answered new pending for the ledger's owner (without a token) or clears the marks of items it
   * answered new again and stores the answers under the token; delivered items' marks are cleared in the same
   * transaction.
   */
  static LedgerStore.Recorded record(Rows rows, int n, LedgerStore.Ledger ledger, LedgerStore.Decide decide)
      throws SQLException {
    if (ledger.token() != null) {
      if (!rows.takeToken(ledger.token(), ledger.request())) {
        byte[][] stored = rows.storedReply(ledger.token());
        if (stored == null || stored[1] == null) {
          throw new SQLException("the token's row vanished (pruned concurrently?)", "40001");
        }
        boolean[] answers = checkedLength(storedAnswers(stored[0], stored[1], ledger.request()), n);
        return new LedgerStore.Recorded(new boolean[n], answers, true);
      }
    }
    boolean[] inserted = new boolean[n];
    boolean[] duplicate = new boolean[n];
    Inserted done = rows.insert(inserted, duplicate);
    boolean[] claimed = rows.claimForeign(ledger.owner(), duplicate);
    rows.deciding();
    boolean[] answers = decide.answers(inserted.clone(), claimed.clone());
    if (!done.acknowledged() && !ledger.acknowledged().isEmpty()) {
      rows.acknowledge(ledger.owner(), ledger.acknowledged());
    }
    boolean[] answeredAgain = new boolean[n]; // answered new, not inserted: claimed, or lost by this owner
    boolean[] toMark = new boolean[n];
    for (int i = 0; i < n; i++) {
      answeredAgain[i] = answers[i] && !inserted[i];
      toMark[i] = answers[i] && !(inserted[i] && done.markedInserted());
    }
    if (ledger.token() == null) {
      rows.markPending(ledger.owner(), toMark);
    } else {
      rows.clearPending(answeredAgain); // their 1 is in the stored reply now
      rows.storeAnswers(ledger.token(), answers);
    }
    return new LedgerStore.Recorded(inserted, answers, false);
  }

  /** The request digest and answers of the token's row in {@code repliesTable} (the same SQL in both dialects). */
  static byte[][] reply(Connection c, String repliesTable, byte[] token) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT request, answers FROM " + repliesTable + " WHERE token = ?")) {
      ps.setBytes(1, token);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? new byte[][] {rs.getBytes(1), rs.getBytes(2)} : null;
      }
    }
  }

  /** The answers of a stored reply, after checking that it was for the same items. */
  private static boolean[] storedAnswers(byte[] storedRequest, byte[] answers, byte[] request) {
    if (!Arrays.equals(storedRequest, request)) {
      throw new IllegalArgumentException("the token was already used for other items (a token names"
          + " one request; use a new token for a new request)");
    }
    boolean[] out = new boolean[answers.length];
    for (int i = 0; i < out.length; i++) {
      out[i] = answers[i] != 0;
    }
    return out;
  }

  /** How a token's answers are stored: one byte per item, 1 for new. */
  static byte[] encodeAnswers(boolean[] answers) {
    byte[] out = new byte[answers.length];
    for (int i = 0; i < out.length; i++) {
      out[i] = (byte) (answers[i] ? 1 : 0);
    }
    return out;
  }

  /** The digest of each item. */
  static byte[][] digestsOf(List<byte[]> items) {
    byte[][] out = new byte[items.size()][];
    for (int i = 0; i < out.length; i++) {
      out[i] = ItemDigest.of(items.get(i));
    }
    return out;
  }

  /** A stored reply, checked to have one answer per item. */
  private static boolean[] checkedLength(boolean[] stored, int items) {
    if (stored.length != items) {
      throw new IllegalArgumentException("the token's stored reply has " + stored.length
          + " answers, the request " + items + " items");
    }
    return stored;
  }
}
