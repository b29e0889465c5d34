package io.bloomery.spark;

import io.bloomery.filter.MembershipFilter;
import io.bloomery.format.FilterFormat;
import io.bloomery.format.FilterFormatException;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.Collections;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.WeakHashMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;

/**
 * Bloomery filters over Spark Datasets: build one from a column, apply one as a dedup or semi-join
 * prefilter, and turn its "maybe" into an exact answer against the authoritative table.
 *
 * <pre>{@code
 * MembershipFilter seen = BloomerySpark.build(crawled, "url", FilterSpec.blocked(50_000_000, 0.01));
 * Dataset<Row> surelyNew = BloomerySpark.keepAbsent(frontier, "url", seen);   // definitely new
 * Dataset<Row> maybeSeen = BloomerySpark.keepMaybe(frontier, "url", seen);    // candidates
 * Dataset<Row> alsoNew   = BloomerySpark.confirm(maybeSeen, crawled, "url");  // the filter's false positives
 * }</pre>
 *
 * <p><b>Items</b> are the column's values encoded exactly as the library and {@code bloomery build}
 * encode them: a string column as its UTF-8 bytes (never normalised), a binary column as its bytes, a
 * bigint column as 8 little-endian bytes. A null is refused with an error naming the column unless the
 * spec says {@link FilterSpec.Nulls#SKIP}.
 *
 * <p><b>Which build.</b> {@link #build} makes one filter per partition and ORs them with a tree
 * aggregation: each partial filter is a whole m-bit filter, so it moves (partitions × m) bytes and the
 * result passes through the driver. Keep it to filters of up to a few hundred MB (the driver's
 * {@code spark.driver.maxResultSize}, 1 GiB by default, and the 2 GiB limit of one serialized array
 * bound it). {@link #buildSharded} is the path for billions of keys: rows are shuffled to the task
 * that owns their slice of the filter, each task writes only its slice, and no JVM holds the filter.
 *
 * <p><b>The inserted count</b> every build path records ({@link #build}, {@link #buildSharded}, {@link
 * FilterAggregator}, the SQL aggregates, and {@code bloomery build}) is the number of non-null items
 * offered, duplicates included. It depends neither on the order the items arrive in nor on the
 * partitioning, and it is additive, so ORing two builds' filters (whose counts add) gives exactly the
 * file a build over both item sets gives: every build of the same items is the same file, byte for
 * byte. It is an upper bound on the distinct items; the set bits give the estimate of those ({@code
 * estimatedCardinality()}).
 *
 * <p><b>Applying.</b> {@link #keepAbsent} and {@link #keepMaybe} broadcast the filter (its serialized
 * form, parsed once per executor JVM) and test the column with a UDF; a filter larger than a quarter
 * of {@code spark.executor.memory} is refused, because every executor would hold it twice while
 * loading. For larger filters, {@link #keepAbsentSharded} and {@link #keepMaybeSharded} apply the
 * filter shard-aligned from its file: each probe task reads only its slice of the file, no JVM holds
 * the filter.
 *
 * <p>All methods are thread-safe; they run Spark jobs on the dataset's session.
 */
public final class BloomerySpark {
  private BloomerySpark() {}

  /**
   * Builds a filter of {@code spec} over the items in {@code column} of {@code dataset}.
   *
   * @return a {@link io.bloomery.filter.BloomFilter} or {@link io.bloomery.blocked.BlockedBloomFilter}
   * @throws BloomerySparkException for a missing or unsupported column, or a refused null
   */
  public static MembershipFilter build(Dataset<?> dataset, String column, FilterSpec spec) {
    Objects.requireNonNull(spec, "spec");
    ItemColumn items = ItemColumn.resolve(dataset, column, spec.nulls());
    JavaRDD<InternalRow> rows = items.rows(dataset);
    JavaRDD<byte[]> partials = rows.mapPartitions(partition -> {
      MembershipFilter filter = spec.newFilter();
      byte[] scratch = new byte[Long.BYTES];
      long offered = 0;
      while (partition.hasNext()) {
        byte[] item = items.bytes(partition.next(), scratch);
        if (item != null) {
          Filters.add(filter, item, 0, item.length);
          offered++;
        }
      }
      // The partial records the items it was offered; the merge sums them (core's merge rule).
      return Collections.singletonList(Filters.toBytes(filter, offered)).iterator();
    });
    byte[] merged = Jobs.run(() -> partials.treeAggregate(new byte[0], Filters::merge, Filters::merge, depth(rows)));
    return merged.length == 0 ? spec.newFilter() : Filters.fromBytes(merged, "merged filter");
  }

