/**
 * TDIGEST.*: RedisBloom's t-digest commands, in {@link io.bloomery.server.command.tdigest.TDigestCommands}, over
 * core's {@link io.bloomery.sketch.TDigest}. Its queries compress the digest, so they run under the key's write lock
 * and are journaled when they did. May use: dispatch ({@code command}), keyspace, resp.
 */
package io.bloomery.server.command.tdigest;
