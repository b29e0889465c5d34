package io.bloomery.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class RegisterBlockedPrototypeTest {

  @Test
  void sizedByTheModelAndNeverFalseNegative() {
    RegisterBlockedPrototype filter = RegisterBlockedPrototype.create(100_000, 0.01);
    assertThat(filter.modelFpp(100_000)).isLessThanOrEqualTo(0.01);
    assertThat(filter.bitSize() / 100_000.0).isBetween(11.5, 12.5); // ~21% over the blocked filter's 9.9
    java.util.SplittableRandom random = new java.util.SplittableRandom(1);
    long[] members = new long[100_000];
    for (int i = 0; i < members.length; i++) {
      members[i] = random.nextLong();
      filter.add(members[i]);
    }
    for (long member : members) {
      assertThat(filter.mightContain(member)).isTrue();
    }
  }
}
