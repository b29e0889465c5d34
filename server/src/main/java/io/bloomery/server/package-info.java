/**
 * {@code bloomery serve}: a RESP2/RESP3 server whose keys hold Bloomery filters, answering RedisBloom's
 * {@code BF.*}, {@code CF.*}, {@code CMS.*} and {@code TOPK.*} commands so that any Redis client works
 * unchanged. Built on core's public API only. Start at {@link io.bloomery.server.BloomeryServer} (the wiring) and
 * {@link io.bloomery.server.CommandFamilies} (every command family the dispatcher answers; a new family goes there);
 * the layers below are {@code net} and {@code http} (the ports), {@code command} (dispatch) and its family
 * subpackages, {@code state}, {@code keyspace}, {@code persistence} and {@code resp} (docs/ARCHITECTURE.md, "Inside
 * the server").
 */
package io.bloomery.server;
