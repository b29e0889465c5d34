package io.bloomery.format;

import io.bloomery.aging.AgePartitionedFilter;
import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.ScalableBlockedBloomFilter;
import io.bloomery.blocked.SplitBlockBloomFilter;
import io.bloomery.counting.CountingBloomFilter;
import io.bloomery.cuckoo.CuckooFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.FilterKind;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.filter.Summary;
import io.bloomery.fuse.BinaryFuseFilter;
import io.bloomery.hash.HashProtocol;
import io.bloomery.hash.ProtocolId;
import io.bloomery.scalable.ScalableBloomFilter;
import io.bloomery.sketch.CountMinSketch;
import io.bloomery.sketch.TDigest;
import io.bloomery.sketch.TopK;
import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.ToIntFunction;

/**
 * Bloomery's one self-describing binary format: every filter kind, one envelope.
 *
 * <p>A serialized filter records everything that places a bit (kind, hash protocol, seed and the
 * kind's parameters), so a reader never has to be told how a file was built, and loading under a
 * mismatch is impossible. Files are portable across platforms and JDKs (fixed byte order, no Java
 * serialization) and across Bloomery versions: a format version, once shipped, is read by every later
 * release.
 *
 * <h2>Envelope (format version 1; all integers little-endian)</h2>
 *
 * <table>
 *   <caption>Envelope layout; S is the seed length, B the body length</caption>
 *   <tr><th>offset</th><th>size</th><th>field</th><th>rule</th></tr>
 *   <tr><td>0</td><td>4</td><td>magic</td><td>{@code 42 4C 4D 46} ("BLMF")</td></tr>
 *   <tr><td>4</td><td>1</td><td>format version</td><td>u8 = 1</td></tr>
 *   <tr><td>5</td><td>1</td><td>filter kind</td><td>u8, {@link FilterKind#code()}</td></tr>
 *   <tr><td>6</td><td>1</td><td>hash protocol</td><td>u8, {@link ProtocolId#code()}</td></tr>
 *   <tr><td>7</td><td>1</td><td>flags</td><td>u8, must be 0 in version 1</td></tr>
 *   <tr><td>8</td><td>2</td><td>seed length S</td><td>u16, 0..65535 (the protocol may allow less)</td></tr>
 *   <tr><td>10</td><td>S</td><td>seed</td><td>the protocol's seed / domain prefix</td></tr>
 *   <tr><td>10+S</td><td>8</td><td>body length B</td><td>u64; must equal what the kind's header implies</td></tr>
 *   <tr><td>18+S</td><td>B</td><td>body</td><td>the kind's fixed header, then its payload</td></tr>
 *   <tr><td>18+S+B</td><td>4</td><td>CRC-32C</td><td>u32, Castagnoli CRC of bytes [0, 18+S+B)</td></tr>
 * </table>
 *
 * <h2>Classic Bloom body ({@link FilterKind#CLASSIC_BLOOM})</h2>
 *
 * <table>
 *   <caption>Classic body layout; W = ceil(m / 64)</caption>
 *   <tr><th>offset in body</th><th>size</th><th>field</th><th>rule</th></tr>
 *   <tr><td>0</td><td>8</td><td>bits m</td><td>u64, 1 ≤ m ≤ 2<sup>40</sup></td></tr>
 *   <tr><td>8</td><td>4</td><td>hashes k</td><td>u32, 1 ≤ k ≤ 65536, and within the protocol's limit</td></tr>
 *   <tr><td>12</td><td>8</td><td>inserted count</td><td>u64, adds that changed the filter, ≤ 2<sup>62</sup></td></tr>
 *   <tr><td>20</td><td>8W</td><td>payload</td><td>W u64 words; bit i is bit (i mod 64) of word
 *       ⌊i / 64⌋, so bytes read as little-endian packed bits (bit 0 = LSB of byte 0); bits ≥ m are
 *       0</td></tr>
 * </table>
 *
 * <p>B = 20 + 8W exactly. The layouts of the other kinds' bodies are tabled in {@code docs/FORMAT.md}.
 *
 * <h2>What loading checks</h2>
 *
 * Every header field is validated before anything is allocated for it: magic, version, kind, protocol
 * (known here, and accepting the recorded parameters), flags, the seed and body lengths against the
 * bytes that remain (byte arrays and files) or against a read limit (plain streams), and the kind's
 * own fields (for example m, k and the body length they imply). The payload is then streamed while
 * the CRC-32C is computed, and the checksum must match. Byte arrays and files must end exactly at the
 * checksum. Any failure is a {@link FilterFormatException} whose message says what was expected and
 * what was found; no other exception escapes for bad bytes.
 *
 * <h2>Versioning</h2>
 *
 * Kind and protocol codes are frozen and append-only; a new body layout for an existing kind, or any
 * change to the envelope, means a new format version. A reader rejects versions it does not know
 * rather than guessing. See {@code docs/FORMAT.md}.
 *
 * <p>All methods are static and thread-safe; writing a filter that other threads are adding to
 * produces a valid file holding at least the bits set before the write began (a rolling snapshot).
 */
