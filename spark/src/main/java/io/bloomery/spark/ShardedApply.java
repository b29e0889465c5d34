package io.bloomery.spark;

import io.bloomery.blocked.BlockedPlacement;
import io.bloomery.filter.FilterKind;
import io.bloomery.format.FilterFormat;
import io.bloomery.format.FilterFormatException;
import io.bloomery.format.FilterHeader;
import io.bloomery.hash.HashProtocol;
import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import scala.Tuple2;

/**
 * {@code keepAbsent} / {@code keepMaybe} for a filter too large for executor memory: the filter stays
 * in its file and is read slice by slice (the slicing of {@link ShardedBuild}), each probe task holding
 * only its own slice's words, read by a range read of the file. No JVM holds the filter.
 *
 * <p><b>Blocked filters</b>: an item's bits all lie in one block, so the rows themselves are
 * partitioned by the block range their item falls in; each task reads its slice and keeps or drops
 * its rows. One shuffle of the rows.
 *
 * <p><b>Classic filters</b>: an item's k positions fall in up to k slices, so no one task can answer
 * for it. Each item is sent, with its positions in that slice, to every slice its positions touch;
 * each slice emits the items with a position that is not set there (definitely absent). The rows are
 * then joined against those items on the item's bytes: a left semi join keeps the absent rows, a
 * left anti join the maybe rows. Shuffled: item bytes plus 8 bytes per position, for each slice an
 * item touches, then the join.
 *
 * <p>The file is checked once on the driver before anything runs: its header (a classic or blocked
 * filter), its length against the header, and its CRC-32C over the whole file (one sequential read;
 * the tasks' range reads skip the checksum). Answers are identical to the broadcast path's.
 */
final class ShardedApply {
  private static final int READ_BUFFER = 1 << 16;
  private static final String ITEM = "__bloomery_item";

  private ShardedApply() {}

  /** A checked filter file: its spec, and where its payload starts. */
  record FilterFile(String path, FilterSpec spec, long payloadOffset) implements Serializable {}

  /** Reads and checks {@code path}'s header, length and CRC; refuses anything but a classic or blocked filter. */
  static FilterFile open(Configuration conf, String path) {
    Path file = new Path(path);
    try {
      FileSystem fs = BloomerySpark.fileSystem(file, conf);
      if (!fs.exists(file) || fs.getFileStatus(file).isDirectory()) {
        throw new BloomerySparkException("no such filter file: " + path);
      }
      long length = fs.getFileStatus(file).getLen();
      FilterHeader header;
      try (InputStream in = new BufferedInputStream(fs.open(file), READ_BUFFER)) {
        header = FilterFormat.describe(in);
      }
      if (header.kind() != FilterKind.CLASSIC_BLOOM && header.kind() != FilterKind.BLOCKED_BLOOM) {
        throw new BloomerySparkException(path + ": needs a classic or blocked Bloom filter, found a "
            + header.kind().kindName() + " filter");
      }
      if (header.totalLength() != length) {
        throw new BloomerySparkException(path + ": the header declares " + header.totalLength() + " bytes, the file has "
            + length + (length < header.totalLength() ? " (truncated)" : ""));
      }
      checkCrc(fs, file, length);
      Map<String, Long> parameters = header.parameters();
      long bits = parameters.get("bits");
      int hashes = Math.toIntExact(parameters.get("hashes"));
      FilterSpec spec;
      try {
        spec = header.kind() == FilterKind.CLASSIC_BLOOM
            ? FilterSpec.classicOfSize(bits, hashes).withProtocol(header.protocolId().protocolName()).withSeed(header.seed())
            : FilterSpec.blockedOfSize(bits, hashes).withSeed(header.seed());
      } catch (IllegalArgumentException e) {
        throw new BloomerySparkException(path + ": " + e.getMessage(), e);
      }
      // Envelope: 18 bytes plus the seed; both bodies: m or blocks (8), k (4), count (8), then the words.
      return new FilterFile(path, spec, 18L + header.seed().length + 20);
    } catch (FilterFormatException e) {
      throw new BloomerySparkException(path + ": not a valid Bloomery filter file: " + e.getMessage(), e);
    } catch (IOException e) {
      throw new UncheckedIOException(path + ": " + e.getMessage(), e);
    }
  }

  private static void checkCrc(FileSystem fs, Path file, long length) throws IOException {
    CRC32C crc = new CRC32C();
    byte[] buffer = new byte[READ_BUFFER];
    byte[] stored = new byte[4];
    try (FSDataInputStream in = fs.open(file)) {
      long left = length - 4;
      while (left > 0) {
        int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
        if (n < 0) {
          throw new EOFException("the file ended early");
        }
        crc.update(buffer, 0, n);
        left -= n;
      }
      in.readFully(stored);
    }
    long expected = (stored[0] & 0xFFL) | (stored[1] & 0xFFL) << 8 | (stored[2] & 0xFFL) << 16 | (stored[3] & 0xFFL) << 24;
    if (crc.getValue() != expected) {
      throw new BloomerySparkException(file + ": corrupt filter file: CRC-32C " + Long.toHexString(crc.getValue())
          + ", the file records " + Long.toHexString(expected));
    }
  }

