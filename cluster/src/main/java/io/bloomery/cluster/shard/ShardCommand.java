package io.bloomery.cluster.shard;

import io.bloomery.server.state.Settings;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One entry of a shard's Raft log: a mutating command and everything besides the keyspace its result depends on,
 * fixed by the leader when it accepted the command, so that every replica that applies the entry to the same state
 * reaches the same state and the same reply.
 *
 * <p>What travels besides the arguments: the leader's wall-clock time (relative expiries, expiry of keys the
 * command touches, and the age-partitioned kinds read it), and the module defaults a command uses when it creates a
 * key without naming them ({@code bf-error-rate}, {@code bf-initial-size}, {@code bf-expansion} and the
 * {@code cf-*} defaults, which {@code CONFIG SET} changes per node). The other inputs a command could depend on are
 * the same on every replica by construction: TOPK's decay is seeded from the sketch's state
 * ({@code StateSeededDecay}), a full or scaling filter behaves as its state says, and memory limits are checked by
 * the leader before it accepts a command, never when an entry is applied.
 *
 * <h2>Layout, version 1 (all integers big-endian)</h2>
 *
 * <table>
 *   <caption>Log entry</caption>
 *   <tr><th>size</th><th>field</th></tr>
 *   <tr><td>1</td><td>version = 1</td></tr>
 *   <tr><td>8</td><td>time: i64 Unix milliseconds at the leader</td></tr>
 *   <tr><td>8</td><td>bf-error-rate: IEEE 754 double</td></tr>
 *   <tr><td>7 × 8</td><td>bf-initial-size, bf-expansion, cf-bucket-size, cf-initial-size, cf-max-iterations,
 *       cf-expansion, cf-max-expansions: i64 each</td></tr>
 *   <tr><td>the rest</td><td>the arguments, as {@link #encodeArguments}</td></tr>
 * </table>
 *
 * <p>Arguments: u32 count (at least 1), then per argument u32 length and its bytes. Decoding checks every length
 * against the bytes left before it allocates, and refuses trailing bytes.
 *
 * @param timeMillis the leader's clock when it accepted the command
 * @param defaults the module defaults in force at the leader then
 * @param argv the command name and its arguments, as a client sent them
 */
public record ShardCommand(long timeMillis, ModuleDefaults defaults, List<byte[]> argv) {
  static final byte VERSION = 1;
  private static final int HEADER = 1 + 8 + 8 * 8;

  public ShardCommand {
    Objects.requireNonNull(defaults, "defaults");
    argv = List.copyOf(argv);
    if (argv.isEmpty()) {
      throw new IllegalArgumentException("a command needs at least its name");
    }
  }

  /**
   * The module defaults for filters a command creates without naming them: RedisBloom's {@code bf-*} and
   * {@code cf-*} configuration.
   */
  public record ModuleDefaults(double bfErrorRate, long bfInitialSize, long bfExpansion, long cfBucketSize,
      long cfInitialSize, long cfMaxIterations, long cfExpansion, long cfMaxExpansions) {

    /** The defaults {@code settings} holds now. */
    public static ModuleDefaults of(Settings settings) {
      return new ModuleDefaults(settings.bfErrorRate(), settings.bfInitialSize(), settings.bfExpansion(),
          settings.cfBucketSize(), settings.cfInitialSize(), settings.cfMaxIterations(), settings.cfExpansion(),
          settings.cfMaxExpansions());
    }

    /** Puts these defaults into {@code settings}. */
    public void applyTo(Settings settings) {
      settings.bfErrorRate(bfErrorRate);
      settings.bfInitialSize(bfInitialSize);
      settings.bfExpansion(bfExpansion);
      settings.cfBucketSize(cfBucketSize);
      settings.cfInitialSize(cfInitialSize);
      settings.cfMaxIterations(cfMaxIterations);
      settings.cfExpansion(cfExpansion);
      settings.cfMaxExpansions(cfMaxExpansions);
    }
  }

  /** The entry's bytes. */
  public byte[] encode() {
    byte[] args = encodeArguments(argv);
    ByteBuffer out = ByteBuffer.allocate(HEADER + args.length).order(ByteOrder.BIG_ENDIAN);
    out.put(VERSION).putLong(timeMillis).putDouble(defaults.bfErrorRate()).putLong(defaults.bfInitialSize())
        .putLong(defaults.bfExpansion()).putLong(defaults.cfBucketSize()).putLong(defaults.cfInitialSize())
        .putLong(defaults.cfMaxIterations()).putLong(defaults.cfExpansion()).putLong(defaults.cfMaxExpansions())
        .put(args);
    return out.array();
  }

  /**
   * Reads an entry.
   *
   * @throws IllegalArgumentException if the bytes are not a version-1 entry: the message says what was expected and
   *     what was found
   */
  public static ShardCommand decode(ByteBuffer bytes) {
    ByteBuffer in = bytes.duplicate().order(ByteOrder.BIG_ENDIAN);
    if (in.remaining() < HEADER) {
      throw new IllegalArgumentException("a log entry needs " + HEADER + " header bytes, found " + in.remaining());
    }
    byte version = in.get();
    if (version != VERSION) {
      throw new IllegalArgumentException("log entry version " + version + ", expected " + VERSION);
    }
    long time = in.getLong();
    ModuleDefaults defaults = new ModuleDefaults(in.getDouble(), in.getLong(), in.getLong(), in.getLong(),
        in.getLong(), in.getLong(), in.getLong(), in.getLong());
    return new ShardCommand(time, defaults, decodeArguments(in));
  }

  /** A command's arguments as bytes: what a client sends to a shard's leader. */
  public static byte[] encodeArguments(List<byte[]> argv) {
    int size = 4;
    for (byte[] a : argv) {
      size = Math.addExact(size, Math.addExact(4, a.length));
    }
    ByteBuffer out = ByteBuffer.allocate(size).order(ByteOrder.BIG_ENDIAN);
    out.putInt(argv.size());
    for (byte[] a : argv) {
      out.putInt(a.length).put(a);
    }
    return out.array();
  }

  /**
   * Reads what {@link #encodeArguments} wrote, to the end of {@code bytes}.
   *
   * @throws IllegalArgumentException if a count or length does not fit the bytes, or bytes are left over
   */
  public static List<byte[]> decodeArguments(ByteBuffer bytes) {
    ByteBuffer in = bytes.duplicate().order(ByteOrder.BIG_ENDIAN);
    if (in.remaining() < 4) {
      throw new IllegalArgumentException("arguments need a 4-byte count, found " + in.remaining() + " bytes");
    }
    long count = Integer.toUnsignedLong(in.getInt());
    if (count == 0 || count > in.remaining() / 4) {
      throw new IllegalArgumentException("argument count " + count + " does not fit " + in.remaining() + " bytes");
    }
    List<byte[]> argv = new ArrayList<>((int) count);
    for (long i = 0; i < count; i++) {
      if (in.remaining() < 4) {
        throw new IllegalArgumentException("argument " + i + " has no length (" + in.remaining() + " bytes left)");
      }
      long length = Integer.toUnsignedLong(in.getInt());
      if (length > in.remaining()) {
        throw new IllegalArgumentException("argument " + i + " of " + length + " bytes, " + in.remaining() + " left");
      }
      byte[] a = new byte[(int) length];
      in.get(a);
      argv.add(a);
    }
    if (in.hasRemaining()) {
      throw new IllegalArgumentException(in.remaining() + " bytes after the last argument");
    }
    return argv;
  }
}