public final class FilterFormat {
  /* How a kind plugs in: a package-private *Body class with (a) a writer that reports its protocol,
   * seed and exact body length before writing, and (b) a reader that validates its fixed fields,
   * checks the declared body length, then streams its payload through the FormatReader. Dispatch is
   * the two switch statements below (bodyWriter, readBody) plus describeBody; nothing else changes. */

  /** The format version this build writes. */
  public static final int FORMAT_VERSION = 1;

  /** The conventional file name extension for this format. */
  public static final String FILE_EXTENSION = ".blmf";

  /** Magic bytes at offset 0: "BLMF". */
  static final byte[] MAGIC = {0x42, 0x4C, 0x4D, 0x46};

  /** Bytes before the seed: magic, version, kind, protocol, flags, seed length. */
  static final int FIXED_PREFIX_LENGTH = 10;

  /** Envelope bytes around seed and body: fixed prefix, body length, checksum. */
  static final int ENVELOPE_OVERHEAD = FIXED_PREFIX_LENGTH + Long.BYTES + Integer.BYTES;

  private FilterFormat() {}

  // ---------------------------------------------------------------------------------------------
  // Writing

  /**
   * Writes {@code filter} to {@code out} in the current format version. The stream is flushed, not
   * closed.
   *
   * @throws IllegalArgumentException if {@code filter} is of a kind this build cannot serialize
   */
  public static void write(Summary filter, OutputStream out) throws IOException {
    Objects.requireNonNull(out, "out");
    write(bodyWriter(filter), out);
  }

  /**
   * Writes a classic or blocked Bloom filter as {@link #write(Summary, OutputStream)} does, but recording
   * {@code insertedCount} in the header instead of the filter's own count: for builds whose recorded count is the
   * number of items offered (duplicates included) rather than the adds that changed the filter, so that every
   * build path of the same items writes the same bytes. The stream is flushed, not closed.
   *
   * @param insertedCount the count recorded in the header, in [0, 2^62]
   * @throws IllegalArgumentException before anything is written if the filter is of another kind or the count is
   *     out of range
   */
  public static void write(MembershipFilter filter, long insertedCount, OutputStream out) throws IOException {
    Objects.requireNonNull(filter, "filter");
    Objects.requireNonNull(out, "out");
    BodyWriter body;
    if (filter instanceof BloomFilter) {
      body = ClassicBloomBody.writer((BloomFilter) filter, insertedCount);
    } else if (filter instanceof BlockedBloomFilter) {
      body = BlockedBloomBody.writer((BlockedBloomFilter) filter, insertedCount);
    } else {
      throw new IllegalArgumentException("a recorded count other than the filter's own is written for the "
          + FilterKind.CLASSIC_BLOOM.kindName() + " and " + FilterKind.BLOCKED_BLOOM.kindName() + " kinds only, not "
          + filter.kind().kindName());
    }
    write(body, out);
  }

  /** Supplies the words of a filter being streamed, in order; word j holds bits 64j .. 64j+63. */
  @FunctionalInterface
  public interface WordSource {
    /** The next word. */
    long nextWord() throws IOException;
  }

  /**
   * Writes a classic Bloom filter file whose words are streamed from {@code words} instead of held
   * in a {@link BloomFilter}: the bytes are exactly those {@link #write(Summary, OutputStream)}
   * produces for a filter with these parameters and words. For assembling a filter that no single
   * machine holds, such as one built as word ranges by several tasks. The stream is flushed, not
   * closed.
   *
   * @param insertedCount the count recorded in the header, in [0, 2^62]
   * @param words supplies exactly {@code ceil(bits / 64)} words in order, word j holding bits 64j ..
   *     64j+63; bits at or beyond m in the last word must be 0
   * @throws IllegalArgumentException before anything is written if the protocol cannot express
   *     (bits, hashes, seed), m or k is outside the format's limits, or the count is out of range;
   *     during the write (the output is then incomplete) if the last word has bits set at or beyond m
   * @throws IOException if {@code words} or {@code out} does
   */
  public static void writeClassic(HashProtocol protocol, byte[] seed, long bits, int hashes,
      long insertedCount, WordSource words, OutputStream out) throws IOException {
    Objects.requireNonNull(out, "out");
    write(ClassicBloomBody.streamingWriter(protocol, seed, bits, hashes, insertedCount, words), out);
  }