  /** Tree depth: 2 levels up to 64 partitions, one more per factor of 8. */
  private static int depth(JavaRDD<?> rdd) {
    int partitions = Math.max(1, rdd.getNumPartitions());
    int depth = 2;
    for (long reach = 64; reach < partitions; reach *= 8) {
      depth++;
    }
    return depth;
  }

  /**
   * Builds the filter of {@code spec} over {@code column} as independent slices, one Spark task per
   * slice, and assembles them into one standard filter file at {@code path} (any Hadoop file
   * system). See {@link ShardedBuild}. {@code path} is replaced only when every slice is written and
   * checked; on failure nothing is left at {@code path} and the slices are deleted.
   *
   * @param slices how many slices (tasks) to split the filter into; 0 picks one per 64 MiB of filter
   */
  public static ShardedBuild.Result buildSharded(
      Dataset<?> dataset, String column, FilterSpec spec, String path, int slices) {
    return ShardedBuild.run(dataset, column, spec, path, slices);
  }

  /** {@link #buildSharded(Dataset, String, FilterSpec, String, int)} with one slice per 64 MiB. */
  public static ShardedBuild.Result buildSharded(Dataset<?> dataset, String column, FilterSpec spec, String path) {
    return buildSharded(dataset, column, spec, path, 0);
  }

  /**
   * The rows whose {@code column} value is definitely not in {@code filter}: new items, never a
   * member. A new item that the filter reports as maybe present (a false positive, probability about
   * the filter's FPR) is not among them; {@link #keepMaybe} and {@link #confirm} recover those.
   * Nulls are refused, or dropped under {@link FilterSpec.Nulls#SKIP}.
   */
  public static Dataset<Row> keepAbsent(Dataset<?> dataset, String column, MembershipFilter filter, FilterSpec.Nulls nulls) {
    return keep(dataset, column, filter, nulls, false);
  }

  /** {@link #keepAbsent(Dataset, String, MembershipFilter, FilterSpec.Nulls)} refusing nulls. */
  public static Dataset<Row> keepAbsent(Dataset<?> dataset, String column, MembershipFilter filter) {
    return keepAbsent(dataset, column, filter, FilterSpec.Nulls.REFUSE);
  }

  /**
   * The rows whose {@code column} value may be in {@code filter}: every member, plus new items that
   * are false positives. Only candidates: {@link #confirm} against the authoritative table gives the
   * exact answer.
   */
  public static Dataset<Row> keepMaybe(Dataset<?> dataset, String column, MembershipFilter filter, FilterSpec.Nulls nulls) {
    return keep(dataset, column, filter, nulls, true);
  }

  /** {@link #keepMaybe(Dataset, String, MembershipFilter, FilterSpec.Nulls)} refusing nulls. */
  public static Dataset<Row> keepMaybe(Dataset<?> dataset, String column, MembershipFilter filter) {
    return keepMaybe(dataset, column, filter, FilterSpec.Nulls.REFUSE);
  }

  /**
   * {@link #keepAbsent} for a filter too large to broadcast, applied shard-aligned from its file
   * ({@code filterPath}, any Hadoop file system; written by {@link #buildSharded}, {@link #writeFilter}
   * or {@code bloomery build}): the filter is split into {@code slices} ranges of its layout and each
   * probe task reads only its range of the file, so no JVM holds the filter. Blocked filters shuffle
   * the rows by block range; classic ones send each item to the slices its positions touch and join
   * the rows against the absent items. The answer is the broadcast path's, row for row (row order
   * aside). The file's header, length and CRC-32C are checked here, on the driver, first.
   *
   * @param slices ranges to split the filter into; 0 picks one per 64 MiB of filter
   * @throws BloomerySparkException for a missing, corrupt or truncated file, or one that holds
   *     anything but a classic or blocked Bloom filter
   */
  public static Dataset<Row> keepAbsentSharded(Dataset<?> dataset, String column, String filterPath,
      FilterSpec.Nulls nulls, int slices) {
    return ShardedApply.keep(dataset, column, filterPath, nulls, slices, false);
  }

