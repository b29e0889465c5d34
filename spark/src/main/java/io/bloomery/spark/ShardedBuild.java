package io.bloomery.spark;

import io.bloomery.blocked.BlockedPlacement;
import io.bloomery.filter.FilterKind;
import io.bloomery.format.FilterFormat;
import io.bloomery.hash.HashProtocol;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.zip.CRC32C;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.Partitioner;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.sql.Dataset;
import scala.Tuple2;

/**
 * A filter built as slices, for more keys than one machine holds: every slice is a contiguous range
 * of the filter's own layout, owned by one task that sets and writes only its bits, and the slices
 * concatenate into the payload of one standard filter file.
 *
 * <p><b>How rows are partitioned.</b> A blocked filter puts all of an item's bits in one 512-bit
 * block, so a slice is a range of blocks and each item's 64-bit hash is shuffled, once, to the task
 * owning its block (8 bytes per item). A classic filter spreads an item's k positions over all m
 * bits, so a slice is a range of 64-bit words and each position is shuffled to the slice holding it
 * (8 bytes per position, k per item); positions are sent in chunks per slice, not as one record each.
 * Either way the map side holds one small buffer per slice and each slice task holds only its own
 * words (m / slices bits), so no task and not the driver ever holds the whole filter.
 *
 * <p><b>Assembly.</b> Each task writes its words, little-endian, to its own file under a temporary
 * directory next to the output, through Hadoop's FileSystem, and reports its length and CRC-32C.
 * The driver then streams header, slices in order, and the file's checksum into a temporary file
 * ({@link FilterFormat#writeClassic} / {@link FilterFormat#writeBlocked}), checking each slice's
 * length and CRC as it reads it, and renames the result over the output. A missing, short or
 * corrupted slice fails the build with the slice's name; nothing is left at the output path and the
 * slice directory is deleted either way.
 *
 * <p>The bits equal those of {@link BloomerySpark#build} over the same items, and so those of a
 * single-machine build, and the recorded inserted count is the number of (non-null) items offered,
 * the count every build records ({@link BloomerySpark}), so the file is byte-identical to theirs.
 *
 * <p>Not shipped: RedisBloom {@code BF.SCANDUMP}/{@code BF.LOADCHUNK} chunks. Those carry RedisBloom's
 * own layout and hash (MurmurHash64A), so a Bloomery-protocol filter has no such form to emit.
 */
public final class ShardedBuild {
  private static final long TARGET_SLICE_BYTES = 64L << 20;
  private static final int CHUNK = 4096;

  private ShardedBuild() {}

  /**
   * What a sharded build wrote.
   *
   * @param path the filter file
   * @param fileBytes its size
   * @param slices the number of slices (tasks)
   * @param items the non-null items offered, also the file's recorded inserted count
   * @param bitCount the number of set bits
   * @param sliceWriteNanos the slice tasks' time writing their files, summed over tasks (setting the
   *     bits and reading the shuffle not included)
   * @param assemblyNanos the driver's time streaming the slices into the output file and renaming it
   */
  public record Result(String path, long fileBytes, int slices, long items, long bitCount, long sliceWriteNanos,
      long assemblyNanos) implements Serializable {}

  /** The slicing of one filter: {@code unitsPerSlice} words (classic) or blocks (blocked) per slice. */
  static final class Layout implements Serializable {
    private static final long serialVersionUID = 1L;
    final FilterSpec spec;
    final long units;
    final long unitsPerSlice;
    final int slices;

    Layout(FilterSpec spec, int requestedSlices) {
      this.spec = spec;
      boolean classic = spec.kind() == FilterKind.CLASSIC_BLOOM;
      this.units = classic ? Filters.ceilDiv(spec.bitSize(), 64L) : spec.blockCount();
      long unitBytes = classic ? Long.BYTES : 64;
      long wanted = requestedSlices > 0 ? requestedSlices
          : Math.max(1, Filters.ceilDiv(units * unitBytes, TARGET_SLICE_BYTES));
      long perSlice = Filters.ceilDiv(units, Math.min(wanted, units));
      if (perSlice * (classic ? 1 : 8) > Integer.MAX_VALUE - 16) {
        throw new BloomerySparkException("a slice of " + perSlice + (classic ? " words" : " blocks")
            + " does not fit one array; ask for more slices");
      }
      this.unitsPerSlice = perSlice;
      this.slices = (int) Filters.ceilDiv(units, perSlice);
    }

