package io.bloomery.server.state;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * Redis's slow log: commands that ran longer than {@code slowlog-log-slower-than} microseconds (negative: none, 0:
 * every command), the newest {@code slowlog-max-len} kept. An entry keeps at most 32 arguments (the last one then
 * says how many more there were) and 128 bytes of each (then how many more bytes), as Redis does. Thread-safe.
 */
public final class SlowLog {
  static final int MAX_ARGS = 32;
  static final int MAX_ARG_BYTES = 128;

  /** One entry: id, start (unix seconds), duration (µs), arguments, client address and name. */
  public record Entry(long id, long unixSeconds, long micros, List<byte[]> args, String address, String clientName) {}

  private final Deque<Entry> entries = new ArrayDeque<>();
  private long nextId;

  /** Records a command that took {@code micros} if it is slow enough under {@code settings}. */
  public void observe(Settings settings, long micros, List<byte[]> argv, ClientState client) {
    long threshold = settings.slowlogLogSlowerThan();
    if (threshold < 0 || micros < threshold) {
      return;
    }
    List<byte[]> args = new ArrayList<>(Math.min(argv.size(), MAX_ARGS));
    for (int i = 0; i < argv.size() && i < MAX_ARGS; i++) {
      byte[] a = argv.get(i);
      if (i == MAX_ARGS - 1 && argv.size() > MAX_ARGS) {
        a = ("... (" + (argv.size() - MAX_ARGS + 1) + " more arguments)").getBytes(StandardCharsets.US_ASCII);
      } else if (a.length > MAX_ARG_BYTES) {
        byte[] cut = new byte[MAX_ARG_BYTES];
        System.arraycopy(a, 0, cut, 0, MAX_ARG_BYTES);
        byte[] tail = ("... (" + (a.length - MAX_ARG_BYTES) + " more bytes)").getBytes(StandardCharsets.US_ASCII);
        a = new byte[MAX_ARG_BYTES + tail.length];
        System.arraycopy(cut, 0, a, 0, MAX_ARG_BYTES);
        System.arraycopy(tail, 0, a, MAX_ARG_BYTES, tail.length);
      }
      args.add(a);
    }
    synchronized (this) {
      entries.addFirst(new Entry(nextId++, System.currentTimeMillis() / 1000, micros, List.copyOf(args),
          client.address(), client.name()));
      trim(settings.slowlogMaxLen());
    }
  }

  private void trim(long max) {
    while (entries.size() > max) {
      entries.removeLast();
    }
  }

  /** The newest {@code count} entries, newest first ({@code -1}: all). */
  public synchronized List<Entry> newest(long count) {
    List<Entry> out = new ArrayList<>();
    for (Entry e : entries) {
      if (count >= 0 && out.size() >= count) {
        break;
      }
      out.add(e);
    }
    return out;
  }

  public synchronized int size() {
    return entries.size();
  }

  public synchronized void reset() {
    entries.clear();
  }

  /** {@code slowlog-max-len} lowered: drops the oldest entries past it at once, as Redis does. */
  public synchronized void maxLen(long max) {
    trim(max);
  }
}
