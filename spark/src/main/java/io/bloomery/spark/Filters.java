package io.bloomery.spark;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.format.FilterFormat;
import io.bloomery.format.FilterFormatException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;

/** Serializing, merging and checking the two filter kinds a Spark job moves between JVMs. */
final class Filters {
  private Filters() {}

  /** {@code ceil(a / b)} for {@code a >= 0, b > 0} (Math.ceilDiv is newer than this module's Java 17). */
  static long ceilDiv(long a, long b) {
    return a / b + (a % b == 0 ? 0 : 1);
  }

  /** The message for a filter that is not a classic or blocked Bloom filter. */
  static String needsBloom(Object filter) {
    String what = filter instanceof MembershipFilter m ? "a " + m.kind().kindName() + " filter"
        : filter == null ? "null" : "a " + filter.getClass().getName();
    return "needs a classic or blocked Bloom filter, found " + what;
  }

  /** {@code filter} as a classic or blocked filter, or a clear error. */
  static MembershipFilter requireBloom(Object filter, String what) {
    if (filter instanceof BloomFilter || filter instanceof BlockedBloomFilter) {
      return (MembershipFilter) filter;
    }
    throw new BloomerySparkException(what + " " + needsBloom(filter));
  }

  /** Parses FilterFormat bytes written by this module (a classic or blocked filter). */
  static MembershipFilter fromBytes(byte[] bytes, String what) {
    try {
      return requireBloom(FilterFormat.fromBytes(bytes), what);
    } catch (FilterFormatException e) {
      throw new BloomerySparkException(what + " is not a valid Bloomery filter: " + e.getMessage(), e);
    }
  }

  /**
   * Writes a classic or blocked filter with {@code offered} as its recorded inserted count: the number
   * of items a build was given (duplicates included), the count every build path of this module and
   * {@code bloomery build} record, whatever the order or partitioning (docs/SPARK.md).
   */
  static void write(MembershipFilter filter, long offered, OutputStream out) throws IOException {
    FilterFormat.write(requireBloom(filter, "write"), offered, out);
  }

  /** {@link #write(MembershipFilter, long, OutputStream)} into a byte array. */
  static byte[] toBytes(MembershipFilter filter, long offered) {
    ByteArrayOutputStream out = new ByteArrayOutputStream((int) Math.min(Integer.MAX_VALUE - 8, FilterFormat.serializedLength(filter)));
    try {
      write(filter, offered, out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  /**
   * The OR of two serialized partial filters of the same spec; an empty array stands for "no
   * filter yet" (the aggregation's zero).
   */
  static byte[] merge(byte[] left, byte[] right) {
    if (left.length == 0) {
      return right;
    }
    if (right.length == 0) {
      return left;
    }
    MembershipFilter into = fromBytes(left, "partial filter");
    MembershipFilter from = fromBytes(right, "partial filter");
    mergeInto(into, from);
    return FilterFormat.toBytes(into);
  }

  /** ORs {@code from} into {@code into}, both of the same kind and placement. */
  static void mergeInto(MembershipFilter into, MembershipFilter from) {
    if (into instanceof BloomFilter classic && from instanceof BloomFilter other) {
      classic.mergeFrom(other);
    } else if (into instanceof BlockedBloomFilter blocked && from instanceof BlockedBloomFilter other) {
      blocked.mergeFrom(other);
    } else {
      throw new BloomerySparkException("cannot merge a " + from.kind().kindName() + " filter into a "
          + into.kind().kindName() + " filter");
    }
  }

  /** The inserted count of a classic or blocked filter. */
  static long insertedCount(MembershipFilter filter) {
    return filter instanceof BloomFilter classic ? classic.insertedCount() : ((BlockedBloomFilter) filter).insertedCount();
  }

  /** Adds {@code item[offset, offset + length)} to a classic or blocked filter. */
  static boolean add(MembershipFilter filter, byte[] item, int offset, int length) {
    return filter instanceof BloomFilter classic
        ? classic.add(item, offset, length)
        : ((BlockedBloomFilter) filter).add(item, offset, length);
  }

  /** Queries {@code item[offset, offset + length)} in a classic or blocked filter. */
  static boolean mightContain(MembershipFilter filter, byte[] item, int offset, int length) {
    return filter instanceof BloomFilter classic
        ? classic.mightContain(item, offset, length)
        : ((BlockedBloomFilter) filter).mightContain(item, offset, length);
  }
}
