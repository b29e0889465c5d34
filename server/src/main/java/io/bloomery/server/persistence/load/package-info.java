/**
 * BF.LOADCHUNK of a Bloomery file, on disk: {@link io.bloomery.server.persistence.load.FileLoads} stages a file's
 * chunks in the data directory's {@code loads/}, reads it back whole (CRC-32C checked) on its own finishing threads,
 * keeps a finished load's file until a snapshot covers it and cleans up after a crash. What it needs from the command
 * that sent a chunk is handed in as a {@link io.bloomery.server.persistence.load.LoadCaller}; a refused chunk is a
 * {@link io.bloomery.server.persistence.load.LoadException} carrying the client's error text. May use: keyspace (keys,
 * value types), persistence, resp's {@code ClientText}; never commands.
 */
package io.bloomery.server.persistence.load;