  /** {@link #keepAbsentSharded(Dataset, String, String, FilterSpec.Nulls, int)} refusing nulls, one slice per 64 MiB. */
  public static Dataset<Row> keepAbsentSharded(Dataset<?> dataset, String column, String filterPath) {
    return keepAbsentSharded(dataset, column, filterPath, FilterSpec.Nulls.REFUSE, 0);
  }

  /** {@link #keepMaybe} applied shard-aligned from the filter's file; see {@link #keepAbsentSharded}. */
  public static Dataset<Row> keepMaybeSharded(Dataset<?> dataset, String column, String filterPath,
      FilterSpec.Nulls nulls, int slices) {
    return ShardedApply.keep(dataset, column, filterPath, nulls, slices, true);
  }

  /** {@link #keepMaybeSharded(Dataset, String, String, FilterSpec.Nulls, int)} refusing nulls, one slice per 64 MiB. */
  public static Dataset<Row> keepMaybeSharded(Dataset<?> dataset, String column, String filterPath) {
    return keepMaybeSharded(dataset, column, filterPath, FilterSpec.Nulls.REFUSE, 0);
  }

  private static Dataset<Row> keep(Dataset<?> dataset, String column, MembershipFilter filter,
      FilterSpec.Nulls nulls, boolean maybe) {
    Column test = mightContain(dataset, column, filter, nulls);
    // A null item makes the UDF return null under SKIP: the row is in neither result.
    return dataset.toDF().filter(maybe ? test : functions.not(test));
  }

  /**
   * A boolean column: whether {@code column}'s value may be in {@code filter} (broadcast). Null for a
   * null item under {@link FilterSpec.Nulls#SKIP}.
   */
  public static Column mightContain(Dataset<?> dataset, String column, MembershipFilter filter, FilterSpec.Nulls nulls) {
    Filters.requireBloom(filter, "keepAbsent/keepMaybe");
    ItemColumn items = ItemColumn.resolve(dataset, column, nulls);
    SparkSession session = dataset.sparkSession();
    long size = FilterFormat.serializedLength(filter);
    long executorMemory = session.sparkContext().getConf().getSizeAsBytes("spark.executor.memory", "1g");
    if (size > executorMemory / 4) {
      throw new BloomerySparkException("the filter is " + size + " bytes, more than a quarter of spark.executor.memory ("
          + executorMemory + " bytes), too large to broadcast; write it to a file and apply it shard-aligned with keepAbsentSharded / keepMaybeSharded");
    }
    Broadcast<byte[]> shared = JavaSparkContext.fromSparkContext(session.sparkContext()).broadcast(FilterFormat.toBytes(filter));
    UDF1<Object, Boolean> probe = value -> {
      byte[] item = items.bytesOfValue(value);
      if (item == null) {
        return null;
      }
      return Filters.mightContain(BroadcastFilters.of(shared.value()), item, 0, item.length);
    };
    UserDefinedFunction udf = functions.udf(probe, DataTypes.BooleanType).asNondeterministic();
    return udf.apply(items.itemColumn(dataset));
  }

  /**
   * The rows of {@code maybeRows} whose {@code column} value is not in {@code authoritative}'s
   * column of the same name: among the filter's "maybe" rows, exactly those that are in fact new
   * (its false positives). A left anti join, so it is exact whatever the filter said;
   * {@code keepAbsent(d) ∪ confirm(keepMaybe(d), authoritative)} is exactly the new rows of d.
   */
  public static Dataset<Row> confirm(Dataset<?> maybeRows, Dataset<?> authoritative, String column) {
    return confirm(maybeRows, column, authoritative, column);
  }

  /** {@link #confirm(Dataset, Dataset, String)} where the authoritative table names the key {@code authoritativeColumn}. */
  public static Dataset<Row> confirm(Dataset<?> maybeRows, String column, Dataset<?> authoritative, String authoritativeColumn) {
    ItemColumn.resolve(maybeRows, column, FilterSpec.Nulls.SKIP);
    ItemColumn.resolve(authoritative, authoritativeColumn, FilterSpec.Nulls.SKIP);
    Dataset<Row> keys = authoritative.toDF().select(authoritative.col(authoritativeColumn).as("__bloomery_key")).distinct();
    return maybeRows.toDF().join(keys, maybeRows.col(column).equalTo(keys.col("__bloomery_key")), "left_anti");
  }

