package io.bloomery.format;

import io.bloomery.filter.BoundedFilter;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.hash.ProtocolId;

/**
 * A read-only filter answered in place from its serialized form: a file mapped into memory ({@link
 * FilterFormat#map(java.nio.file.Path)}) or a caller's {@link java.nio.ByteBuffer} ({@link
 * FilterFormat#wrap(java.nio.ByteBuffer)}). Nothing is copied onto the heap, so a filter file of many
 * gigabytes opens in the time it takes to check it, and the operating system's page cache holds the
 * bits (shared by every process that maps the same file). The classic ({@link MappedBloomFilter}) and
 * blocked ({@link MappedBlockedBloomFilter}) kinds can be mapped.
 *
 * <p><b>Answers</b> are exactly those of the heap filter the same bytes read into ({@link
 * FilterFormat#read(java.nio.file.Path)}): same protocol, same positions, same words.
 *
 * <p><b>Read-only.</b> {@link #add} throws {@link UnsupportedOperationException}; so do the other add
 * overloads. {@link #toHeap()} copies the filter into an ordinary, writable one.
 *
 * <p><b>What opening checks.</b> The envelope and the kind's header are validated as {@link
 * FilterFormat#read(java.nio.file.Path)} validates them (magic, version, kind, protocol and its
 * parameters, the body length m or the block count implies, against the size of the file or
 * buffer), and for the classic kind that the last word has no bits set at or beyond m. With {@link
 * Verification#CHECKSUM} (the default) the CRC-32C of the whole envelope is then computed, which
 * reads every page once (sequentially; no copy is made); {@link Verification#HEADER_ONLY} skips that
 * for a file the caller has already verified, and {@link #verify()} can do it later.
 *
 * <p><b>The bytes must not change while mapped.</b> Bloomery writes filter files by atomic rename
 * ({@link AtomicWrite}), which leaves an existing mapping reading the old file intact. A file
 * modified in place, or a buffer the caller writes to, changes the answers without notice, and a file
 * truncated in place makes a read past its new end fail with an unspecified JVM error (on Linux an
 * {@link InternalError} from SIGBUS). {@link #verify()} detects both (the size is checked before the
 * pages are read).
 *
 * <p><b>Thread-safety.</b> Immutable: every method may be called from any number of threads.
 */
public sealed interface MappedFilter extends BoundedFilter permits MappedBloomFilter, MappedBlockedBloomFilter {

  /** How much of the envelope {@link FilterFormat#map(java.nio.file.Path, Verification)} checks when opening. */
  enum Verification {
    /** The header, then the CRC-32C over every byte (one sequential read of the whole file). The default. */
    CHECKSUM,
    /**
     * The header only; no page of the payload is read. For a file already verified (for example, one
     * this process wrote and fsynced); corruption in the payload then goes unnoticed until {@link
     * MappedFilter#verify()}.
     */
    HEADER_ONLY
  }

  /**
   * Recomputes the CRC-32C over the mapped bytes and compares it with the file's checksum; for a mapped
   * file, first checks that the file at the mapped path, if it is still the mapped file, still has the
   * mapped length.
   *
   * @throws FilterFormatException naming the file if its size or bytes changed since it was mapped,
   *     or the checksum never matched
   * @throws java.io.IOException if the file's attributes cannot be read
   */
  void verify() throws java.io.IOException;

  /** Whether the checksum has been verified (at open, or by {@link #verify()}). */
  boolean isChecksumVerified();

  /** The number of bytes of the envelope (the file's or buffer's length). */
  long serializedLength();

  /** A writable heap copy, equal to what {@link FilterFormat#read} returns for the same bytes. */
  MembershipFilter toHeap();

  /** The identifier of the hash protocol recorded in the envelope. */
  ProtocolId protocolId();

  /** The protocol seed or domain prefix (a copy); empty for none. */
  byte[] seed();

  /** The number of bits m. */
  long bitSize();

  /** The number of bits k set per item. */
  int hashCount();

  /** The inserted count recorded in the header. */
  long insertedCount();

  /** The number of set bits. <b>Cost:</b> O(m) the first time (a scan of every word), then cached. */
  long bitCount();

  /** The share of set bits; cost as {@link #bitCount()}. */
  default double fillRatio() {
    return (double) bitCount() / bitSize();
  }

  /** The current false-positive probability, as the heap kind computes it. <b>Cost:</b> O(m). */
  double estimatedFpp();

  /** The estimated number of distinct items added, as the heap kind computes it. <b>Cost:</b> O(m). */
  long estimatedCardinality();

  /** The number of items the filter is sized for, as the heap kind defines it (derived from its parameters). */
  long capacity();

  /** Whether {@link #estimatedCardinality()} has reached 80% of {@link #capacity()}. <b>Cost:</b> O(m). */
  default boolean isNearCapacity() {
    return estimatedCardinality() >= 0.8 * capacity();
  }

  /**
   * Queries every item: {@code out[i]} is set to {@code mightContain(items[i])}.
   *
   * @return the number of {@code true} answers
   * @throws IllegalArgumentException if {@code out} is shorter than {@code items}
   */
  int mightContainAll(byte[][] items, boolean[] out);

  /** Always throws: a mapped filter is read-only. */
  @Override
  default boolean add(byte[] item) {
    throw new UnsupportedOperationException(
        "a mapped " + kind().kindName() + " filter is read-only; add to a heap copy (toHeap()) instead");
  }

  /** Always throws: a mapped filter is read-only. */
  @Override
  default boolean add(CharSequence item) {
    return add(new byte[0]);
  }

  /** Always throws: a mapped filter is read-only. */
  @Override
  default boolean add(long item) {
    return add(new byte[0]);
  }
}