  /** The rows of {@code dataset} whose item is (maybe = false) definitely absent from, or (maybe = true) maybe in, the file's filter. */
  static Dataset<Row> keep(Dataset<?> dataset, String column, String path, FilterSpec.Nulls nulls, int slices, boolean maybe) {
    if (slices < 0) {
      throw new IllegalArgumentException("slices must be >= 0 (0 = automatic), was " + slices);
    }
    ItemColumn items = ItemColumn.resolve(dataset, column, nulls);
    SparkSession session = dataset.sparkSession();
    Configuration conf = session.sparkContext().hadoopConfiguration();
    FilterFile filter = open(conf, path);
    ShardedBuild.Layout layout = new ShardedBuild.Layout(filter.spec(), slices);
    Map<String, String> confEntries = new HashMap<>();
    conf.forEach(e -> confEntries.put(e.getKey(), e.getValue()));
    Dataset<Row> rows = dataset.toDF();
    if (nulls == FilterSpec.Nulls.SKIP) {
      rows = rows.filter(rows.col(column).isNotNull()); // a null row is in neither answer
    }
    return filter.spec().kind() == FilterKind.BLOCKED_BLOOM
        ? keepBlocked(session, rows, column, items, filter, layout, confEntries, maybe)
        : keepClassic(rows, column, items, filter, layout, confEntries, maybe);
  }

  private static Dataset<Row> keepBlocked(SparkSession session, Dataset<Row> rows, String column, ItemColumn items,
      FilterFile filter, ShardedBuild.Layout layout, Map<String, String> confEntries, boolean maybe) {
    // The item as bytes beside the row (a string's UTF-8 bytes as Spark holds them), dropped at the end.
    Dataset<Row> probed = rows.withColumn(ITEM, items.itemColumn(rows));
    int field = probed.schema().fieldIndex(ITEM);
    FilterSpec spec = filter.spec();
    JavaPairRDD<Integer, Row> routed = probed.javaRDD().mapPartitionsToPair(partition -> {
      BlockedPlacement placement = BlockedPlacement.of(spec.seed(), spec.blockCount(), spec.hashCount());
      return new MappedIterator<>(partition, row -> {
        byte[] item = items.bytesOfValue(row.get(field));
        return new Tuple2<>(ShardedBuild.sliceOf(layout, placement, placement.hash(item, 0, item.length)), row);
      });
    });
    JavaRDD<Row> kept = routed.partitionBy(new ShardedBuild.SlicePartitioner(layout.slices))
        .mapPartitionsWithIndex((slice, partition) -> {
          long[] words = readSlice(filter, layout, slice, confEntries);
          BlockedPlacement placement = BlockedPlacement.of(spec.seed(), spec.blockCount(), spec.hashCount());
          long firstBlock = layout.firstUnit(slice);
          long[] mask = new long[8];
          List<Row> out = new ArrayList<>();
          while (partition.hasNext()) {
            Row row = partition.next()._2();
            byte[] item = items.bytesOfValue(row.get(field));
            long hash = placement.hash(item, 0, item.length);
            java.util.Arrays.fill(mask, 0);
            placement.setBits(hash, mask, 0); // the item's bits, as a mask of its block's 8 words
            int offset = (int) ((placement.block(hash) - firstBlock) * 8);
            boolean present = true;
            for (int i = 0; i < 8 && present; i++) {
              present = (words[offset + i] & mask[i]) == mask[i];
            }
            if (present == maybe) {
              out.add(row);
            }
          }
          return out.iterator();
        }, true);
    return session.createDataFrame(kept, probed.schema()).drop(ITEM);
  }