  /** Reads a classic or blocked filter file through Hadoop's FileSystem (local, HDFS, S3A, ...). */
  public static MembershipFilter readFilter(SparkSession session, String path) {
    Path file = new Path(path);
    Configuration conf = session.sparkContext().hadoopConfiguration();
    try {
      FileSystem fs = file.getFileSystem(conf);
      if (!fs.exists(file)) {
        throw new BloomerySparkException("no such filter file: " + path);
      }
      if (fs.getFileStatus(file).isDirectory()) {
        throw new BloomerySparkException(path + " is a directory, not a filter file");
      }
      try (InputStream in = new BufferedInputStream(fs.open(file), 1 << 16)) {
        Object filter = FilterFormat.read(in, fs.getFileStatus(file).getLen());
        if (in.read() != -1) {
          throw new BloomerySparkException(path + ": trailing bytes after the filter's checksum");
        }
        return Filters.requireBloom(filter, path + ":");
      }
    } catch (FilterFormatException e) {
      throw new BloomerySparkException(path + ": not a valid Bloomery filter file: " + e.getMessage(), e);
    } catch (IOException e) {
      throw new UncheckedIOException(path + ": " + e.getMessage(), e);
    }
  }

  /**
   * Writes {@code filter} to {@code path} through Hadoop's FileSystem: to a temporary file beside it,
   * renamed over {@code path} once complete, so a failure never leaves a half-written file there.
   */
  public static void writeFilter(SparkSession session, MembershipFilter filter, String path) {
    Filters.requireBloom(filter, "writeFilter");
    writeAtomically(session.sparkContext().hadoopConfiguration(), path, out -> FilterFormat.write(filter, out));
  }

  /** Writes something to a temporary sibling of {@code path}, then renames it over {@code path}. */
  static void writeAtomically(Configuration conf, String path, StreamWriter writer) {
    Path target = new Path(path);
    Path temporary = new Path(target.getParent(), "." + target.getName() + "." + Long.toHexString(System.nanoTime()) + ".tmp");
    try {
      FileSystem fs = fileSystem(target, conf);
      boolean done = false;
      try {
        try (OutputStream out = new BufferedOutputStream(fs.create(temporary, false), 1 << 16)) {
          writer.write(out);
        }
        if (fs.exists(target) && !fs.delete(target, false)) {
          throw new IOException("cannot replace " + target);
        }
        if (!fs.rename(temporary, target)) {
          throw new IOException("cannot rename " + temporary + " to " + target);
        }
        done = true;
      } finally {
        if (!done) {
          fs.delete(temporary, false);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(path + ": " + e.getMessage(), e);
    }
  }

  /**
   * The file system of {@code path}; for the local one, its raw form, which writes no {@code .crc}
   * side files (every file we write carries its own CRC-32C).
   */
  static FileSystem fileSystem(Path path, Configuration conf) throws IOException {
    FileSystem fs = path.getFileSystem(conf);
    return fs instanceof org.apache.hadoop.fs.LocalFileSystem local ? local.getRawFileSystem() : fs;
  }

  /** Writes bytes to a stream. */
  @FunctionalInterface
  interface StreamWriter {
    void write(OutputStream out) throws IOException;
  }

  /** Parsed broadcast filters, one per broadcast value per executor JVM (weakly held). */
  static final class BroadcastFilters {
    private static final Map<byte[], MembershipFilter> PARSED = Collections.synchronizedMap(new WeakHashMap<>());

    private BroadcastFilters() {}

    static MembershipFilter of(byte[] serialized) {
      MembershipFilter filter = PARSED.get(serialized);
      if (filter == null) {
        filter = Filters.fromBytes(serialized, "broadcast filter");
        PARSED.put(serialized, filter);
      }
      return filter;
    }
  }

  static <T> Iterator<T> single(T value) {
    return Collections.singletonList(value).iterator();
  }
}