  /**
   * Writes a blocked Bloom filter file ({@link FilterKind#BLOCKED_BLOOM}, protocol {@code
   * xxh3-blocked-v1}) whose {@code 8 * blocks} words are streamed from {@code words}; the bytes are
   * exactly those {@link #write(Summary, OutputStream)} produces for a {@link BlockedBloomFilter} with
   * these parameters and words. The stream is flushed, not closed.
   *
   * @throws IllegalArgumentException before anything is written if seed, blocks or hashes are
   *     invalid for a blocked filter or the count is outside [0, 2^62]
   * @throws IOException if {@code words} or {@code out} does
   */
  public static void writeBlocked(byte[] seed, long blocks, int hashes, long insertedCount,
      WordSource words, OutputStream out) throws IOException {
    Objects.requireNonNull(out, "out");
    write(BlockedBloomBody.streamingWriter(seed, blocks, hashes, insertedCount, words), out);
  }

  private static void write(BodyWriter body, OutputStream out) throws IOException {
    // Everything that can refuse the filter runs before the first byte is written.
    byte[] seed = body.seed();
    if (seed.length > 0xFFFF) {
      throw new IllegalArgumentException("seed: expected at most 65535 bytes, found " + seed.length);
    }
    long bodyLength = body.bodyLength();
    FormatWriter writer = new FormatWriter(out);
    writer.bytes(MAGIC);
    writer.u8(FORMAT_VERSION);
    writer.u8(body.kind().code());
    writer.u8(body.protocol().code());
    writer.u8(0);
    writer.u16(seed.length);
    writer.bytes(seed);
    writer.u64(bodyLength);
    long bodyStart = writer.position();
    body.writeBody(writer);
    if (writer.position() - bodyStart != bodyLength) {
      throw new IllegalStateException(
          body.kind().kindName() + " body wrote " + (writer.position() - bodyStart) + " bytes, declared " + bodyLength);
    }
    writer.checksum();
    writer.flush();
  }

  /**
   * Writes {@code filter} to {@code file} atomically ({@link AtomicWrite}: a temporary file in the same
   * directory, forced to disk, renamed over {@code file}, directory forced), so a crash never leaves a
   * half-written filter under that name.
   */
  public static void write(Summary filter, Path file) throws IOException {
    bodyWriter(filter); // refuse what cannot be serialized before touching the file system
    AtomicWrite.write(file, out -> write(filter, out));
  }

  /**
   * Serializes {@code filter} into a new array.
   *
   * @throws IllegalArgumentException if the serialized form would not fit in an array (use {@link
   *     #write(Summary, OutputStream)})
   */
  public static byte[] toBytes(Summary filter) {
    return FormatWriter.toBytes(serializedLength(filter), "serialized filter", out -> write(filter, out));
  }

  /**
   * The bytes {@code [from, to)} of the file {@link #write(Summary, OutputStream)} would write for {@code filter},
   * without writing the rest: for the classic and blocked kinds the payload is read straight from the filter's
   * words, so a range costs its own size, and only a range that reaches the CRC-32C trailer streams the whole
   * file once to compute it. This is how a server hands out a large filter in bounded chunks.
   *
   * @throws IllegalArgumentException if the range is not within the file or is longer than one array can hold
   */
  public static byte[] serializedRange(Summary filter, long from, long to) {
    return SerializedRange.of(filter, from, to);
  }

  /** The exact number of bytes {@link #write} produces for {@code filter}. */
  public static long serializedLength(Summary filter) {
    BodyWriter body = bodyWriter(filter);
    return envelopeLength(body.seed().length, body.bodyLength());
  }

  static long envelopeLength(int seedLength, long bodyLength) {
    return ENVELOPE_OVERHEAD + seedLength + bodyLength;
  }

  // ---------------------------------------------------------------------------------------------
  // Reading

  /**
   * Reads one filter from {@code in}, consuming exactly its bytes and no more (what follows the
   * checksum is left in the stream, so envelopes may be concatenated). The payload is streamed, never
   * held twice. Because a plain stream's length is unknown, the declared body may be at most {@link
   * #defaultReadLimit()} bytes; use {@link #read(InputStream, long)} to choose the limit.
   *
   * @return the filter, of the class its kind maps to (for example {@link BloomFilter})
   * @throws FilterFormatException if the bytes are not a valid filter of a kind this build reads
   * @throws IOException if {@code in} fails
   */
  public static Summary read(InputStream in) throws FilterFormatException, IOException {
    return read(in, defaultReadLimit());
  }

  /**
   * As {@link #read(InputStream)}, refusing before allocation any body declared larger than
   * {@code maxBodyBytes}.
   */
  public static Summary read(InputStream in, long maxBodyBytes) throws FilterFormatException, IOException {
    Objects.requireNonNull(in, "in");
    if (maxBodyBytes < 0) {
      throw new IllegalArgumentException("maxBodyBytes must be >= 0, found " + maxBodyBytes);
    }
    return decode(new FormatReader(in, FormatReader.UNKNOWN_LENGTH, maxBodyBytes), null, false);
  }

