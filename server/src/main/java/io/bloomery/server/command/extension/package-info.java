/**
 * Bloomery's own commands: {@link io.bloomery.server.command.extension.KindCommands} for the kinds RedisBloom has
 * not (CBF.* counting Bloom, AGE.* age-partitioned Bloom) and
 * {@link io.bloomery.server.command.extension.ExtensionCommands} for Bloomery's additions to BF.* (documented in
 * docs/COMMANDS.md). May use: dispatch ({@code command}), {@code state}, keyspace, resp, {@code command.bloom}.
 */
package io.bloomery.server.command.extension;
