package io.bloomery.spark;

import io.bloomery.filter.MembershipFilter;
import io.bloomery.format.FilterFormat;
import java.util.Arrays;
import org.apache.spark.sql.Encoder;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.expressions.Aggregator;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import scala.Tuple3;

/**
 * SQL functions over Bloomery filters, registered on a session with {@link #register}:
 *
 * <ul>
 *   <li>{@code bloomery_build(item, n, p)}: aggregate; the classic filter for n items at rate p
 *       (planned as {@code bloomery build --expected n --fpp p} plans it) over a string column, as
 *       FilterFormat bytes (BINARY). {@code bloomery_build_binary} and {@code bloomery_build_long}
 *       take binary and bigint items (Spark would otherwise cast a bigint to its decimal text);
 *       {@code bloomery_build_blocked} builds a blocked filter over a string column. n and p are
 *       read from the first row of each group and must be the same on every row.
 *   <li>{@code bloomery_might_contain(filter, item)}: whether a string, binary or bigint item may be in
 *       the filter (FilterFormat BINARY, for example the result of {@code bloomery_build}); null for
 *       a null item or a null filter.
 * </ul>
 *
 * <pre>{@code
 * SELECT bloomery_build(url, 1000000, 0.01) FROM crawled
 * SELECT * FROM frontier, seen WHERE NOT bloomery_might_contain(seen.filter, frontier.url)
 * }</pre>
 *
 * Null items are refused with an error naming the function; filter them with {@code WHERE item IS
 * NOT NULL}. A filter argument is parsed once and reused while the same bytes keep coming (a
 * literal, a broadcast scalar subquery); its bytes are compared whole only when the reference changes.
 */
public final class SqlFunctions {
  private SqlFunctions() {}

  /** Registers every function above on {@code session}. */
  public static void register(SparkSession session) {
    session.udf().register("bloomery_build", functions.udaf(new Sized<String>(FilterSpec.Kind.CLASSIC),
        Encoders.tuple(Encoders.STRING(), Encoders.LONG(), Encoders.DOUBLE())));
    session.udf().register("bloomery_build_blocked", functions.udaf(new Sized<String>(FilterSpec.Kind.BLOCKED),
        Encoders.tuple(Encoders.STRING(), Encoders.LONG(), Encoders.DOUBLE())));
    session.udf().register("bloomery_build_binary", functions.udaf(new Sized<byte[]>(FilterSpec.Kind.CLASSIC),
        Encoders.tuple(Encoders.BINARY(), Encoders.LONG(), Encoders.DOUBLE())));
    session.udf().register("bloomery_build_long", functions.udaf(new Sized<Long>(FilterSpec.Kind.CLASSIC),
        Encoders.tuple(Encoders.LONG(), Encoders.LONG(), Encoders.DOUBLE())));
    session.udf().register("bloomery_might_contain", new MightContain(), DataTypes.BooleanType);
  }

  /** bloomery_build*: the spec comes from the (n, p) of the rows. */
  static final class Sized<T> extends Aggregator<Tuple3<T, Long, Double>, FilterAggregator.Buffer, byte[]> {
    private static final long serialVersionUID = 1L;
    private final FilterSpec.Kind kind;
    private final ItemColumn items = ItemColumn.forValues("bloomery_build's item", FilterSpec.Nulls.REFUSE);

    Sized(FilterSpec.Kind kind) {
      this.kind = kind;
    }

    private FilterSpec spec(Tuple3<T, Long, Double> row) {
      if (row._2() == null || row._3() == null) {
        throw new BloomerySparkException("bloomery_build(item, n, p): n and p must not be null");
      }
      try {
        return kind == FilterSpec.Kind.CLASSIC ? FilterSpec.classic(row._2(), row._3()) : FilterSpec.blocked(row._2(), row._3());
      } catch (IllegalArgumentException e) {
        throw new BloomerySparkException("bloomery_build(item, n, p): " + e.getMessage(), e);
      }
    }

    @Override
    public FilterAggregator.Buffer zero() {
      return new FilterAggregator.Buffer(null);
    }

    @Override
    public FilterAggregator.Buffer reduce(FilterAggregator.Buffer buffer, Tuple3<T, Long, Double> row) {
      FilterSpec spec = spec(row);
      MembershipFilter filter = buffer.filter(spec);
      if (!FilterSpec.of(filter).equals(spec)) {
        throw new BloomerySparkException("bloomery_build(item, n, p): n and p differ between rows of one group");
      }
      buffer.add(spec, items.bytesOfValue(row._1()));
      return buffer;
    }

    @Override
    public FilterAggregator.Buffer merge(FilterAggregator.Buffer left, FilterAggregator.Buffer right) {
      return FilterAggregator.Buffer.merge(left, right);
    }

    /** The filter's bytes; null for a group without rows, whose n and p are unknown. */
    @Override
    public byte[] finish(FilterAggregator.Buffer buffer) {
      return buffer.current() == null ? null : buffer.bytes();
    }

    @Override
    public Encoder<FilterAggregator.Buffer> bufferEncoder() {
      return Encoders.javaSerialization(FilterAggregator.Buffer.class);
    }

    @Override
    public Encoder<byte[]> outputEncoder() {
      return Encoders.BINARY();
    }
  }

  /** bloomery_might_contain: parses the filter once per distinct bytes seen in a row. */
  static final class MightContain implements UDF2<byte[], Object, Boolean> {
    private static final long serialVersionUID = 1L;
    private final ItemColumn items = ItemColumn.forValues("bloomery_might_contain's item", FilterSpec.Nulls.SKIP);
    private transient byte[] lastBytes;
    private transient MembershipFilter lastFilter;

    @Override
    public Boolean call(byte[] filterBytes, Object value) {
      if (filterBytes == null) {
        return null;
      }
      byte[] item = items.bytesOfValue(value);
      if (item == null) {
        return null;
      }
      if (filterBytes != lastBytes && !Arrays.equals(filterBytes, lastBytes)) {
        lastFilter = Filters.fromBytes(filterBytes, "bloomery_might_contain's filter");
        lastBytes = filterBytes;
      }
      return Filters.mightContain(lastFilter, item, 0, item.length);
    }
  }
}
