/**
 * Choosing a kind: {@link io.bloomery.plan.FilterPlanner} picks a Bloom kind (or, for a static set, a binary
 * fuse filter) for (n, p, memory budget) and says why, with figures from the sizing models of {@link
 * io.bloomery.sizing.BloomMath} and {@link io.bloomery.blocked.BlockedBloomMath}; the {@link
 * io.bloomery.plan.FilterPlan} it returns builds that filter.
 */
package io.bloomery.plan;