    long firstUnit(int slice) {
      return slice * unitsPerSlice;
    }

    int sliceWords(int slice) {
      long count = Math.min(unitsPerSlice, units - firstUnit(slice));
      return (int) (spec.kind() == FilterKind.CLASSIC_BLOOM ? count : count * 8);
    }
  }

  /**
   * The slice that owns a classic position or a blocked item's hash: position / 64 / wordsPerSlice,
   * or block(hash) / blocksPerSlice. A probe shuffled by this function meets the slice holding its bits.
   */
  static int sliceOf(Layout layout, BlockedPlacement blocked, long positionOrHash) {
    long unit = blocked != null ? blocked.block(positionOrHash) : positionOrHash >>> 6;
    return (int) (unit / layout.unitsPerSlice);
  }

  /** Routes slice s to partition s. */
  static final class SlicePartitioner extends Partitioner {
    private static final long serialVersionUID = 1L;
    private final int slices;

    SlicePartitioner(int slices) {
      this.slices = slices;
    }

    @Override
    public int numPartitions() {
      return slices;
    }

    @Override
    public int getPartition(Object key) {
      return (Integer) key;
    }

    @Override
    public boolean equals(Object other) {
      return other instanceof SlicePartitioner p && p.slices == slices;
    }

    @Override
    public int hashCode() {
      return slices;
    }
  }

  /** One written slice, as its task reports it. */
  record Slice(int index, String file, long bytes, long crc, long values, long bitCount, long writeNanos) implements Serializable {}

  static Result run(Dataset<?> dataset, String column, FilterSpec spec, String path, int requestedSlices) {
    if (requestedSlices < 0) {
      throw new IllegalArgumentException("slices must be >= 0 (0 = automatic), was " + requestedSlices);
    }
    ItemColumn items = ItemColumn.resolve(dataset, column, spec.nulls());
    Layout layout = new Layout(spec, requestedSlices);
    Configuration conf = dataset.sparkSession().sparkContext().hadoopConfiguration();
    Path target = new Path(path);
    Path sliceDir = new Path(target.getParent(), "." + target.getName() + ".slices-" + UUID.randomUUID());
    try {
      List<Slice> written = writeSlices(dataset, items, layout, sliceDir.toString(), conf);
      return assemble(conf, layout, written, path);
    } finally {
      try {
        BloomerySpark.fileSystem(sliceDir, conf).delete(sliceDir, true);
      } catch (IOException e) {
        // The build's own outcome matters more than a leftover temporary directory.
      }
    }
  }

  /** The shuffle and the slice tasks: every slice's file under {@code sliceDir}, as the tasks report them. */
  static List<Slice> writeSlices(Dataset<?> dataset, ItemColumn items, Layout layout, String sliceDir, Configuration conf) {
    Map<String, String> confEntries = new HashMap<>();
    conf.forEach(e -> confEntries.put(e.getKey(), e.getValue()));
    JavaPairRDD<Integer, long[]> routed = items.rows(dataset).mapPartitionsToPair(rows -> route(rows, items, layout));
    return Jobs.run(() -> routed
        .partitionBy(new SlicePartitioner(layout.slices))
        .mapPartitionsWithIndex((slice, chunks) -> BloomerySpark.single(writeSlice(slice, chunks, layout, sliceDir, confEntries)), true)
        .collect());
  }

