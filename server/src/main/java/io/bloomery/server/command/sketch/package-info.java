/**
 * CMS.* and TOPK.*: RedisBloom's count-min sketch and top-k commands, in
 * {@link io.bloomery.server.command.sketch.SketchCommands}, over core's sketches. These values are not safe for
 * concurrent readers and are read under their key's lock. May use: dispatch ({@code command}), {@code state},
 * keyspace, resp.
 */
package io.bloomery.server.command.sketch;
