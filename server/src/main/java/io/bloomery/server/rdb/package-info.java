/**
 * Redis's RDB serialization of the keyspace's values: {@code DUMP}/{@code RESTORE} payloads ({@link DumpPayload})
 * and whole RDB files ({@link RdbFileReader}), byte-compatible with Redis 8 + RedisBloom. {@link ModuleType} is the
 * table of module types and their fields. The codec knows nothing of commands or connections; the command layer calls
 * it. Formats and limits: {@code docs/PERSISTENCE.md}.
 */
package io.bloomery.server.rdb;