  /**
   * As {@link #read(InputStream, long)}, expecting a {@code type}: a file of another kind is refused at its
   * kind byte, before its body is read.
   *
   * @throws FilterFormatException if the bytes are not a valid filter, or not of a kind {@code type} holds
   */
  public static <F extends Summary> F read(InputStream in, long maxBodyBytes, Class<F> type)
      throws FilterFormatException, IOException {
    Objects.requireNonNull(in, "in");
    Objects.requireNonNull(type, "type");
    if (maxBodyBytes < 0) {
      throw new IllegalArgumentException("maxBodyBytes must be >= 0, found " + maxBodyBytes);
    }
    return type.cast(decode(new FormatReader(in, FormatReader.UNKNOWN_LENGTH, maxBodyBytes), type, false));
  }

  /** As {@link #read(InputStream)}, expecting a {@code type} (see {@link #read(InputStream, long, Class)}). */
  public static <F extends Summary> F read(InputStream in, Class<F> type) throws FilterFormatException, IOException {
    return read(in, defaultReadLimit(), type);
  }

  /** As {@link #read(Path)}, expecting a {@code type} (see {@link #read(InputStream, long, Class)}). */
  public static <F extends Summary> F read(Path file, Class<F> type) throws FilterFormatException, IOException {
    Objects.requireNonNull(type, "type");
    return type.cast(readFile(file, type));
  }

  /** As {@link #fromBytes(byte[])}, expecting a {@code type} (see {@link #read(InputStream, long, Class)}). */
  public static <F extends Summary> F fromBytes(byte[] bytes, Class<F> type) throws FilterFormatException {
    Objects.requireNonNull(type, "type");
    return type.cast(fromBytes(bytes, (Object) type));
  }

  /**
   * Reads the filter stored in {@code file}, which must hold exactly one envelope (trailing bytes
   * are rejected). Sizes are checked against the file's length before anything is allocated.
   */
  public static Summary read(Path file) throws FilterFormatException, IOException {
    return readFile(file, null);
  }

  /**
   * Reads the filter in {@code bytes}, which must hold exactly one envelope (trailing bytes are
   * rejected).
   *
   * @throws FilterFormatException if the bytes are not a valid filter of a kind this build reads
   */
  public static Summary fromBytes(byte[] bytes) throws FilterFormatException {
    return fromBytes(bytes, (Object) null);
  }

  /** Reads a classic Bloom filter from a stream, as {@link #read(InputStream)}. */
  public static BloomFilter readBloom(InputStream in) throws FilterFormatException, IOException {
    Objects.requireNonNull(in, "in");
    return (BloomFilter)
        decode(new FormatReader(in, FormatReader.UNKNOWN_LENGTH, defaultReadLimit()), FilterKind.CLASSIC_BLOOM, false);
  }

  /** Reads a classic Bloom filter from an array holding exactly one envelope. */
  public static BloomFilter readBloom(byte[] bytes) throws FilterFormatException {
    return (BloomFilter) fromBytes(bytes, FilterKind.CLASSIC_BLOOM);
  }

  /** Reads a classic Bloom filter from a file holding exactly one envelope. */
  public static BloomFilter readBloom(Path file) throws FilterFormatException, IOException {
    return (BloomFilter) readFile(file, FilterKind.CLASSIC_BLOOM);
  }

  // ---------------------------------------------------------------------------------------------
  // Reading in place

  /**
   * Opens the classic or blocked filter in {@code file} read-only and in place: the file is mapped into
   * memory in segments of at most 1 GiB ({@link java.nio.MappedByteBuffer}s; any size the kinds allow
   * works, past 2 GiB included) and nothing is copied onto the heap. The header is validated as
   * {@link #read(Path)} validates it, then the CRC-32C over the whole file is verified (one sequential
   * read of every page); see {@link MappedFilter} for what the mapping requires of the file.
   *
   * @return a {@link MappedBloomFilter} or a {@link MappedBlockedBloomFilter}, answering as the filter
   *     {@link #read(Path)} returns would
   * @throws FilterFormatException naming the file if it is not a valid filter, or of a kind that cannot
   *     be mapped
   */
  public static MappedFilter map(Path file) throws FilterFormatException, IOException {
    return map(file, MappedFilter.Verification.CHECKSUM);
  }

  /** As {@link #map(Path)}, checking as much as {@code verification} says when opening. */
  public static MappedFilter map(Path file, MappedFilter.Verification verification)
      throws FilterFormatException, IOException {
    return MappedImage.map(file, verification, MappedWords.DEFAULT_SEGMENT_SHIFT);
  }

