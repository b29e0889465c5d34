/**
 * Bloomery core: approximate-membership filters that are honest about what "maybe" means.
 *
 * <p>Start with {@link io.bloomery.filter.BloomFilter}; size it with {@link io.bloomery.sizing.BloomMath};
 * persist it with {@link io.bloomery.format.FilterFormat}.
 */
package io.bloomery;
