package io.bloomery.counting;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.hash.Protocols;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/** Counting filter against an exact multiset under arbitrary add/remove sequences (fixed jqwik seed). */
class CountingBloomFilterPropertyTest {

  /** Non-negative ops add item op; negative ops remove item −op−1 if the model holds it. */
  @Property(tries = 300, seed = "20261130")
  void noFalseNegativesForItemsWithPositiveMultiplicity(
      @ForAll @Size(max = 300) List<@IntRange(min = -40, max = 39) Integer> ops,
      @ForAll("widths") int width) {
    CountingBloomFilter filter = CountingBloomFilter.create(Protocols.defaultProtocol(), new byte[0], 256, 3, width);
    Map<Integer, Integer> model = new HashMap<>();
    for (int op : ops) {
      if (op >= 0) {
        filter.add("x" + op);
        model.merge(op, 1, Integer::sum);
      } else {
        int item = -op - 1;
        if (model.getOrDefault(item, 0) > 0) {
          assertThat(filter.remove("x" + item)).isTrue();
          model.merge(item, -1, Integer::sum);
        }
      }
    }
    model.forEach((item, count) -> {
      if (count > 0) {
        assertThat(filter.mightContain("x" + item)).as("x%d x%d", item, count).isTrue();
      }
    });
    assertThat(filter.insertedCount()).isEqualTo(model.values().stream().mapToLong(Integer::longValue).sum());
  }

  @net.jqwik.api.Provide
  net.jqwik.api.Arbitrary<Integer> widths() {
    return net.jqwik.api.Arbitraries.of(4, 8, 16);
  }
}
