package io.bloomery.guard;

import java.time.Instant;

/**
 * Freshness and honesty figures of a {@link Guard}, read at one moment (each counter is exact;
 * counters are not read atomically together).
 *
 * <p>Definitions. A <em>store lookup avoided</em> is an item the filter answered "definitely
 * absent" (a naive loop would have asked the store first). A <em>store lookup made</em> is an item
 * the filter answered "maybe", which the store then confirmed (by {@code contains} for a lookup, by
 * the conflict of the atomic insert for addIfAbsent). A <em>realized false positive</em> is a "maybe"
 * that the store did not hold. {@link #realizedFalsePositiveRate()} divides those by every non-member
 * the guard saw (avoided lookups + realized false positives), which is how the model's rate
 * {@link #modelFalsePositiveRate()} is defined.
 *
 * @param generation 1 for the first filter, +1 per rebuild
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

  /** Realized false positives over all non-members seen; {@code NaN} before the first one. */
  public double realizedFalsePositiveRate() {
    long nonMembers = storeLookupsAvoided + realizedFalsePositives;
    return nonMembers == 0 ? Double.NaN : (double) realizedFalsePositives / nonMembers;
  }

  /** Share of decisions that skipped the store lookup; {@code NaN} before the first. */
  public double lookupsAvoidedShare() {
    long all = storeLookupsAvoided + storeLookupsMade;
    return all == 0 ? Double.NaN : (double) storeLookupsAvoided / all;
  }
}
