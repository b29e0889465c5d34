package io.bloomery.format;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.filter.BloomFilter;
import io.bloomery.hash.HashProtocol;
import io.bloomery.hash.ProtocolId;
import io.bloomery.hash.Protocols;
import io.bloomery.testkit.Internals;
import java.io.IOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/** Small deterministic filters and comparisons shared by the format tests. */
final class FormatFixtures {
  private FormatFixtures() {}

  /** Item {@code i} of a fixture: the UTF-8 bytes of {@code prefix + i}. */
  static byte[] item(String prefix, long i) {
    return (prefix + i).getBytes(StandardCharsets.UTF_8);
  }

  /** A filter with members {@code item-0 .. item-(n-1)}. */
  static BloomFilter filled(ProtocolId id, byte[] seed, long bits, int hashes, int members) {
    HashProtocol protocol = Protocols.of(id);
    BloomFilter filter = BloomFilter.create(protocol, seed, bits, hashes);
    for (int i = 0; i < members; i++) {
      filter.add(item("item-", i));
    }
    return filter;
  }

  /**
   * Asserts that two filters record the same parameters and bits, and answer alike for the members
   * {@code item-0 .. item-(members-1)} and {@code nonMembers} other items.
   */
  static void assertSameFilter(BloomFilter actual, BloomFilter expected, int members, int nonMembers) {
    assertThat(actual.protocolId()).isEqualTo(expected.protocolId());
    assertThat(actual.seed()).isEqualTo(expected.seed());
    assertThat(actual.bitSize()).isEqualTo(expected.bitSize());
    assertThat(actual.hashCount()).isEqualTo(expected.hashCount());
    assertThat(actual.insertedCount()).isEqualTo(expected.insertedCount());
    assertThat(actual.bitCount()).isEqualTo(expected.bitCount());
    assertThat(Internals.wordCount(actual)).isEqualTo(Internals.wordCount(expected));
    for (long j = 0; j < Internals.wordCount(expected); j++) {
      assertThat(Internals.word(actual, j)).as("word %d", j).isEqualTo(Internals.word(expected, j));
    }
    for (int i = 0; i < members; i++) {
      assertThat(actual.mightContain(item("item-", i))).as("member %d", i).isTrue();
    }
    for (int i = 0; i < nonMembers; i++) {
      byte[] probe = item("non-member-", i);
      assertThat(actual.mightContain(probe)).as("non-member %d", i).isEqualTo(expected.mightContain(probe));
    }
  }

  /** The files of a test-resource folder (README.md excluded), by name, in name order. */
  static Map<String, byte[]> resourceFolder(String folder) throws IOException {
    URL url = FormatFixtures.class.getClassLoader().getResource(folder);
    if (url == null) {
      throw new IOException("test resource folder " + folder + " is missing");
    }
    Path dir;
    try {
      dir = Paths.get(url.toURI());
    } catch (URISyntaxException e) {
      throw new IOException(e);
    }
    Map<String, byte[]> files = new TreeMap<>();
    try (Stream<Path> listing = Files.list(dir)) {
      for (Path file : (Iterable<Path>) listing::iterator) {
        String name = file.getFileName().toString();
        if (Files.isRegularFile(file) && !name.equals("README.md")) {
          files.put(name, Files.readAllBytes(file));
        }
      }
    }
    return files;
  }

  static byte[] hex(String hex) {
    byte[] out = new byte[hex.length() / 2];
    for (int i = 0; i < out.length; i++) {
      out[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
    }
    return out;
  }
}
