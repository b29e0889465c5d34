package io.bloomery.spark;

import io.bloomery.filter.MembershipFilter;
import io.bloomery.format.FilterFormat;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import org.apache.spark.sql.Encoder;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.expressions.Aggregator;

/**
 * A typed {@link Aggregator} that builds a filter from a Dataset's values and returns its {@link
 * FilterFormat} bytes: {@code Dataset<String> urls; byte[] file = urls.select(FilterAggregator.of(spec,
 * Encoders.STRING()).toColumn()).first();}. Input values are items encoded as everywhere in the
 * module: a String as UTF-8, a byte[] as itself, a Long as 8 little-endian bytes; a null is refused
 * or skipped per the spec.
 *
 * <p>A {@code Dataset<String>} holds decoded Java strings: text that was not valid UTF-8 (Spark's
 * text source keeps such bytes) has become replacement characters before this aggregator sees it, so
 * it is another item than {@code bloomery build} reads. Aggregate such text as bytes ({@code
 * Encoders.BINARY()} over {@code CAST(col AS BINARY)}), or use {@link BloomerySpark#build} or the SQL
 * functions, which hash the bytes.
 *
 * <p>The buffer is a filter held as an object between rows; between tasks it travels as its
 * FilterFormat bytes (Java serialization of one byte array, not of the filter's fields).
 *
 * @param <T> String, byte[] or Long
 */
public final class FilterAggregator<T> extends Aggregator<T, FilterAggregator.Buffer, byte[]> {
  private static final long serialVersionUID = 1L;

  private final FilterSpec spec;
  private final Encoder<T> inputEncoder;
  private final ItemColumn items;

  private FilterAggregator(FilterSpec spec, Encoder<T> inputEncoder) {
    this.spec = spec;
    this.inputEncoder = inputEncoder;
    this.items = ItemColumn.forValues("aggregated value", spec.nulls());
  }

  /** An aggregator building {@code spec} over values of {@code inputEncoder}'s type. */
  public static <T> FilterAggregator<T> of(FilterSpec spec, Encoder<T> inputEncoder) {
    return new FilterAggregator<>(spec, inputEncoder);
  }

  /** The encoder of the input values (for {@code functions.udaf}). */
  public Encoder<T> inputEncoder() {
    return inputEncoder;
  }

  @Override
  public Buffer zero() {
    return new Buffer(null);
  }

  @Override
  public Buffer reduce(Buffer buffer, T value) {
    byte[] item = items.bytesOfValue(value);
    if (item != null) {
      buffer.add(spec, item);
    }
    return buffer;
  }

  @Override
  public Buffer merge(Buffer left, Buffer right) {
    return Buffer.merge(left, right);
  }

  @Override
  public byte[] finish(Buffer buffer) {
    return buffer.bytes(spec);
  }

  @Override
  public Encoder<Buffer> bufferEncoder() {
    return Encoders.javaSerialization(Buffer.class);
  }

  @Override
  public Encoder<byte[]> outputEncoder() {
    return Encoders.BINARY();
  }

  /**
   * A filter being built (null until the first item) and the items offered to it, its recorded
   * count. Serialized as its FilterFormat bytes, which carry that count.
   */
  public static final class Buffer implements Serializable {
    private static final long serialVersionUID = 1L;
    private transient MembershipFilter filter;
    private transient long offered;

    Buffer(MembershipFilter filter) {
      this.filter = filter;
    }

    /** The filter so far, or null before the first item. */
    MembershipFilter current() {
      return filter;
    }

    /** The union of two buffers (either may still be empty). */
    static Buffer merge(Buffer left, Buffer right) {
      if (right.filter == null) {
        return left;
      }
      if (left.filter == null) {
        return right;
      }
      Filters.mergeInto(left.filter, right.filter);
      left.offered += right.offered;
      return left;
    }

    /** Adds one item, counting it as offered. */
    void add(FilterSpec spec, byte[] item) {
      Filters.add(filter(spec), item, 0, item.length);
      offered++;
    }

    /** The FilterFormat bytes of the filter so far (of {@code spec} if still empty), with the offered count. */
    byte[] bytes(FilterSpec spec) {
      filter(spec);
      return bytes();
    }

    /** The FilterFormat bytes of the filter so far, which must exist, with the offered count. */
    byte[] bytes() {
      return Filters.toBytes(filter, offered);
    }

    MembershipFilter filter(FilterSpec spec) {
      if (filter == null) {
        filter = spec.newFilter();
      }
      return filter;
    }

    private void writeObject(ObjectOutputStream out) throws IOException {
      out.defaultWriteObject();
      byte[] bytes = filter == null ? new byte[0] : Filters.toBytes(filter, offered);
      out.writeInt(bytes.length);
      out.write(bytes);
    }

    private void readObject(ObjectInputStream in) throws IOException, ClassNotFoundException {
      in.defaultReadObject();
      byte[] bytes = new byte[in.readInt()];
      in.readFully(bytes);
      filter = bytes.length == 0 ? null : Filters.fromBytes(bytes, "aggregation buffer");
      offered = filter == null ? 0 : Filters.insertedCount(filter);
    }
  }
}
