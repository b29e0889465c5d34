/**
 * {@code bloomery serve}: a RESP2/RESP3 server whose keys hold Bloomery filters, answering RedisBloom's
 * {@code BF.*}, {@code CF.*}, {@code CMS.*} and {@code TOPK.*} commands so that any Redis client works
 * unchanged. Built on core's public API only; persistence lives in {@link io.bloomery.server.persistence}.
 */
package io.bloomery.server;
