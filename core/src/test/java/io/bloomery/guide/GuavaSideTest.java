package io.bloomery.guide;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnel;
import com.google.common.hash.Funnels;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Guava column of docs/FROM-GUAVA.md: each {@code // region guide-...} below appears there verbatim
 * ({@link FromGuavaGuideTest#guide_showsEveryRegionVerbatim}).
 */
class GuavaSideTest {
  record Order(long customerId, String sku) {}

  @Test
  void createPutMightContain() {
    // region guide-guava-create
    BloomFilter<CharSequence> visited =
        BloomFilter.create(Funnels.stringFunnel(StandardCharsets.UTF_8), 10_000_000, 0.01);
    boolean changed = visited.put("https://example.com/");
    boolean maybe = visited.mightContain("https://example.com/");
    // endregion guide-guava-create
    assertThat(changed).isTrue();
    assertThat(maybe).isTrue();
  }

  @Test
  void funnel() {
    // region guide-guava-funnel
    Funnel<Order> orderFunnel = (order, into) -> into.putLong(order.customerId())
        .putString(order.sku(), StandardCharsets.UTF_8);
    BloomFilter<Order> orders = BloomFilter.create(orderFunnel, 1_000_000, 0.001);
    orders.put(new Order(42, "SKU-1"));
    // endregion guide-guava-funnel
    assertThat(orders.mightContain(new Order(42, "SKU-1"))).isTrue();
  }

  @Test
  void writeToReadFrom(@TempDir Path dir) throws IOException {
    BloomFilter<CharSequence> visited =
        BloomFilter.create(Funnels.stringFunnel(StandardCharsets.UTF_8), 1_000, 0.01);
    visited.put("https://example.com/");
    Path file = dir.resolve("visited.bin");
    // region guide-guava-write
    try (OutputStream out = Files.newOutputStream(file)) {
      visited.writeTo(out);
    }
    BloomFilter<CharSequence> loaded;
    try (InputStream in = Files.newInputStream(file)) {
      loaded = BloomFilter.readFrom(in, Funnels.stringFunnel(StandardCharsets.UTF_8));
    }
    // endregion guide-guava-write
    assertThat(loaded.mightContain("https://example.com/")).isTrue();
  }
}
