package io.bloomery.testkit;

import io.bloomery.filter.FilterKind;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.fuse.BinaryFuseFilter;
import io.bloomery.hash.ProtocolId;
import java.nio.ByteBuffer;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;

/**
 * How {@link FilterContract} runs over a static kind, whose filters are built once from a whole set:
 * the contract's "an item that was added" reads "an item of the build set" there. This accumulator
 * keeps the distinct items added so far and answers every query with the real {@link BinaryFuseFilter}
 * built from exactly those items (rebuilt after each change), so every sentence of the contract is
 * checked against the real construction and the real query path.
 */
final class StaticSetFilter implements MembershipFilter {

  private final int fingerprintBits;
  private final Set<ByteBuffer> items = new LinkedHashSet<>();
  private BinaryFuseFilter built;

  StaticSetFilter(int fingerprintBits) {
    this.fingerprintBits = fingerprintBits;
  }

  StaticSetFilter(BinaryFuseFilter built) {
    this.fingerprintBits = built.fingerprintBits();
    this.built = built;
  }

  @Override
  public FilterKind kind() {
    return FilterKind.BINARY_FUSE;
  }

  @Override
  public ProtocolId protocolId() {
    return ProtocolId.XXH3_FUSE_V1;
  }

  /** The distinct items added so far, or the read-back filter's count. */
  @Override
  public synchronized long insertedCount() {
    return items.isEmpty() && built != null ? built.insertedCount() : items.size();
  }

  @Override
  public synchronized boolean add(byte[] item) {
    Objects.requireNonNull(item, "item");
    if (built != null && items.isEmpty() && built.insertedCount() > 0) {
      throw new IllegalStateException("a filter read back from bytes has no item list to extend");
    }
    boolean fresh = items.add(ByteBuffer.wrap(item.clone()));
    if (fresh) {
      built = null;
    }
    return fresh;
  }

  @Override
  public synchronized boolean mightContain(byte[] item) {
    Objects.requireNonNull(item, "item");
    return filter().mightContain(item);
  }

  /** The real filter built from every item added so far. */
  synchronized BinaryFuseFilter filter() {
    if (built == null) {
      built = BinaryFuseFilter.build(items.stream().map(buffer -> buffer.array()).toList(), fingerprintBits);
    }
    return built;
  }
}
