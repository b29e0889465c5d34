/**
 * {@link io.bloomery.counting.CountingBloomFilter}: a classic Bloom filter with saturating counters
 * instead of bits, so items that were added can be removed.
 */
package io.bloomery.counting;
