package io.bloomery.cuckoo;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.hash.MurmurHash2;
import io.bloomery.testkit.RedisItems;
import org.junit.jupiter.api.Test;

/**
 * The documented hazard of cuckoo deletion: fingerprints are 8 bits, so deleting an item that was never added can
 * remove another item's fingerprint and turn that item into a false negative (RedisBloom's {@code cf.del.md}).
 */
class CuckooDeleteHazardTest {

  /** The first {@code item-j} whose fingerprint and bucket pair coincide with {@code member}'s in {@code filter}. */
  private static byte[] collidingItem(byte[] member, long buckets) {
    CuckooFilter.Fingerprint target = new CuckooFilter.Fingerprint(MurmurHash2.hash64A(member, 0));
    long b1 = Long.remainderUnsigned(target.h1, buckets);
    long b2 = Long.remainderUnsigned(target.h2, buckets);
    for (int j = 0; ; j++) {
      byte[] candidate = RedisItems.of("item-" + j);
      CuckooFilter.Fingerprint key = new CuckooFilter.Fingerprint(MurmurHash2.hash64A(candidate, 0));
      long c1 = Long.remainderUnsigned(key.h1, buckets);
      if (key.fp == target.fp && (c1 == b1 || c1 == b2)) {
        return candidate;
      }
    }
  }

  @Test
  void deletingANeverAddedItemCanRemoveAnotherItemsFingerprint() {
    CuckooFilter filter = CuckooFilter.create(1024); // 512 buckets of 2
    byte[] member = RedisItems.of("alice@example.com");
    byte[] stranger = collidingItem(member, filter.bucketCount());
    assertThat(new String(stranger, java.nio.charset.StandardCharsets.UTF_8)).isEqualTo("item-147553");

    filter.add(member);
    assertThat(filter.mightContain(stranger)).as("the stranger is a false positive").isTrue();
    assertThat(filter.remove(stranger)).as("its delete finds the member's fingerprint").isTrue();
    assertThat(filter.mightContain(member)).as("the member became a false negative").isFalse();
    assertThat(filter.insertedCount()).isZero();
  }

  @Test
  void addIfAbsentStoresNothingForAFalsePositiveSoItsDeleteHitsTheOtherItem() {
    CuckooFilter filter = CuckooFilter.create(1024);
    byte[] member = RedisItems.of("alice@example.com");
    byte[] stranger = collidingItem(member, filter.bucketCount());
    filter.add(member);
    assertThat(filter.addIfAbsent(stranger)).as("CF.ADDNX sees the member's fingerprint").isFalse();
    filter.remove(stranger);
    assertThat(filter.mightContain(member)).isFalse();
  }

  @Test
  void deletingOnlyAddedItemsNeverLosesAnother() {
    CuckooFilter filter = CuckooFilter.create(1024);
    byte[] member = RedisItems.of("alice@example.com");
    byte[] stranger = collidingItem(member, filter.bucketCount());
    filter.add(member);
    filter.add(stranger); // CF.ADD stores the stranger's own copy
    assertThat(filter.count(member)).isEqualTo(2);
    assertThat(filter.remove(stranger)).isTrue();
    assertThat(filter.mightContain(member)).isTrue();
  }
}
