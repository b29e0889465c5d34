/**
 * {@link io.bloomery.aging.AgePartitionedFilter}: membership that expires after a window ("seen in
 * the last 24 h"), built from rotating generations of classic Bloom filters.
 */
package io.bloomery.aging;
