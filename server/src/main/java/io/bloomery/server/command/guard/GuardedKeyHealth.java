package io.bloomery.server.command.guard;

import io.bloomery.guard.Guard;
import io.bloomery.guard.GuardStats;
import io.bloomery.guard.ReplicationStatus;
import io.bloomery.server.keyspace.Key;
import java.time.Instant;

/**
 * One guarded key's figures for the dashboard, read from its {@link GuardStats} as {@code GUARD.INFO} reads them:
 * the store's name (never its URL), state, sizing, and once the filter is built its generation and build time, the
 * store lookups made and avoided, the realized false positives beside the model's rate, insert failures and the
 * replication state with its freshness lag, and the filter's items, capacity and bits. Before the filter is built ({@link #built()} false) the figures from
 * the guard are -1, {@code NaN}, {@code null} or empty.
 */
public record GuardedKeyHealth(
    String key,
    String store,
    String state,
    double errorRate,
    long capacity,
    boolean built,
    long generation,
    Instant builtAt,
    long itemsSinceRebuild,
    long storeLookupsMade,
    long storeLookupsAvoided,
    long realizedFalsePositives,
    double realizedFalsePositiveRate,
    double modelFalsePositiveRate,
    long insertFailures,
    double fillRatio,
    String replicationState,
    long freshnessLagMillis,
    long filterItems,
    long filterCapacity,
    long filterBits) {

  static GuardedKeyHealth of(GuardedSet set, StoreDeclaration store) {
    String key = Key.of(set.key).toString();
    Guard g = set.guard();
    if (g == null) {
      return new GuardedKeyHealth(key, store.name(), set.state(), set.errorRate, set.capacity, false, -1, null, -1,
          -1, -1, -1, Double.NaN, Double.NaN, -1, Double.NaN, "", -1, -1, -1, -1);
    }
    GuardStats s = g.stats();
    ReplicationStatus r = s.replication();
    return new GuardedKeyHealth(key, store.name(), set.state(), set.errorRate, set.capacity, true, s.generation(),
        s.builtAt(), s.itemsSinceRebuild(), s.storeLookupsMade(), s.storeLookupsAvoided(), s.realizedFalsePositives(),
        s.realizedFalsePositiveRate(), s.modelFalsePositiveRate(), s.insertFailures(), s.fillRatio(), r.state(),
        r.freshnessLagMillis(), g.filterItems(), s.capacity(), s.bits());
  }
}
