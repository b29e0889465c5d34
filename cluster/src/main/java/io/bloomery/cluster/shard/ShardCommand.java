package io.bloomery.cluster.shard;

import io.bloomery.server.state.Settings;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One entry of a shard's Raft log: a mutating command, or a batch of them, and everything besides the keyspace their
 * results depend on, fixed by the leader when it accepted them, so that every replica that applies the entry to the
 * same state reaches the same state and the same replies.
 *
 * <p>What travels besides the arguments: the leader's wall-clock time (relative expiries, expiry of keys the
 * command touches, and the age-partitioned kinds read it), and the module defaults a command uses when it creates a
 * key without naming them ({@code bf-error-rate}, {@code bf-initial-size}, {@code bf-expansion} and the
 * {@code cf-*} defaults, which {@code CONFIG SET} changes per node). The other inputs a command could depend on are
 * the same on every replica by construction: TOPK's decay is seeded from the sketch's state
 * ({@code StateSeededDecay}), a full or scaling filter behaves as its state says, and memory limits are checked by
 * the leader before it accepts a command, never when an entry is applied.
 *
 * <p>A batch is how a leader's node puts the writes its clients sent while the previous entry was being replicated
 * into one entry: Raft's cost (a log append forced to disk on a majority, a round of messages, the threads that
 * carry them) is paid once per entry, not once per command. The commands of a batch apply in order, one after the
 * other, as if they had been separate entries with the same clock.
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
 *   <tr><td>the rest</td><td>one command's arguments ({@link #encodeArguments}) or a batch ({@link #encodeBatch})
 *       </td></tr>
 * </table>
 *
 * <p>Arguments: u32 count (at least 1), then per argument u32 length and its bytes. A batch: u32 0 (no command has
 * zero arguments, so this marks a batch), u32 number of commands (at least 1), then per command u32 length and its
 * arguments. Decoding checks every count and length against the bytes left before it allocates, and refuses
 * trailing bytes.
 *
 * @param timeMillis the leader's clock when it accepted the commands
 * @param defaults the module defaults in force at the leader then
 * @param commands each command's name and arguments, as a client sent them, in the order they apply
 * @param batch whether the entry is a batch, answered with an array of the commands' replies; else it holds one
 *     command, answered with its reply
 */
public record ShardCommand(long timeMillis, ModuleDefaults defaults, List<List<byte[]>> commands, boolean batch) {
  static final byte VERSION = 1;
  private static final int HEADER = 1 + 8 + 8 * 8;

  public ShardCommand {
    Objects.requireNonNull(defaults, "defaults");
    commands = List.copyOf(commands.stream().map(List::copyOf).toList());
    if (commands.isEmpty()) {
      throw new IllegalArgumentException("an entry needs at least one command");
    }
    for (List<byte[]> argv : commands) {
      if (argv.isEmpty()) {
        throw new IllegalArgumentException("a command needs at least its name");
      }
    }
    if (!batch && commands.size() > 1) {
      throw new IllegalArgumentException("an entry of " + commands.size() + " commands is a batch");
    }
  }

  /** An entry of one command. */
  public static ShardCommand single(long timeMillis, ModuleDefaults defaults, List<byte[]> argv) {
    return new ShardCommand(timeMillis, defaults, List.of(argv), false);
  }

  /** An entry of what a request to the leader carried: one command or a batch ({@link #decodeRequest}). */
  public static ShardCommand of(long timeMillis, ModuleDefaults defaults, Request request) {
    return new ShardCommand(timeMillis, defaults, request.commands(), request.batch());
  }

  /** The arguments of an entry of one command. */
  public List<byte[]> argv() {
    if (batch) {
      throw new IllegalStateException("a batch of " + commands.size() + " commands");
    }
    return commands.get(0);
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
    byte[] args = batch ? encodeBatch(commands) : encodeArguments(commands.get(0));
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
    return of(time, defaults, decodeRequest(in));
  }

  /** One command, or a batch of them, as a request to a shard's leader carries them. */
  public record Request(List<List<byte[]>> commands, boolean batch) {}

  /**
   * Reads a request's commands: one command's arguments ({@link #encodeArguments}) or a batch
   * ({@link #encodeBatch}), to the end of {@code bytes}.
   *
   * @throws IllegalArgumentException if the bytes are neither
   */
  public static Request decodeRequest(ByteBuffer bytes) {
    ByteBuffer in = bytes.duplicate().order(ByteOrder.BIG_ENDIAN);
    if (in.remaining() < 4 || in.getInt(in.position()) != 0) {
      return new Request(List.of(decodeArguments(in)), false);
    }
    in.getInt();
    if (in.remaining() < 4) {
      throw new IllegalArgumentException("a batch needs a 4-byte command count, found " + in.remaining() + " bytes");
    }
    long count = Integer.toUnsignedLong(in.getInt());
    if (count == 0 || count > in.remaining() / 8) {
      throw new IllegalArgumentException("batch of " + count + " commands does not fit " + in.remaining() + " bytes");
    }
    List<List<byte[]>> commands = new ArrayList<>((int) count);
    for (long i = 0; i < count; i++) {
      if (in.remaining() < 4) {
        throw new IllegalArgumentException("command " + i + " of the batch has no length (" + in.remaining()
            + " bytes left)");
      }
      long length = Integer.toUnsignedLong(in.getInt());
      if (length > in.remaining()) {
        throw new IllegalArgumentException("command " + i + " of the batch has " + length + " bytes, "
            + in.remaining() + " left");
      }
      ByteBuffer one = in.slice(in.position(), (int) length);
      in.position(in.position() + (int) length);
      commands.add(decodeArguments(one));
    }
    if (in.hasRemaining()) {
      throw new IllegalArgumentException(in.remaining() + " bytes after the last command of the batch");
    }
    return new Request(commands, true);
  }

  /** Commands as one batch: what a leader's node sends to its Raft server for one entry. */
  public static byte[] encodeBatch(List<List<byte[]>> commands) {
    if (commands.isEmpty()) {
      throw new IllegalArgumentException("a batch needs at least one command");
    }
    List<byte[]> encoded = new ArrayList<>(commands.size());
    int size = 8;
    for (List<byte[]> argv : commands) {
      byte[] one = encodeArguments(argv);
      encoded.add(one);
      size = Math.addExact(size, Math.addExact(4, one.length));
    }
    ByteBuffer out = ByteBuffer.allocate(size).order(ByteOrder.BIG_ENDIAN);
    out.putInt(0).putInt(commands.size());
    for (byte[] one : encoded) {
      out.putInt(one.length).put(one);
    }
    return out.array();
  }

  /** A command's arguments as bytes: what a client sends to a shard's leader. */
  public static byte[] encodeArguments(List<byte[]> argv) {
    if (argv.isEmpty()) {
      throw new IllegalArgumentException("a command needs at least its name");
    }
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
