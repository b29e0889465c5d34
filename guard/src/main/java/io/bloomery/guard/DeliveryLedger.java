package io.bloomery.guard;

import java.nio.ByteBuffer;
import java.util.ArrayList;
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
 * replies, written by {@link ExactStore#insertAllIfAbsent(List, ExactStore.Ledger, ExactStore.Decide)}).
 *
 * <p>An add of a batch goes through a {@link Batch}: {@link #begin} waits, before any store transaction opens, for the
 * outcome of this process's earlier answers to the batch's items; the store then runs the batch with {@link
 * Batch#decide()}, a rule that only reads what {@code begin} found (it calls nothing and waits for nothing while the
 * transaction is open); afterwards {@link Batch#committed()} or {@link Batch#failed()} records the in-memory marks
 * of the items answered new. Batches of one ledger run one at a time: the marks {@code begin} found then cannot change
 * before the batch's transaction, because only a batch creates or takes them.
 *
 * <p>Thread-safe: {@link Mark#settle} and the acknowledgement queue may be used from any thread.
 */
public final class DeliveryLedger {
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
        new ExactStore.Ledger(owner, token, request, acknowledged));
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
    private final ExactStore.Ledger ledger;
    /** What {@link #decide()} saw and answered, once the store called it: {inserted, claimed, answers}. */
    private volatile boolean[][] decided;

    private Batch(List<byte[]> items, boolean withToken, Set<ByteBuffer> lost, ExactStore.Ledger ledger) {
      this.items = items;
      this.withToken = withToken;
      this.lost = lost;
      this.ledger = ledger;
    }

    /** What the store records in the batch's transaction. */
    public ExactStore.Ledger ledger() {
      return ledger;
    }

    /**
     * The batch's answers, as the store's transaction asks them: new if inserted or claimed from another owner's
     * store mark, or if this ledger answered it new before and that answer reached nobody (at most once per item in
     * the batch). It reads only what {@link #begin} found.
     */
    public ExactStore.Decide decide() {
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
}
