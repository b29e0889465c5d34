/**
 * Serialized filters: {@link io.bloomery.format.FilterFormat} writes and reads every filter kind in
 * Bloomery's one self-describing, checksummed envelope; {@link io.bloomery.format.GuavaBloomFormat}
 * imports and exports Guava's {@code BloomFilter.writeTo} bytes; {@link io.bloomery.format.ParquetBloomFormat}
 * reads and writes Parquet's Thrift-headed split-block filters. Bad input of any shape fails with
 * {@link io.bloomery.format.FilterFormatException}, saying what was expected and what was found. The
 * byte layouts are tabled in {@code docs/FORMAT.md}.
 */
package io.bloomery.format;
