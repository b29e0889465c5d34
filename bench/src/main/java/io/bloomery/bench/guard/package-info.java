/**
 * The guard against PostgreSQL: {@link io.bloomery.bench.guard.GuardDedupBench} measures a crawler's deduplication
 * with and without the filter in front of the store, on {@link io.bloomery.bench.guard.CrawlerUrls}.
 */
package io.bloomery.bench.guard;