  /**
   * As {@link #map(Path)}, expecting a {@code type} ({@link MappedBloomFilter} or {@link
   * MappedBlockedBloomFilter}).
   *
   * @throws FilterFormatException if the file is not a valid filter or of another kind
   */
  public static <F extends MappedFilter> F map(Path file, Class<F> type) throws FilterFormatException, IOException {
    return expectMapped(map(file), type, file.toString());
  }

  /**
   * Opens the classic or blocked filter held in {@code buffer}'s remaining bytes (exactly one envelope)
   * read-only and in place, verifying header and checksum as {@link #map(Path)} does. The buffer's
   * position and limit are not changed; its contents must not change while the filter is in use.
   *
   * @throws FilterFormatException if the bytes are not a valid filter, or of a kind that cannot be mapped
   */
  public static MappedFilter wrap(ByteBuffer buffer) throws FilterFormatException {
    return wrap(buffer, MappedFilter.Verification.CHECKSUM);
  }

  /** As {@link #wrap(ByteBuffer)}, checking as much as {@code verification} says. */
  public static MappedFilter wrap(ByteBuffer buffer, MappedFilter.Verification verification)
      throws FilterFormatException {
    return MappedImage.wrap(buffer, verification, MappedWords.DEFAULT_SEGMENT_SHIFT);
  }

  /** As {@link #wrap(ByteBuffer)}, expecting a {@code type}. */
  public static <F extends MappedFilter> F wrap(ByteBuffer buffer, Class<F> type) throws FilterFormatException {
    return expectMapped(wrap(buffer), type, "buffer");
  }

  private static <F extends MappedFilter> F expectMapped(MappedFilter filter, Class<F> type, String source)
      throws FilterFormatException {
    Objects.requireNonNull(type, "type");
    if (!type.isInstance(filter)) {
      throw new FilterFormatException(source + ": filter kind at offset 5: expected a " + type.getSimpleName()
          + ", found " + filter.kind().code() + " '" + filter.kind().kindName() + "' (a "
          + filter.getClass().getSimpleName() + ")");
    }
    return type.cast(filter);
  }

  /**
   * The largest body {@link #read(InputStream)} accepts from a stream of unknown length: the JVM's
   * maximum heap, so a hostile header declaring a filter larger than the heap is refused with a
   * clear error. A declared body below the limit is allocated before its bytes arrive and may still
   * not fit the heap that is free; for untrusted streams pass a tighter limit to {@link
   * #read(InputStream, long)}.
   */
  public static long defaultReadLimit() {
    return Runtime.getRuntime().maxMemory();
  }

  // ---------------------------------------------------------------------------------------------
  // Describing

  /**
   * Reads and validates the header of the filter at the start of {@code in} (envelope plus the
   * kind's fixed fields) without reading its payload or verifying its checksum. Consumes only the
   * header bytes.
   */
  public static FilterHeader describe(InputStream in) throws FilterFormatException, IOException {
    Objects.requireNonNull(in, "in");
    return describe(new FormatReader(in, FormatReader.UNKNOWN_LENGTH, Long.MAX_VALUE), false);
  }

  /** Describes the filter in {@code bytes}; the declared lengths must match the array exactly. */
  public static FilterHeader describe(byte[] bytes) throws FilterFormatException {
    Objects.requireNonNull(bytes, "bytes");
    try {
      return describe(new FormatReader(new ByteArrayInputStream(bytes), bytes.length, bytes.length), true);
    } catch (FilterFormatException e) {
      throw e;
    } catch (IOException e) {
      throw new UncheckedIOException("unreachable: in-memory stream failed", e);
    }
  }

  /** Describes the filter in {@code file}; the declared lengths must match the file exactly. */
  public static FilterHeader describe(Path file) throws FilterFormatException, IOException {
    long size = Files.size(file);
    try (InputStream in = new BufferedInputStream(Files.newInputStream(file), 4096)) {
      return describe(new FormatReader(in, size, size), true);
    } catch (FilterFormatException e) {
      throw withSource(e, file);
    }
  }

