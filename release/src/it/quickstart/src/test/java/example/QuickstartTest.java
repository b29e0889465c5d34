package example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.bloomery.filter.BloomFilter;
import io.bloomery.format.FilterFormat;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The README's "library in ten lines", verbatim between the region markers, against the deployed artifacts. */
class QuickstartTest {
  @TempDir Path dir;

  @Test
  void readmeQuickstart() throws IOException {
    Path file = dir.resolve("visited.blmf");
    // region readme-quickstart
    // 10M URLs at a 1% false-positive rate: 95,850,584 bits (11.4 MiB), 7 hashes.
    BloomFilter visited = BloomFilter.create(10_000_000, 0.01);

    visited.add("https://example.com/"); // items are bytes; strings are UTF-8, never normalised
    boolean maybe = visited.mightContain("https://example.com/"); // true: go and check the store
    boolean unseen = !visited.mightContain("https://example.org/"); // absent is definite

    // One self-describing file: protocol, seed, m, k, inserted count, bits, CRC-32C.
    FilterFormat.write(visited, file);
    BloomFilter loaded = FilterFormat.readBloom(file);
    // endregion readme-quickstart

    assertTrue(maybe);
    assertTrue(unseen);
    assertTrue(loaded.mightContain("https://example.com/"));
    assertEquals(95_850_584L, loaded.bitSize());
    assertEquals(7, loaded.hashCount());
  }
}
