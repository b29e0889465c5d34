package io.bloomery.spark;

import io.bloomery.filter.FilterKind;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.format.FilterFormat;
import java.util.Arrays;
import org.apache.spark.sql.Encoder;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.expressions.Aggregator;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.NullType;
import scala.Function1;
import scala.Option;
import scala.Tuple3;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * SQL functions over Bloomery filters, registered on a session with {@link #register}:
 *
 * <ul>
 *   <li>{@code bloomery_build(item, n, p)}: aggregate; the classic filter for n items at rate p
 *       (planned as {@code bloomery build --expected n --fpp p} plans it) over a string, binary or
 *       bigint column, as FilterFormat bytes (BINARY); {@code bloomery_build_blocked} builds a
 *       blocked filter. The item is hashed as its bytes: a string's bytes as Spark holds them (not
 *       decoded, so text that is not valid UTF-8 is the same item as for {@code bloomery build}), a
 *       binary value's bytes, a bigint's 8 little-endian bytes. n and p are read from the first row
 *       of each group and must be the same on every row. {@code bloomery_build_binary} and {@code
 *       bloomery_build_long} are the classic aggregate with its item cast to binary / bigint.
 *   <li>{@code bloomery_might_contain(filter, item)}: whether a string, binary or bigint item (its
 *       bytes, as above) may be in the filter (FilterFormat BINARY, for example the result of {@code
 *       bloomery_build}); null for a null item or a null filter.
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

  /**
   * Registers every function above on {@code session}.
   *
   * <p>The item argument is dispatched on its type when the query is analysed: a string is cast to
   * binary first, which hands over its bytes as Spark holds them (a text file's line that is not
   * valid UTF-8 stays the bytes read, where a function receiving the decoded string would see
   * replacement characters, hash another item and miss members); a binary item passes as it is, a
   * bigint becomes its 8 little-endian bytes; any other type is refused by name.
   */
  public static void register(SparkSession session) {
    FunctionRegistry registry = session.sessionState().functionRegistry();
    // Each typed function is registered through the public API, its builder taken from the registry,
    // and the public name then bound to a builder that picks one by the item's type.
    Builder classicBytes = typed(session, "bloomery_build", new Sized<byte[]>(FilterKind.CLASSIC_BLOOM), Encoders.BINARY());
    Builder classicLongs = typed(session, "bloomery_build", new Sized<Long>(FilterKind.CLASSIC_BLOOM), Encoders.LONG());
    Builder blockedBytes = typed(session, "bloomery_build_blocked", new Sized<byte[]>(FilterKind.BLOCKED_BLOOM), Encoders.BINARY());
    Builder blockedLongs = typed(session, "bloomery_build_blocked", new Sized<Long>(FilterKind.BLOCKED_BLOOM), Encoders.LONG());
    registry.createOrReplaceTempFunction("bloomery_build", byItemType("bloomery_build", 0, classicBytes, classicLongs), "scala_udf");
    registry.createOrReplaceTempFunction("bloomery_build_blocked", byItemType("bloomery_build_blocked", 0, blockedBytes, blockedLongs),
        "scala_udf");
    typed(session, "bloomery_build_binary", new Sized<byte[]>(FilterKind.CLASSIC_BLOOM), Encoders.BINARY());
    typed(session, "bloomery_build_long", new Sized<Long>(FilterKind.CLASSIC_BLOOM), Encoders.LONG());
    session.udf().register("bloomery_might_contain", new MightContain(), DataTypes.BooleanType);
    Builder probe = builder(registry, "bloomery_might_contain");
    registry.createOrReplaceTempFunction("bloomery_might_contain", byItemType("bloomery_might_contain", 1, probe, probe), "java_udf");
  }

  /** A function's expression builder, as the registry holds it. */
  @FunctionalInterface
  interface Builder extends Function1<Seq<Expression>, Expression> {}

  /** Registers {@code aggregator} over (item, n, p) as {@code name}; returns its builder. */
  private static <T> Builder typed(SparkSession session, String name, Sized<T> aggregator, Encoder<T> item) {
    session.udf().register(name, functions.udaf(aggregator, Encoders.tuple(item, Encoders.LONG(), Encoders.DOUBLE())));
    return builder(session.sessionState().functionRegistry(), name);
  }

  /**
   * The builder of the temporary function {@code name}: its identifier is the bare name up to Spark
   * 4.1 and {@code system.session.name} from 4.2, so it is found by listing.
   */
  private static Builder builder(FunctionRegistry registry, String name) {
    for (FunctionIdentifier id : CollectionConverters.asJava(registry.listFunction())) {
      boolean temporary = id.database().isEmpty() || id.database().get().equals("session");
      if (id.funcName().equals(name) && temporary) {
        Function1<Seq<Expression>, Expression> registered = registry.lookupFunctionBuilder(id).get();
        return registered::apply;
      }
    }
    throw new IllegalStateException("the function " + name + " just registered is not in the session's registry");
  }

  /**
   * A builder that hands argument {@code index}, the item, over as bytes: a string cast to binary,
   * to {@code bytes}; a binary or null-typed item to {@code bytes} as it is; a bigint to {@code longs}.
   */
  private static Builder byItemType(String function, int index, Builder bytes, Builder longs) {
    return arguments -> {
      if (arguments.length() <= index) {
        return bytes.apply(arguments); // the typed builder reports the wrong argument count
      }
      Expression item = arguments.apply(index);
      DataType type = item.dataType();
      if (type instanceof NullType) {
        return bytes.apply(arguments);
      }
      switch (ItemColumn.typeOf(function + "'s item", type)) {
        case STRING:
          java.util.List<Expression> cast = new java.util.ArrayList<>(CollectionConverters.asJava(arguments));
          cast.set(index, new Cast(item, DataTypes.BinaryType, Option.empty()));
          return bytes.apply(CollectionConverters.asScala(cast).toList());
        case BINARY:
          return bytes.apply(arguments);
        default:
          return longs.apply(arguments);
      }
    };
  }

  /** bloomery_build*: the spec comes from the (n, p) of the rows. */
  static final class Sized<T> extends Aggregator<Tuple3<T, Long, Double>, FilterAggregator.Buffer, byte[]> {
    private static final long serialVersionUID = 1L;
    private final FilterKind kind;
    private final ItemColumn items = ItemColumn.forValues("bloomery_build's item", FilterSpec.Nulls.REFUSE);

    Sized(FilterKind kind) {
      this.kind = kind;
    }

    private FilterSpec spec(Tuple3<T, Long, Double> row) {
      if (row._2() == null || row._3() == null) {
        throw new BloomerySparkException("bloomery_build(item, n, p): n and p must not be null");
      }
      try {
        return kind == FilterKind.CLASSIC_BLOOM ? FilterSpec.classic(row._2(), row._3()) : FilterSpec.blocked(row._2(), row._3());
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