  private static FilterHeader describe(FormatReader reader, boolean wholeSource) throws IOException {
    try {
      Envelope envelope = readEnvelope(reader, null, wholeSource);
      Map<String, Long> parameters = new LinkedHashMap<>();
      describeBody(envelope, reader, parameters);
      return new FilterHeader(
          envelope.formatVersion, envelope.kind, envelope.protocolId, envelope.seed(), envelope.bodyLength, parameters);
    } catch (RuntimeException e) {
      throw malformed(e);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Dispatch by kind: add a case for a new kind in each of the three switches.

  /** What the envelope needs from a kind's body to write it. */
  interface BodyWriter {
    FilterKind kind();

    ProtocolId protocol();

    byte[] seed();

    /** Exact number of body bytes {@link #writeBody} will write. */
    long bodyLength();

    void writeBody(FormatWriter out) throws IOException;
  }

  private static BodyWriter bodyWriter(Summary filter) {
    Objects.requireNonNull(filter, "filter");
    if (filter instanceof ScalableBloomFilter.Frozen view) {
      return ScalableBloomBody.writer(view);
    }
    FilterKind kind = kindOf(filter);
    switch (kind) {
      case CLASSIC_BLOOM:
        BloomFilter classic = as(BloomFilter.class, filter, kind);
        return ClassicBloomBody.writer(classic, classic.insertedCount());
      case SCALABLE_BLOOM:
        return ScalableBloomBody.writer(as(ScalableBloomFilter.class, filter, kind));
      case CUCKOO:
        return CuckooBody.writer(as(CuckooFilter.class, filter, kind));
      case COUNTING_BLOOM:
        return CountingBloomBody.writer(as(CountingBloomFilter.class, filter, kind));
      case COUNT_MIN_SKETCH:
        return CountMinBody.writer(as(CountMinSketch.class, filter, kind));
      case TOP_K:
        return TopKBody.writer(as(TopK.class, filter, kind));
      case T_DIGEST:
        return TDigestBody.writer(as(TDigest.class, filter, kind));
      case AGE_PARTITIONED_BLOOM:
        return AgePartitionedBody.writer(as(AgePartitionedFilter.class, filter, kind));
      case BLOCKED_BLOOM:
        BlockedBloomFilter blocked = as(BlockedBloomFilter.class, filter, kind);
        return BlockedBloomBody.writer(blocked, blocked.insertedCount());
      case SPLIT_BLOCK_BLOOM:
        return SplitBlockBloomBody.writer(as(SplitBlockBloomFilter.class, filter, kind));
      case BINARY_FUSE:
        return BinaryFuseBody.writer(as(BinaryFuseFilter.class, filter, kind));
      case SCALABLE_BLOCKED_BLOOM:
        return ScalableBlockedBloomBody.writer(as(ScalableBlockedBloomFilter.class, filter, kind));
      default:
        throw new IllegalArgumentException(
            "cannot serialize a " + kind.kindName() + " filter (" + filter.getClass().getName()
                + "): this build has no body for kind " + kind.code());
    }
  }

  private static Object readBody(Envelope envelope, FormatReader reader) throws IOException {
    switch (envelope.kind) {
      case CLASSIC_BLOOM:
        return ClassicBloomBody.read(envelope, reader);
      case SCALABLE_BLOOM:
        return ScalableBloomBody.read(envelope, reader);
      case CUCKOO:
        return CuckooBody.read(envelope, reader);
      case COUNTING_BLOOM:
        return CountingBloomBody.read(envelope, reader);
      case COUNT_MIN_SKETCH:
        return CountMinBody.read(envelope, reader);
      case TOP_K:
        return TopKBody.read(envelope, reader);
      case T_DIGEST:
        return TDigestBody.read(envelope, reader);
      case AGE_PARTITIONED_BLOOM:
        return AgePartitionedBody.read(envelope, reader);
      case BLOCKED_BLOOM:
        return BlockedBloomBody.read(envelope, reader);
      case SPLIT_BLOCK_BLOOM:
        return SplitBlockBloomBody.read(envelope, reader);
      case BINARY_FUSE:
        return BinaryFuseBody.read(envelope, reader);
      case SCALABLE_BLOCKED_BLOOM:
        return ScalableBlockedBloomBody.read(envelope, reader);
      default:
        throw unsupportedKind(envelope.kind);
    }
  }

  private static void describeBody(Envelope envelope, FormatReader reader, Map<String, Long> parameters)
      throws IOException {
    switch (envelope.kind) {
      case CLASSIC_BLOOM:
        ClassicBloomBody.describe(envelope, reader, parameters);
        break;
      case SCALABLE_BLOOM:
        ScalableBloomBody.describe(envelope, reader, parameters);
        break;
      case CUCKOO:
        CuckooBody.describe(envelope, reader, parameters);
        break;
      case COUNTING_BLOOM:
        CountingBloomBody.describe(envelope, reader, parameters);
        break;
      case COUNT_MIN_SKETCH:
        CountMinBody.describe(envelope, reader, parameters);
        break;
      case TOP_K:
        TopKBody.describe(envelope, reader, parameters);
        break;
      case T_DIGEST:
        TDigestBody.describe(envelope, reader, parameters);
        break;
      case AGE_PARTITIONED_BLOOM:
        AgePartitionedBody.describe(envelope, reader, parameters);
        break;
      case BLOCKED_BLOOM:
        BlockedBloomBody.describe(envelope, reader, parameters);
        break;
      case SPLIT_BLOCK_BLOOM:
        SplitBlockBloomBody.describe(envelope, reader, parameters);
        break;
      case BINARY_FUSE:
        BinaryFuseBody.describe(envelope, reader, parameters);
        break;
      case SCALABLE_BLOCKED_BLOOM:
        ScalableBlockedBloomBody.describe(envelope, reader, parameters);
        break;
      default:
        // The envelope is valid; this build cannot interpret the body, so it reports no parameters.
        break;
    }
  }

  private static FilterKind kindOf(Summary filter) {
    FilterKind kind = filter.kind();
    if (kind == null || !typeOf(kind).isInstance(filter)) {
      throw new IllegalArgumentException(
          "cannot serialize " + filter.getClass().getName() + ": not a filter kind this format knows");
    }
    return kind;
  }

  /** The class a kind is read back as. */
  private static Class<? extends Summary> typeOf(FilterKind kind) {
    switch (kind) {
      case CLASSIC_BLOOM:
        return BloomFilter.class;
      case BLOCKED_BLOOM:
        return BlockedBloomFilter.class;
      case SPLIT_BLOCK_BLOOM:
        return SplitBlockBloomFilter.class;
      case SCALABLE_BLOOM:
        return ScalableBloomFilter.class;
      case COUNTING_BLOOM:
        return CountingBloomFilter.class;
      case CUCKOO:
        return CuckooFilter.class;
      case COUNT_MIN_SKETCH:
        return CountMinSketch.class;
      case TOP_K:
        return TopK.class;
      case T_DIGEST:
        return TDigest.class;
      case AGE_PARTITIONED_BLOOM:
        return AgePartitionedFilter.class;
      case BINARY_FUSE:
        return BinaryFuseFilter.class;
      case SCALABLE_BLOCKED_BLOOM:
        return ScalableBlockedBloomFilter.class;
      default:
        throw new AssertionError("no class for kind " + kind);
    }
  }

  private static <T> T as(Class<T> type, Summary filter, FilterKind kind) {
    if (!type.isInstance(filter)) {
      throw new IllegalArgumentException(
          "cannot serialize " + filter.getClass().getName() + " as kind '" + kind.kindName() + "': expected a "
              + type.getName());
    }
    return type.cast(filter);
  }

  private static FilterFormatException unsupportedKind(FilterKind kind) {
    return new FilterFormatException(
        "filter kind at offset 5: expected a kind this build reads, found " + kind.code() + " '" + kind.kindName()
            + "', which is registered but has no reader in this build (written by a newer Bloomery?)");
  }

  // ---------------------------------------------------------------------------------------------
  // The envelope

  private static Summary fromBytes(byte[] bytes, Object expected) throws FilterFormatException {
    Objects.requireNonNull(bytes, "bytes");
    try {
      return decode(new FormatReader(new ByteArrayInputStream(bytes), bytes.length, bytes.length), expected, true);
    } catch (FilterFormatException e) {
      throw e;
    } catch (IOException e) {
      throw new UncheckedIOException("unreachable: in-memory stream failed", e);
    }
  }

  private static Summary readFile(Path file, Object expected) throws IOException {
    long size = Files.size(file);
    try (InputStream in = Files.newInputStream(file)) {
      return decode(new FormatReader(in, size, size), expected, true);
    } catch (FilterFormatException e) {
      throw withSource(e, file);
    }
  }

  private static FilterFormatException withSource(FilterFormatException e, Path file) {
    return new FilterFormatException(file + ": " + e.getMessage(), e);
  }

  /**
   * Decodes one envelope. {@code wholeSource}: the reader's length is exactly one envelope (arrays and
   * files), so the declared lengths must match it and nothing may follow the checksum.
   */
  private static Summary decode(FormatReader reader, Object expected, boolean wholeSource) throws IOException {
    try {
      Envelope envelope = readEnvelope(reader, expected, wholeSource);
      long bodyEnd = envelope.bodyOffset + envelope.bodyLength;
      Object filter = readBody(envelope, reader);
      if (reader.position() != bodyEnd) {
        throw new IllegalStateException(
            envelope.kind.kindName() + " body consumed up to offset " + reader.position() + ", declared end " + bodyEnd);
      }
      reader.verifyChecksum();
      reader.requireEnd();
      return (Summary) (filter instanceof Deferred deferred ? deferred.build() : filter);
    } catch (RuntimeException e) {
      throw malformed(e);
    }
  }

  /**
   * A body whose object needs more memory than its bytes hold (a t-digest's arrays follow its compression, not its
   * centroids): read and checked like any body, but built only once the checksum has passed, so that a changed
   * field cannot make a small input allocate much.
   */
  interface Deferred {
    Object build() throws FilterFormatException;
  }

  private static FilterFormatException malformed(RuntimeException e) {
    return new FilterFormatException("malformed filter: " + e, e);
  }

  /**
   * Reads and validates everything before the body. {@code expected}: null, the {@link FilterKind} or the
   * {@link Summary} class the caller expects.
   */
  static Envelope readEnvelope(FormatReader reader, Object expected, boolean wholeSource)
      throws IOException {
    byte[] magic = new byte[MAGIC.length];
    for (int i = 0; i < magic.length; i++) {
      try {
        magic[i] = (byte) reader.u8("magic");
      } catch (FilterFormatException e) {
        throw new FilterFormatException(
            "truncated: expected magic " + hex(MAGIC) + " (\"BLMF\") at offset 0, found end of input after " + i
                + " bytes" + (i == 0 ? " (empty input)" : ""),
            e);
      }
      if (magic[i] != MAGIC[i]) {
        throw new FilterFormatException(
            "not a Bloomery filter: expected magic " + hex(MAGIC) + " (\"BLMF\") at offset 0, found "
                + hex(Arrays.copyOf(magic, i + 1)) + (i + 1 < MAGIC.length ? " …" : ""));
      }
    }
    int version = reader.u8("format version");
    if (version != FORMAT_VERSION) {
      throw new FilterFormatException(
          "format version at offset 4: expected " + FORMAT_VERSION + ", found " + version
              + (version > FORMAT_VERSION ? " (written by a newer Bloomery; upgrade to read it)" : ""));
    }
    int kindCode = reader.u8("filter kind");
    FilterKind kind;
    try {
      kind = FilterKind.ofCode(kindCode);
    } catch (IllegalArgumentException e) {
      throw new FilterFormatException(
          "filter kind at offset 5: expected one of " + kindCodes() + ", found " + kindCode, e);
    }
    if (expected instanceof Class<?> type && !type.isAssignableFrom(typeOf(kind))) {
      throw new FilterFormatException(
          "filter kind at offset 5: expected a " + type.getSimpleName() + ", found " + kind.code() + " '"
              + kind.kindName() + "' (a " + typeOf(kind).getSimpleName() + ")");
    }
    FilterKind expectedKind = expected instanceof FilterKind k ? k : null;
    if (expectedKind != null && kind != expectedKind) {
      throw new FilterFormatException(
          "filter kind at offset 5: expected " + expectedKind.code() + " '" + expectedKind.kindName() + "', found "
              + kind.code() + " '" + kind.kindName() + "'");
    }
    int protocolCode = reader.u8("hash protocol");
    ProtocolId protocol;
    try {
      protocol = ProtocolId.ofCode(protocolCode);
    } catch (IllegalArgumentException e) {
      throw new FilterFormatException(
          "hash protocol at offset 6: expected one of " + protocolCodes() + ", found " + protocolCode, e);
    }
    int flags = reader.u8("flags");
    if (flags != 0) {
      throw new FilterFormatException(
          String.format(Locale.ROOT, "flags at offset 7: expected 0x00 in format version 1, found 0x%02x", flags));
    }
    int seedLength = reader.u16("seed length");
    byte[] seed = reader.bytes(seedLength, "seed");
    long bodyLengthOffset = reader.position();
    long bodyLength = reader.u64("body length");
    if (bodyLength < 0) {
      throw new FilterFormatException(
          "body length at offset " + bodyLengthOffset + ": expected at most 2^63 - 1, found "
              + Long.toUnsignedString(bodyLength));
    }
    if (wholeSource && bodyLength != reader.remaining() - Integer.BYTES) {
      long available = reader.remaining() - Integer.BYTES;
      throw new FilterFormatException(
          (bodyLength > available ? "truncated" : "trailing bytes") + ": body length at offset " + bodyLengthOffset
              + " declares " + bodyLength + " bytes, expected " + Math.max(available, 0)
              + " (the input's remaining bytes less the 4-byte checksum)");
    }
    reader.requireAvailable(bodyLength, "body");
    return new Envelope(version, kind, protocol, seed, bodyLength, reader.position());
  }

  private static String kindCodes() {
    return codes(FilterKind.values(), FilterKind::code, FilterKind::kindName);
  }

  private static String protocolCodes() {
    return codes(ProtocolId.values(), ProtocolId::code, ProtocolId::protocolName);
  }

  /** "1 'a', 2 'b', …" for a registry's entries. */
  private static <T> String codes(T[] entries, ToIntFunction<T> code, Function<T, String> name) {
    StringBuilder codes = new StringBuilder();
    for (T entry : entries) {
      codes.append(codes.length() == 0 ? "" : ", ").append(code.applyAsInt(entry)).append(" '").append(name.apply(entry)).append('\'');
    }
    return codes.toString();
  }

  static String hex(byte[] bytes) {
    StringBuilder out = new StringBuilder();
    for (byte b : bytes) {
      out.append(out.length() == 0 ? "" : " ").append(String.format(Locale.ROOT, "%02x", b & 0xFF));
    }
    return out.toString();
  }
}
