/**
 * RedisBloom's error replies ({@link io.bloomery.redisbloom.RedisBloomErrors}) and the exception that carries one
 * ({@link io.bloomery.redisbloom.RedisBloomException}). The RedisBloom-compatible kinds live in
 * {@link io.bloomery.scalable} and {@link io.bloomery.cuckoo}.
 */
package io.bloomery.redisbloom;