  /** Map side: each item's hash (blocked) or positions (classic), in chunks per slice. */
  private static Iterator<Tuple2<Integer, long[]>> route(Iterator<org.apache.spark.sql.catalyst.InternalRow> rows,
      ItemColumn items, Layout layout) {
    FilterSpec spec = layout.spec;
    BlockedPlacement blocked = spec.kind() == FilterKind.BLOCKED_BLOOM
        ? BlockedPlacement.of(spec.seed(), spec.blockCount(), spec.hashCount()) : null;
    HashProtocol.Placement classic = blocked == null ? spec.protocol().bind(spec.bitSize(), spec.hashCount(), spec.seed()) : null;
    long[][] buffers = new long[layout.slices][];
    int[] used = new int[layout.slices];
    long[] positions = new long[spec.hashCount()];
    byte[] scratch = new byte[Long.BYTES];
    List<Tuple2<Integer, long[]>> out = new ArrayList<>();
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        while (out.isEmpty() && rows.hasNext()) {
          byte[] item = items.bytes(rows.next(), scratch);
          if (item == null) {
            continue;
          }
          if (blocked != null) {
            long hash = blocked.hash(item, 0, item.length);
            emit(sliceOf(layout, blocked, hash), hash);
          } else {
            classic.positions(item, 0, item.length, positions);
            for (long position : positions) {
              emit(sliceOf(layout, null, position), position);
            }
          }
        }
        if (out.isEmpty()) {
          for (int s = 0; s < buffers.length; s++) {
            if (used[s] > 0) {
              out.add(new Tuple2<>(s, java.util.Arrays.copyOf(buffers[s], used[s])));
              used[s] = 0;
            }
          }
        }
        return !out.isEmpty();
      }

      private void emit(int slice, long value) {
        if (buffers[slice] == null) {
          buffers[slice] = new long[CHUNK];
        }
        buffers[slice][used[slice]++] = value;
        if (used[slice] == CHUNK) {
          out.add(new Tuple2<>(slice, buffers[slice]));
          buffers[slice] = new long[CHUNK];
          used[slice] = 0;
        }
      }

