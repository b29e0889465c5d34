package io.bloomery.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import io.bloomery.filter.FilterKind;
import io.bloomery.hash.ProtocolId;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeSet;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Crash-prone inputs, checked in under {@code src/test/resources/adversarial/}: each must be rejected
 * with {@link FilterFormatException} whose message names what was expected and found, without
 * allocating more than the input can back (no OutOfMemoryError, no ArrayIndexOutOfBounds).
 *
 * <p>The files are produced by {@link #regenerate()} from the recipes below (run with {@code
 * -Dbloomery.regenerateGolden=true}); {@link #checkedInFilesMatchTheirRecipes()} keeps the folder and
 * the recipes in step. Most native inputs carry a <em>valid</em> CRC-32C, so they prove that field
 * validation, not the checksum, rejects them.
 */
class FormatAdversarialInputsTest {
  static final String NATIVE = "adversarial/native";
  static final String GUAVA = "adversarial/guava";

  /** Inputs whose defect lies past the header (payload or checksum), or in a body this build may not read. */
  static final java.util.Set<String> HEADER_INTACT =
      java.util.Set.of("padding-bit-100-set.blmf", "checksum-mismatch.blmf", "kind-cuckoo-with-classic-body.blmf");

  /** A message fragment each input's rejection must contain; "" where any clear message will do. */
  static Map<String, Case> nativeCases() {
    Map<String, Case> cases = new LinkedHashMap<>();
    Raw valid = Raw.classic(100, 3, 10, 2); // m = 100: two words, padding bits in the last
    add(cases, "empty.blmf", new byte[0], "found end of input after 0 bytes (empty input)");
    add(cases, "magic-only.blmf", FilterFormat.MAGIC, "truncated: expected 1 bytes for format version at offset 4");
    add(cases, "guava-writeto-file.blmf", guava(1, 7, 2, 2), "not a Bloomery filter: expected magic 42 4c 4d 46");
    add(cases, "version-0.blmf", valid.copy().version(0).bytes(), "format version at offset 4: expected 1, found 0");
    add(cases, "version-2.blmf", valid.copy().version(2).bytes(), "expected 1, found 2 (written by a newer Bloomery");
    add(cases, "kind-0-unknown.blmf", valid.copy().kind(0).bytes(), "filter kind at offset 5: expected one of 1 'classic'");
    add(cases, "kind-255-unknown.blmf", valid.copy().kind(255).bytes(), ", found 255");
    // A registered kind with a classic body: rejected whether or not this build reads that kind.
    add(cases, "kind-cuckoo-with-classic-body.blmf", valid.copy().kind(FilterKind.CUCKOO.code()).bytes(), "");
    add(cases, "protocol-0-unknown.blmf", valid.copy().protocol(0).bytes(), "hash protocol at offset 6: expected one of 1 'xxh3-edh-v1'");
    add(cases, "protocol-200-user-range.blmf", valid.copy().protocol(200).bytes(), ", found 200");
    add(cases, "flags-01.blmf", valid.copy().flags(0x01).bytes(), "flags at offset 7: expected 0x00 in format version 1, found 0x01");
    add(cases, "flags-80.blmf", valid.copy().flags(0x80).bytes(), "found 0x80");
    add(cases, "seed-length-beyond-end.blmf", valid.copy().seedLengthOverride(0xFFFF).bytes(),
        "truncated: seed at offset 10 declares 65535 bytes, expected at most the");
    add(cases, "body-length-u64-max.blmf", valid.copy().bodyLengthOverride(-1L).bytes(),
        "body length at offset 10: expected at most 2^63 - 1, found 18446744073709551615");
    add(cases, "body-length-2e62.blmf", valid.copy().bodyLengthOverride(1L << 62).bytes(),
        "truncated: body length at offset 10 declares 4611686018427387904 bytes");
    add(cases, "body-length-longer-than-file.blmf", valid.copy().bodyLengthOverride(100).bytes(), "truncated: body length");
    add(cases, "body-length-disagrees-with-m.blmf", valid.copy().appendToBody(new byte[8]).bytes(),
        "body length at offset 10: expected 36 bytes for a classic body with m = 100 (20 + 8 x 2 words), found 44");
    add(cases, "m-zero.blmf", Raw.classic(0, 3, 0, 0).bytes(), "bits (m) at offset 18: expected 1 <= m <= 2^40, found 0");
    add(cases, "m-u64-max.blmf", Raw.classic(-1L, 3, 0, 0).bytes(), "found 18446744073709551615");
    add(cases, "m-2e40-plus-1.blmf", Raw.classic((1L << 40) + 1, 3, 0, 0).bytes(), "found 1099511627777");
    // Consistent header declaring a 128 GiB payload, 42-byte file.
    add(cases, "m-2e40-tiny-file.blmf", Raw.classic(1L << 40, 3, 0, 0).bodyLengthOverride(20 + (1L << 37)).bytes(),
        "truncated: body length at offset 10 declares 137438953492 bytes, expected 20");
    // Consistent header declaring a 1 GiB payload, 42-byte file.
    add(cases, "m-2e33-tiny-file.blmf", Raw.classic(1L << 33, 3, 0, 0).bodyLengthOverride(20 + (1L << 30)).bytes(),
        "truncated: body length at offset 10 declares 1073741844 bytes");
    add(cases, "k-zero.blmf", valid.copy().hashes(0).bytes(), "hashes (k) at offset 26: expected 1 <= k <= 65536, found 0");
    add(cases, "k-65537.blmf", valid.copy().hashes(65537).bytes(), "found 65537");
    add(cases, "k-u32-max.blmf", valid.copy().hashes(0xFFFF_FFFFL).bytes(), "found 4294967295");
    add(cases, "inserted-u64-max.blmf", valid.copy().inserted(-1L).bytes(),
        "inserted count at offset 30: expected 0 <= n <= 2^62, found 18446744073709551615");
    add(cases, "inserted-2e62-plus-1.blmf", valid.copy().inserted((1L << 62) + 1).bytes(), "found 4611686018427387905");
    add(cases, "sha256-doc-m-70000.blmf", Raw.classic(70_000, 3, 0, 1094).protocol(ProtocolId.SHA256_DOC_V1.code()).bytes(),
        "protocol 'sha256-doc-v1' rejects the recorded parameters (m = 70000, k = 3");
    add(cases, "guava-protocol-m-100.blmf", valid.copy().protocol(ProtocolId.GUAVA_MURMUR128_MITZ64.code()).bytes(),
        "must be a multiple of 64");
    add(cases, "sha256-index8-with-seed.blmf", valid.copy().protocol(ProtocolId.SHA256_INDEX8.code()).seed(new byte[] {1}).bytes(),
        "takes no seed");
    add(cases, "padding-bit-100-set.blmf", valid.copy().word(1, 1L << 36).bytes(),
        "payload: expected bits >= m = 100 to be 0 in the last word (at offset 46), found 1 set");
    add(cases, "checksum-mismatch.blmf", valid.copy().checksumXor(1).bytes(), "checksum mismatch: expected CRC-32C");
    add(cases, "trailing-byte.blmf", valid.copy().trailing(new byte[] {0}).bytes(), "trailing bytes: body length");
    byte[] complete = valid.bytes();
    add(cases, "truncated-payload.blmf", Arrays.copyOf(complete, complete.length - 9), "truncated: body length");
    add(cases, "truncated-checksum.blmf", Arrays.copyOf(complete, complete.length - 1), "truncated: body length");
    return cases;
  }

  static Map<String, Case> guavaCases() {
    Map<String, Case> cases = new LinkedHashMap<>();
    add(cases, "empty.bin", new byte[0], "truncated: expected 1 bytes for strategy ordinal at offset 0");
    add(cases, "word-count-int-max-short-stream.bin", guava(1, 7, Integer.MAX_VALUE, 1),
        "truncated: bit array at offset 6 declares 17179869176 bytes, expected at most the 8 bytes that remain");
    add(cases, "word-count-negative.bin", guava(1, 7, -1, 0), "word count at offset 2: expected 1..2147483647");
    add(cases, "word-count-zero.bin", guava(1, 7, 0, 0), "found 0");
    add(cases, "k-zero.bin", guava(1, 0, 2, 2), "hash count at offset 1: expected 1..255, found 0");
    add(cases, "strategy-mitz32.bin", guava(0, 7, 2, 2), "(MURMUR128_MITZ_32");
    add(cases, "strategy-negative.bin", guava(-128, 7, 2, 2), "found -128 (negative ordinals are reserved");
    add(cases, "strategy-2.bin", guava(2, 7, 2, 2), "found 2 (no such Guava strategy");
    add(cases, "bloomery-native-file.bin", Raw.classic(100, 3, 10, 2).bytes(), "found 66 (no such Guava strategy");
    byte[] valid = guava(1, 7, 2, 2);
    add(cases, "truncated-payload.bin", Arrays.copyOf(valid, valid.length - 1), "truncated: bit array at offset 6");
    add(cases, "trailing-byte.bin", Arrays.copyOf(valid, valid.length + 1), "trailing bytes: expected end of input at offset 22");
    return cases;
  }

  @Test
  void nativeInputsAreRejectedFromBytesWithTheirMessage() throws IOException {
    for (Map.Entry<String, byte[]> file : FormatFixtures.resourceFolder(NATIVE).entrySet()) {
      Case expected = nativeCases().get(file.getKey());
      assertThat(expected).as("recipe for %s", file.getKey()).isNotNull();
      assertThatThrownBy(() -> FilterFormat.fromBytes(file.getValue()))
          .as(file.getKey())
          .isExactlyInstanceOf(FilterFormatException.class)
          .hasMessageContaining(expected.messageFragment);
      // describe() stops before the payload and checksum; every header defect must stop it too.
      if (!HEADER_INTACT.contains(file.getKey())) {
        rejected(() -> FilterFormat.describe(file.getValue()), "describe " + file.getKey());
      }
    }
  }

  @Test
  void nativeInputsAreRejectedFromStreamsAndFiles(@org.junit.jupiter.api.io.TempDir Path dir) throws IOException {
    for (Map.Entry<String, byte[]> file : FormatFixtures.resourceFolder(NATIVE).entrySet()) {
      Path copy = dir.resolve(file.getKey());
      Files.write(copy, file.getValue());
      assertThatThrownBy(() -> FilterFormat.read(copy))
          .as(file.getKey())
          .isExactlyInstanceOf(FilterFormatException.class)
          .hasMessageStartingWith(copy.toString() + ": ");
      if (file.getKey().startsWith("trailing-")) {
        continue; // a stream may carry bytes after the envelope
      }
      // A 1 MiB read limit: whatever the header declares, no more can be allocated.
      rejected(() -> FilterFormat.read(new ByteArrayInputStream(file.getValue()), 1 << 20), file.getKey());
    }
  }

  @Test
  void hugeDeclaredFilterFromAStreamIsRefusedByTheDefaultLimit() {
    byte[] bytes = nativeCases().get("m-2e40-tiny-file.blmf").bytes;
    assertThatThrownBy(() -> FilterFormat.read(new ByteArrayInputStream(bytes)))
        .isExactlyInstanceOf(FilterFormatException.class)
        .hasMessage("body at offset 18 declares 137438953492 bytes, expected at most the read limit of "
            + FilterFormat.defaultReadLimit() + " bytes");
  }

  @Test
  void guavaInputsAreRejectedFromBytesAndStreams() throws IOException {
    for (Map.Entry<String, byte[]> file : FormatFixtures.resourceFolder(GUAVA).entrySet()) {
      Case expected = guavaCases().get(file.getKey());
      assertThat(expected).as("recipe for %s", file.getKey()).isNotNull();
      assertThatThrownBy(() -> GuavaBloomFormat.fromBytes(file.getValue()))
          .as(file.getKey())
          .isExactlyInstanceOf(FilterFormatException.class)
          .hasMessageContaining(expected.messageFragment);
      if (!file.getKey().startsWith("trailing-")) {
        rejected(() -> GuavaBloomFormat.read(new ByteArrayInputStream(file.getValue())), file.getKey());
      }
    }
  }

  @Test
  void guavaStreamDeclaringTwoBillionWordsFailsAfterAtMostOneChunk() {
    // 2^31 - 1 words = 16 GiB declared, 8 bytes present: the stream path allocates as data arrives.
    byte[] bytes = guavaCases().get("word-count-int-max-short-stream.bin").bytes;
    assertThatThrownBy(() -> GuavaBloomFormat.read(new ByteArrayInputStream(bytes)))
        .isExactlyInstanceOf(FilterFormatException.class)
        .hasMessage("truncated: expected 65536 bytes for bit array at offset 6, found end of input after 8");
  }

  @Test
  void checkedInFilesMatchTheirRecipes() throws IOException {
    assertMatches(NATIVE, nativeCases());
    assertMatches(GUAVA, guavaCases());
  }

  /** Writes the recipes into the source tree; run with {@code -Dbloomery.regenerateGolden=true}. */
  @Test
  @EnabledIfSystemProperty(named = "bloomery.regenerateGolden", matches = "true")
  void regenerate() throws IOException {
    for (Map.Entry<String, Map<String, Case>> folder : Map.of(NATIVE, nativeCases(), GUAVA, guavaCases()).entrySet()) {
      Path dir = Paths.get("src/test/resources").resolve(folder.getKey());
      Files.createDirectories(dir);
      for (Map.Entry<String, Case> file : folder.getValue().entrySet()) {
        Files.write(dir.resolve(file.getKey()), file.getValue().bytes);
      }
    }
  }

  private static void assertMatches(String folder, Map<String, Case> recipes) throws IOException {
    Map<String, byte[]> files = FormatFixtures.resourceFolder(folder);
    assertThat(new TreeSet<>(files.keySet())).isEqualTo(new TreeSet<>(recipes.keySet()));
    for (Map.Entry<String, byte[]> file : files.entrySet()) {
      assertThat(file.getValue()).as(file.getKey()).isEqualTo(recipes.get(file.getKey()).bytes);
    }
  }

  private interface Decode {
    Object run() throws Exception;
  }

  private static void rejected(Decode decode, String what) {
    try {
      Object result = decode.run();
      fail("%s was accepted as %s", what, result);
    } catch (FilterFormatException expected) {
      assertThat(expected.getMessage()).as(what).isNotBlank();
    } catch (Throwable other) {
      throw new AssertionError(what + ": expected FilterFormatException, found " + other, other);
    }
  }

  private static void add(Map<String, Case> cases, String name, byte[] bytes, String messageFragment) {
    cases.put(name, new Case(bytes, messageFragment));
  }

  static final class Case {
    final byte[] bytes;
    final String messageFragment;

    Case(byte[] bytes, String messageFragment) {
      this.bytes = bytes;
      this.messageFragment = messageFragment;
    }
  }

  /** A Guava writeTo header (big-endian) followed by {@code presentWords} words of 0x55. */
  static byte[] guava(int ordinal, int hashes, int declaredWords, int presentWords) {
    ByteBuffer buffer = ByteBuffer.allocate(6 + 8 * presentWords).order(ByteOrder.BIG_ENDIAN);
    buffer.put((byte) ordinal).put((byte) hashes).putInt(declaredWords);
    for (int i = 0; i < presentWords; i++) {
      buffer.putLong(0x5555_5555_5555_5555L);
    }
    return buffer.array();
  }

  /**
   * A native envelope built field by field, independently of {@link FilterFormat}, with a correct
   * CRC-32C unless told otherwise.
   */
  static final class Raw {
    int version = 1;
    int kind = FilterKind.CLASSIC_BLOOM.code();
    int protocol = ProtocolId.XXH3_EDH_V1.code();
    int flags;
    byte[] seed = new byte[0];
    Integer seedLengthOverride;
    Long bodyLengthOverride;
    long bits;
    long hashes;
    long inserted;
    long[] words;
    byte[] bodyExtra = new byte[0];
    int checksumXor;
    byte[] trailing = new byte[0];

    static Raw classic(long bits, long hashes, long inserted, int words) {
      Raw raw = new Raw();
      raw.bits = bits;
      raw.hashes = hashes;
      raw.inserted = inserted;
      raw.words = new long[words];
      if (words > 0) {
        raw.words[0] = 0x0123_4567_89AB_CDEFL;
      }
      return raw;
    }

    Raw copy() {
      Raw copy = new Raw();
      copy.version = version;
      copy.kind = kind;
      copy.protocol = protocol;
      copy.flags = flags;
      copy.seed = seed.clone();
      copy.seedLengthOverride = seedLengthOverride;
      copy.bodyLengthOverride = bodyLengthOverride;
      copy.bits = bits;
      copy.hashes = hashes;
      copy.inserted = inserted;
      copy.words = words.clone();
      copy.bodyExtra = bodyExtra.clone();
      copy.checksumXor = checksumXor;
      copy.trailing = trailing.clone();
      return copy;
    }

    Raw version(int value) { version = value; return this; }
    Raw kind(int value) { kind = value; return this; }
    Raw protocol(int value) { protocol = value; return this; }
    Raw flags(int value) { flags = value; return this; }
    Raw seed(byte[] value) { seed = value; return this; }
    Raw seedLengthOverride(int value) { seedLengthOverride = value; return this; }
    Raw bodyLengthOverride(long value) { bodyLengthOverride = value; return this; }
    Raw hashes(long value) { hashes = value; return this; }
    Raw inserted(long value) { inserted = value; return this; }
    Raw word(int index, long value) { words[index] = value; return this; }
    Raw appendToBody(byte[] value) { bodyExtra = value; bodyLengthOverride = null; return this; }
    Raw checksumXor(int value) { checksumXor = value; return this; }
    Raw trailing(byte[] value) { trailing = value; return this; }

    byte[] bytes() {
      ByteArrayOutputStream body = new ByteArrayOutputStream();
      le(body, bits, 8);
      le(body, hashes, 4);
      le(body, inserted, 8);
      for (long word : words) {
        le(body, word, 8);
      }
      body.writeBytes(bodyExtra);
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      out.writeBytes(FilterFormat.MAGIC);
      out.write(version);
      out.write(kind);
      out.write(protocol);
      out.write(flags);
      le(out, seedLengthOverride != null ? seedLengthOverride : seed.length, 2);
      out.writeBytes(seed);
      le(out, bodyLengthOverride != null ? bodyLengthOverride : body.size(), 8);
      out.writeBytes(body.toByteArray());
      CRC32C crc = new CRC32C();
      crc.update(out.toByteArray());
      le(out, crc.getValue() ^ checksumXor, 4);
      out.writeBytes(trailing);
      return out.toByteArray();
    }

    private static void le(ByteArrayOutputStream out, long value, int bytes) {
      for (int i = 0; i < bytes; i++) {
        out.write((int) (value >>> (8 * i)));
      }
    }
  }

  @Test
  void rawBuilderAgreesWithTheWriter() throws FilterFormatException {
    // The recipes are only meaningful if an unmodified Raw is what FilterFormat writes.
    Raw raw = Raw.classic(100, 3, 2, 2).seed("ab".getBytes(StandardCharsets.US_ASCII));
    raw.words[0] = 0b1011;
    var filter = FilterFormat.readBloom(raw.bytes());
    assertThat(FilterFormat.toBytes(filter)).isEqualTo(raw.bytes());
  }
}
