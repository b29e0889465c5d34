/**
 * Pure sizing math: {@link io.bloomery.sizing.BloomMath#sizing} turns (expected items, false-positive
 * rate) into the {@link io.bloomery.sizing.BloomSizing} of a classic filter: bits, hashes and the projected
 * rate when overfilled. The package depends on nothing else in Bloomery. Choosing a kind is {@code
 * io.bloomery.plan.FilterPlanner}'s, beside it in {@code io.bloomery.plan}: its {@code FilterPlan} builds
 * the filter it describes, so it must sit above the kinds, which use this math themselves.
 */
package io.bloomery.sizing;