  private static Dataset<Row> keepClassic(Dataset<Row> rows, String column, ItemColumn items, FilterFile filter,
      ShardedBuild.Layout layout, Map<String, String> confEntries, boolean maybe) {
    FilterSpec spec = filter.spec();
    JavaPairRDD<Integer, Tuple2<byte[], long[]>> routed = items.rows(rows).mapPartitionsToPair(partition -> {
      HashProtocol.Placement placement = spec.protocol().bind(spec.bitSize(), spec.hashCount(), spec.seed());
      long[] positions = new long[spec.hashCount()];
      byte[] scratch = new byte[Long.BYTES];
      List<Tuple2<Integer, Tuple2<byte[], long[]>>> out = new ArrayList<>();
      return new FlatIterator<>(partition, row -> {
        out.clear();
        byte[] item = items.bytes(row, scratch);
        if (item == null) {
          return List.of();
        }
        item = item.clone(); // the row and the scratch are reused
        placement.positions(item, 0, item.length, positions);
        long[] sorted = positions.clone();
        java.util.Arrays.sort(sorted);
        int from = 0;
        while (from < sorted.length) {
          int slice = ShardedBuild.sliceOf(layout, null, sorted[from]);
          int to = from + 1;
          while (to < sorted.length && ShardedBuild.sliceOf(layout, null, sorted[to]) == slice) {
            to++;
          }
          out.add(new Tuple2<>(slice, new Tuple2<>(item, java.util.Arrays.copyOfRange(sorted, from, to))));
          from = to;
        }
        return out;
      });
    });
    boolean longKey = items.type == ItemColumn.Type.LONG;
    JavaRDD<Row> absent = routed.partitionBy(new ShardedBuild.SlicePartitioner(layout.slices))
        .mapPartitionsWithIndex((slice, partition) -> {
          long[] words = readSlice(filter, layout, slice, confEntries);
          long firstBit = layout.firstUnit(slice) * 64;
          List<Row> out = new ArrayList<>();
          while (partition.hasNext()) {
            Tuple2<byte[], long[]> probe = partition.next()._2();
            for (long position : probe._2()) {
              long bit = position - firstBit;
              if ((words[(int) (bit >>> 6)] & (1L << bit)) == 0) {
                out.add(RowFactory.create(longKey ? (Object) littleEndianLong(probe._1()) : probe._1()));
                break;
              }
            }
          }
          return out.iterator();
        }, true);
    StructType keySchema = new StructType().add("__bloomery_absent", longKey ? DataTypes.LongType : DataTypes.BinaryType, false);
    Dataset<Row> absentKeys = rows.sparkSession().createDataFrame(absent, keySchema);
    // A string item is its UTF-8 bytes: compare as binary, so text that is not valid UTF-8 still matches.
    Column key = items.itemColumn(rows);
    return rows.join(absentKeys, key.equalTo(absentKeys.col("__bloomery_absent")), maybe ? "left_anti" : "left_semi");
  }

  private static long littleEndianLong(byte[] bytes) {
    long value = 0;
    for (int i = Long.BYTES - 1; i >= 0; i--) {
      value = (value << 8) | (bytes[i] & 0xFF);
    }
    return value;
  }

  /** One slice's words, by a range read of the filter file's payload. */
  static long[] readSlice(FilterFile filter, ShardedBuild.Layout layout, int slice, Map<String, String> confEntries)
      throws IOException {
    Configuration conf = new Configuration(false);
    confEntries.forEach(conf::set);
    long[] words = new long[layout.sliceWords(slice)];
    long wordsBefore = layout.firstUnit(slice) * (filter.spec().kind() == FilterKind.CLASSIC_BLOOM ? 1 : 8);
    Path file = new Path(filter.path());
    byte[] buffer = new byte[READ_BUFFER];
    try (FSDataInputStream in = BloomerySpark.fileSystem(file, conf).open(file)) {
      in.seek(filter.payloadOffset() + wordsBefore * Long.BYTES);
      int word = 0;
      while (word < words.length) {
        int n = (int) Math.min(buffer.length / Long.BYTES, words.length - word) * Long.BYTES;
        in.readFully(buffer, 0, n);
        for (int b = 0; b < n; b += Long.BYTES, word++) {
          long value = 0;
          for (int i = Long.BYTES - 1; i >= 0; i--) {
            value = (value << 8) | (buffer[b + i] & 0xFF);
          }
          words[word] = value;
        }
      }
    } catch (EOFException e) {
      throw new BloomerySparkException(filter.path() + ": slice " + slice + " lies past the end of the file (it changed since it was checked)", e);
    }
    return words;
  }

  /** A lazily mapped iterator (a Spark partition is not held in memory). */
  private static final class MappedIterator<A, B> implements Iterator<B> {
    private final Iterator<A> in;
    private final SerializableFunction<A, B> map;

    MappedIterator(Iterator<A> in, SerializableFunction<A, B> map) {
      this.in = in;
      this.map = map;
    }

    @Override
    public boolean hasNext() {
      return in.hasNext();
    }

    @Override
    public B next() {
      return map.apply(in.next());
    }
  }

  /** A lazily flat-mapped iterator; the function's list is consumed before the next call. */
  private static final class FlatIterator<A, B> implements Iterator<B> {
    private final Iterator<A> in;
    private final SerializableFunction<A, List<B>> map;
    private List<B> current = List.of();
    private int next;

    FlatIterator(Iterator<A> in, SerializableFunction<A, List<B>> map) {
      this.in = in;
      this.map = map;
    }

    @Override
    public boolean hasNext() {
      while (next == current.size() && in.hasNext()) {
        current = map.apply(in.next());
        next = 0;
      }
      return next < current.size();
    }

    @Override
    public B next() {
      if (!hasNext()) {
        throw new java.util.NoSuchElementException();
      }
      return current.get(next++);
    }
  }

  @FunctionalInterface
  interface SerializableFunction<A, B> extends java.util.function.Function<A, B>, Serializable {}
}
