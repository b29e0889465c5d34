package io.bloomery.format;

import io.bloomery.filter.FilterKind;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * One envelope opened in place for a {@link MappedFilter}: the validated header, the payload as
 * {@link MappedWords}, and what {@link MappedFilter#verify()} needs to recheck the bytes.
 */
final class MappedImage {
  /* The header is parsed by the same code that reads a file onto the heap (FilterFormat.readEnvelope
   * and the kind's describe, which validates its fixed fields, the body length they imply and the
   * protocol's parameters), fed from a small view of the first bytes, so a mapped filter accepts
   * exactly the files FilterFormat.read accepts. The checksum is computed over the mapped pages with
   * CRC32C.update(ByteBuffer), which reads direct buffers in place. */

  /** The most header bytes an envelope of the mappable kinds can have: prefix, seed, body length, fixed body fields. */
  private static final int MAX_HEADER_BYTES = FilterFormat.FIXED_PREFIX_LENGTH + 0xFFFF + Long.BYTES + 20;

  final Envelope envelope;
  /** The kind's fixed fields as {@code FilterFormat.describe} reports them (bits, hashes, inserted, …). */
  final Map<String, Long> parameters;
  final MappedWords payload;
  private final long size;
  /** Bytes [0, payloadOffset) and the 4-byte checksum, mapped at open (the file's channel is closed after it). */
  private final ByteBuffer header;
  private final ByteBuffer checksum;
  private final long payloadOffset;
  private final FileIdentity file;
  private volatile boolean checksumVerified;

  private MappedImage(Envelope envelope, Map<String, Long> parameters, MappedWords payload, MappedWords.Region region,
      long payloadOffset, FileIdentity file) throws IOException {
    this.envelope = envelope;
    this.parameters = parameters;
    this.payload = payload;
    this.size = region.size();
    this.payloadOffset = payloadOffset;
    this.header = region.slice(0, (int) payloadOffset);
    this.checksum = region.slice(size - Integer.BYTES, Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
    this.file = file;
  }

  /** Maps {@code path} read-only and opens the filter in it. */
  static MappedFilter map(Path path, MappedFilter.Verification verification, int segmentShift) throws IOException {
    Objects.requireNonNull(path, "file");
    Objects.requireNonNull(verification, "verification");
    BasicFileAttributes attributes = Files.readAttributes(path, BasicFileAttributes.class);
    try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
      long size = channel.size();
      MappedWords.Region region = new MappedWords.Region() {
        @Override
        public long size() {
          return size;
        }

        @Override
        public ByteBuffer slice(long offset, int length) throws IOException {
          return channel.map(FileChannel.MapMode.READ_ONLY, offset, length);
        }
      };
      // The mappings outlive the channel: closing it does not unmap (the buffers do, when collected).
      return open(region, verification, segmentShift, new FileIdentity(path, size, attributes.fileKey()));
    } catch (FilterFormatException e) {
      throw new FilterFormatException(path + ": " + e.getMessage(), e);
    }
  }

  /** Opens the filter held in {@code buffer}'s remaining bytes, which must be exactly one envelope. */
  static MappedFilter wrap(ByteBuffer buffer, MappedFilter.Verification verification, int segmentShift)
      throws FilterFormatException {
    Objects.requireNonNull(buffer, "buffer");
    Objects.requireNonNull(verification, "verification");
    ByteBuffer view = buffer.slice().asReadOnlyBuffer();
    MappedWords.Region region = new MappedWords.Region() {
      @Override
      public long size() {
        return view.capacity();
      }

      @Override
      public ByteBuffer slice(long offset, int length) {
        return view.slice((int) offset, length);
      }
    };
    try {
      return open(region, verification, segmentShift, null);
    } catch (FilterFormatException e) {
      throw e;
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("unreachable: a buffer view failed", e);
    }
  }

  private static MappedFilter open(MappedWords.Region region, MappedFilter.Verification verification, int segmentShift,
      FileIdentity file) throws IOException {
    long size = region.size();
    ByteBuffer head = region.slice(0, (int) Math.min(size, MAX_HEADER_BYTES));
    FormatReader reader = new FormatReader(new BufferStream(head), size, size);
    Envelope envelope;
    Map<String, Long> parameters = new LinkedHashMap<>();
    try {
      envelope = FilterFormat.readEnvelope(reader, null, true);
      if (envelope.kind == FilterKind.CLASSIC_BLOOM) {
        ClassicBloomBody.describe(envelope, reader, parameters);
      } else if (envelope.kind == FilterKind.BLOCKED_BLOOM) {
        BlockedBloomBody.describe(envelope, reader, parameters);
      } else {
        throw new FilterFormatException("filter kind at offset 5: expected " + FilterKind.CLASSIC_BLOOM.code() + " '"
            + FilterKind.CLASSIC_BLOOM.kindName() + "' or " + FilterKind.BLOCKED_BLOOM.code() + " '"
            + FilterKind.BLOCKED_BLOOM.kindName() + "' (the kinds that can be mapped), found " + envelope.kind.code()
            + " '" + envelope.kind.kindName() + "'; read it onto the heap with FilterFormat.read");
      }
    } catch (RuntimeException e) {
      throw new FilterFormatException("malformed filter: " + e, e);
    }
    long payloadOffset = reader.position();
    long words = (envelope.bodyOffset + envelope.bodyLength - payloadOffset) / Long.BYTES;
    MappedWords payload = MappedWords.of(region, payloadOffset, words, segmentShift);
    MappedImage image = new MappedImage(envelope, parameters, payload, region, payloadOffset, file);
    if (envelope.kind == FilterKind.CLASSIC_BLOOM) {
      image.requireCleanTail(parameters.get("bits"));
    }
    if (verification == MappedFilter.Verification.CHECKSUM) {
      image.verifyChecksum();
    }
    return envelope.kind == FilterKind.CLASSIC_BLOOM ? new MappedBloomFilter(image) : new MappedBlockedBloomFilter(image);
  }

  /** The classic payload's last word must have no bits at or beyond m, as {@code BloomFilter.restore} demands. */
  private void requireCleanTail(long bits) throws FilterFormatException {
    long last = payload.word(payload.count() - 1);
    long stray = last & ~ClassicBloomBody.lastWordMask(bits);
    if (stray != 0) {
      throw new FilterFormatException("payload: expected bits >= m = " + bits + " to be 0 in the last word (at offset "
          + (payloadOffset + Long.BYTES * (payload.count() - 1)) + "), found " + Long.bitCount(stray) + " set");
    }
  }

  long size() {
    return size;
  }

  boolean isChecksumVerified() {
    return checksumVerified;
  }

  /** Checks the file still has its mapped size (when the path still names it), then the checksum. */
  void verify() throws IOException {
    if (file != null) {
      file.requireUnchanged();
    }
    try {
      verifyChecksum();
    } catch (FilterFormatException e) {
      throw file == null ? e : new FilterFormatException(file.path + ": " + e.getMessage()
          + (checksumVerified ? "" : "; the file changed after it was mapped, or was corrupt before"), e);
    }
  }

  private void verifyChecksum() throws IOException {
    CRC32C crc = new CRC32C();
    crc.update(header.duplicate().clear());
    payload.checksum(crc);
    long checksumOffset = size - Integer.BYTES;
    int found = checksum.getInt(0);
    if (found != (int) crc.getValue()) {
      throw new FilterFormatException(String.format(Locale.ROOT,
          "checksum mismatch: expected CRC-32C %08x over the %d bytes before offset %d, found %08x",
          (int) crc.getValue(), checksumOffset, checksumOffset, found));
    }
    checksumVerified = true;
  }

  /** The mapped file as it was at open: a later change of size is detected before any page is read. */
  private static final class FileIdentity {
    final Path path;
    final long size;
    final Object key;

    FileIdentity(Path path, long size, Object key) {
      this.path = path;
      this.size = size;
      this.key = key;
    }

    void requireUnchanged() throws IOException {
      BasicFileAttributes now;
      try {
        now = Files.readAttributes(path, BasicFileAttributes.class);
      } catch (java.nio.file.NoSuchFileException e) {
        return; // unlinked: the mapping still holds the file's pages, so its bytes can still be checked
      }
      // Another file at the path (replaced by a rename) leaves the mapping on the old one: nothing to compare.
      boolean sameFile = key == null || key.equals(now.fileKey());
      if (sameFile && now.size() != size) {
        throw new FilterFormatException(path + ": changed after it was mapped: " + size + " bytes mapped, "
            + now.size() + " now; a mapped filter's file must not be modified in place (replace it by rename)");
      }
    }
  }

  /** Reads a header view as a stream, for {@link FormatReader}. */
  private static final class BufferStream extends InputStream {
    private final ByteBuffer buffer;

    BufferStream(ByteBuffer buffer) {
      this.buffer = buffer;
    }

    @Override
    public int read() {
      return buffer.hasRemaining() ? buffer.get() & 0xFF : -1;
    }

    @Override
    public int read(byte[] target, int offset, int length) {
      if (length == 0) {
        return 0;
      }
      if (!buffer.hasRemaining()) {
        return -1;
      }
      int n = Math.min(length, buffer.remaining());
      buffer.get(target, offset, n);
      return n;
    }
  }
}
