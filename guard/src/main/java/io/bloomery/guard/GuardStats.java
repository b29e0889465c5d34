package io.bloomery.guard;

import java.time.Instant;

/**
 * Freshness and honesty figures of a {@link Guard}, read at one moment (each counter is exact;
 * counters are not read atomically together).
 *
 * <p>Definitions. Every item passed to {@code lookup} or {@code addIfAbsent} counts exactly once,
 * in {@code storeLookupsAvoided} or in {@code storeLookupsMade}. A <em>store lookup avoided</em> is
 * an item the filter answered "definitely absent": {@code lookup} answers without the store, and a
 * single-item {@code addIfAbsent} inserts without reading first (a batch sends every item in one
 * statement either way; there the figure says how many the filter knew to be new). A <em>store
 * lookup made</em> is an item the filter answered "maybe", which the store then confirmed. A
 * <em>realized false positive</em> is a "maybe" that the store did not hold. A <em>stale
 * negative</em> is a "definitely absent" that the store held after all (another writer, or a
 * concurrent caller of this guard, stored it first); it is a member, so it is not counted among the
 * non-members. {@link #realizedFalsePositiveRate()} divides the realized false positives by every
 * non-member the guard saw (avoided lookups − stale negatives + realized false positives), which is
 * how the model's rate {@link #modelFalsePositiveRate()} is defined.
 *
 * <p>For a guard used only through {@code addIfAbsent}, the new items number exactly
 * {@code storeLookupsAvoided − staleNegatives + realizedFalsePositives}.
 *
 * @param generation the number of filters built for this store that its snapshot history records,
 *     the current one included: 1 for the first; +1 per rebuild, also a rebuild on open that found a
 *     readable but unusable snapshot (sizing changed, store behind it). Without a snapshot file there
 *     is no history and every open starts again at 1
 * @param builtAt when the current filter was built or recovered
 * @param recovery how the current generation came to be (e.g. "replayed 12 rows after watermark 4000")
 * @param itemsSinceRebuild items inserted as new through this guard since the filter was built
 * @param insertFailures items whose insert raised {@link StoreUnavailableException}
 * @param storeLookupsMade items answered "maybe" and confirmed against the store
 * @param storeLookupsAvoided items answered "definitely absent" by the filter
 * @param realizedFalsePositives "maybe" answers that the store did not hold
 * @param staleNegatives filter negatives the store nevertheless held on insert: two callers of
 *     this guard racing to add the same new item (both saw it absent; one lost the insert), or
 *     another process writing the store behind this guard's back. Without concurrent adds of one
 *     item and without other writers it stays 0; a count that keeps growing with sequential use
 *     points at other writers
 * @param modelFalsePositiveRate the filter's estimated FPR from its fill ((fill ratio)^k)
 * @param fillRatio share of bits set
 * @param bits filter size m
 * @param hashes hash count k
 * @param capacity items the filter holds at its configured FPR
 * @param nearCapacity inserted items reached 80% of capacity (also logged once per generation)
 * @param rebuilding a rebuild is running (inserts are dual-written)
 * @param replication how the guard follows writers it never saw: state, freshness lag in ms,
 *     updates and deletes seen, whether a rebuild is advised ({@link ReplicationStatus#OFF} when
 *     it follows no replication stream)
 */
public record GuardStats(
    long generation,
    Instant builtAt,
    String recovery,
    long itemsSinceRebuild,
    long insertFailures,
    long storeLookupsMade,
    long storeLookupsAvoided,
    long realizedFalsePositives,
    long staleNegatives,
    double modelFalsePositiveRate,
    double fillRatio,
    long bits,
    int hashes,
    long capacity,
    boolean nearCapacity,
    boolean rebuilding,
    ReplicationStatus replication) {

  /**
   * Realized false positives over all non-members seen (filter negatives that were not stale, plus
   * the realized false positives); {@code NaN} before the first non-member.
   */
  public double realizedFalsePositiveRate() {
    long nonMembers = storeLookupsAvoided - staleNegatives + realizedFalsePositives;
    return nonMembers == 0 ? Double.NaN : (double) realizedFalsePositives / nonMembers;
  }

  /** Share of decisions that skipped the store lookup; {@code NaN} before the first. */
  public double lookupsAvoidedShare() {
    long all = storeLookupsAvoided + storeLookupsMade;
    return all == 0 ? Double.NaN : (double) storeLookupsAvoided / all;
  }
}