      @Override
      public Tuple2<Integer, long[]> next() {
        if (!hasNext()) {
          throw new java.util.NoSuchElementException();
        }
        return out.remove(out.size() - 1);
      }
    };
  }

  /** Reduce side: sets this slice's bits and writes its words to its own file. */
  private static Slice writeSlice(int slice, Iterator<Tuple2<Integer, long[]>> chunks, Layout layout,
      String sliceDir, Map<String, String> confEntries) throws IOException {
    FilterSpec spec = layout.spec;
    long[] words = new long[layout.sliceWords(slice)];
    long firstUnit = layout.firstUnit(slice);
    BlockedPlacement blocked = spec.kind() == FilterKind.BLOCKED_BLOOM
        ? BlockedPlacement.of(spec.seed(), spec.blockCount(), spec.hashCount()) : null;
    long values = 0;
    long firstBit = firstUnit * 64;
    while (chunks.hasNext()) {
      Tuple2<Integer, long[]> chunk = chunks.next();
      if (chunk._1() != slice) {
        throw new IllegalStateException("slice " + slice + " received values of slice " + chunk._1());
      }
      for (long value : chunk._2()) {
        if (blocked != null) {
          blocked.setBits(value, words, (int) ((blocked.block(value) - firstUnit) * 8));
        } else {
          long bit = value - firstBit;
          words[(int) (bit >>> 6)] |= 1L << bit;
        }
      }
      values += chunk._2().length;
    }
    Configuration conf = new Configuration(false);
    confEntries.forEach(conf::set);
    TaskContext task = TaskContext.get();
    Path file = new Path(sliceDir, String.format(java.util.Locale.ROOT, "slice-%06d.attempt-%d", slice,
        task == null ? 0 : task.attemptNumber()));
    long writeStart = System.nanoTime();
    CRC32C crc = new CRC32C();
    long bitCount = 0;
    byte[] buffer = new byte[Long.BYTES];
    try (OutputStream out = new BufferedOutputStream(BloomerySpark.fileSystem(file, conf).create(file, true), 1 << 16)) {
      for (long word : words) {
        ItemColumn.littleEndian(word, buffer);
        crc.update(buffer);
        out.write(buffer);
        bitCount += Long.bitCount(word);
      }
    }
    return new Slice(slice, file.toString(), (long) words.length * Long.BYTES, crc.getValue(), values, bitCount,
        System.nanoTime() - writeStart);
  }

  /** Driver side: header, slices in order (each checked), checksum; renamed over {@code path} at the end. */
  static Result assemble(Configuration conf, Layout layout, List<Slice> written, String path) {
    Slice[] ordered = new Slice[layout.slices];
    for (Slice slice : written) {
      ordered[slice.index()] = slice;
    }
    long assemblyStart = System.nanoTime();
    long values = 0;
    long bitCount = 0;
    long writeNanos = 0;
    for (int s = 0; s < ordered.length; s++) {
      if (ordered[s] == null) {
        throw new BloomerySparkException("slice " + s + " of " + ordered.length + " was not written");
      }
      values += ordered[s].values();
      bitCount += ordered[s].bitCount();
      writeNanos += ordered[s].writeNanos();
    }
    FilterSpec spec = layout.spec;
    long items = spec.kind() == FilterKind.CLASSIC_BLOOM ? values / spec.hashCount() : values;
    BloomerySpark.writeAtomically(conf, path, out -> {
      SliceWords source = new SliceWords(conf, ordered);
      try {
        if (spec.kind() == FilterKind.CLASSIC_BLOOM) {
          FilterFormat.writeClassic(spec.protocol(), spec.seed(), spec.bitSize(), spec.hashCount(), items, source::next, out);
        } else {
          FilterFormat.writeBlocked(spec.seed(), spec.blockCount(), spec.hashCount(), items, source::next, out);
        }
        source.finish();
      } finally {
        source.close();
      }
    });
    try {
      Path target = new Path(path);
      long size = BloomerySpark.fileSystem(target, conf).getFileStatus(target).getLen();
      return new Result(path, size, layout.slices, items, bitCount, writeNanos, System.nanoTime() - assemblyStart);
    } catch (IOException e) {
      throw new UncheckedIOException(path + ": " + e.getMessage(), e);
    }
  }

  /** Streams the slices' words in order, checking each slice's length and CRC-32C against its report. */
  private static final class SliceWords {
    private final Configuration conf;
    private final Slice[] slices;
    private int current = -1;
    private DataInputStream in;
    private long wordsLeft;
    private final CRC32C crc = new CRC32C();
    private final byte[] buffer = new byte[Long.BYTES];

    SliceWords(Configuration conf, Slice[] slices) {
      this.conf = conf;
      this.slices = slices;
    }

    long next() throws IOException {
      while (wordsLeft == 0) {
        finishCurrent();
        open(++current);
      }
      try {
        in.readFully(buffer);
      } catch (EOFException e) {
        throw new BloomerySparkException("slice " + current + " (" + slices[current].file() + ") is truncated: expected "
            + slices[current].bytes() + " bytes", e);
      }
      crc.update(buffer);
      wordsLeft--;
      long word = 0;
      for (int i = Long.BYTES - 1; i >= 0; i--) {
        word = (word << 8) | (buffer[i] & 0xFF);
      }
      return word;
    }

    private void open(int index) throws IOException {
      Slice slice = slices[index];
      Path file = new Path(slice.file());
      FileSystem fs = BloomerySpark.fileSystem(file, conf);
      long length = fs.exists(file) ? fs.getFileStatus(file).getLen() : -1;
      if (length != slice.bytes()) {
        throw new BloomerySparkException("slice " + index + " (" + file + ") " + (length < 0 ? "is missing"
            : "has " + length + " bytes, expected " + slice.bytes()));
      }
      InputStream raw = fs.open(file);
      in = new DataInputStream(new BufferedInputStream(raw, 1 << 16));
      wordsLeft = slice.bytes() / Long.BYTES;
      crc.reset();
    }

    private void finishCurrent() throws IOException {
      if (in == null) {
        return;
      }
      Slice slice = slices[current];
      if (crc.getValue() != slice.crc()) {
        throw new BloomerySparkException("slice " + current + " (" + slice.file() + ") is corrupt: CRC-32C "
            + Long.toHexString(crc.getValue()) + ", its task wrote " + Long.toHexString(slice.crc()));
      }
      in.close();
      in = null;
    }

    void finish() throws IOException {
      finishCurrent();
      if (current != slices.length - 1) {
        throw new IllegalStateException("assembled " + (current + 1) + " of " + slices.length + " slices");
      }
    }

    void close() throws IOException {
      if (in != null) {
        in.close();
      }
    }
  }
}
