/**
 * CF.*: RedisBloom's cuckoo filter commands, in {@link io.bloomery.server.command.cuckoo.CuckooCommands}, over core's
 * {@code CuckooFilter}. May use: dispatch ({@code command}), {@code state}, keyspace, resp.
 */
package io.bloomery.server.command.cuckoo;
