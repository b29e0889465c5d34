/**
 * BF.*: RedisBloom's Bloom filter commands over every Bloom form a key can hold. Start at
 * {@link io.bloomery.server.command.bloom.BloomCommands} (the table entries and handlers, SCANDUMP/LOADCHUNK
 * included); {@code FixedBloom} builds and describes the fixed forms (classic, blocked) BF.RESERVE's Bloomery
 * options ask for, {@code ScalingBlockedBloom} the scaling blocked one; {@code ValkeyDialect} answers valkey-bloom's
 * BF.INSERT options and BF.INFO fields. A Bloomery file's chunks are staged by
 * {@code persistence.load.FileLoads}, which this family hands what it needs (the client, replay, memory admission).
 * May use: dispatch ({@code command}), {@code state}, keyspace, {@code persistence.load}, resp.
 */
package io.bloomery.server.command.bloom;
