package io.bloomery.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * A pipelining RESP load generator on one thread, for what redis-benchmark cannot send: each of {@code CONNECTIONS}
 * connections sends {@code DEPTH} commands (the words given, {@code __rand__} in them replaced by a random number
 * per command), optionally followed by {@code WAIT 1 0} (Redis's "a replica has it"), waits for every reply, and
 * sends the next pipeline, until {@code TOTAL} commands went out. Prints one line: commands/s, the pipelines'
 * p50/p99 in ms, and how many pipelines were sent. Any error reply, or a {@code WAIT} answered 0, stops it with
 * exit status 1. A benchmark tool (bench/cluster-write-cpu), not a test.
 *
 * <pre>java bench/src/main/java/io/bloomery/bench/PipelineLoad.java PORT CONNECTIONS DEPTH TOTAL WAIT|NOWAIT WORD...</pre>
 */
public final class PipelineLoad {
  private static final byte[] WAIT = encode(List.of("WAIT", "1", "0"));

  private PipelineLoad() {}

  public static void main(String[] args) throws IOException {
    if (args.length < 6) {
      System.err.println("usage: PipelineLoad PORT CONNECTIONS DEPTH TOTAL WAIT|NOWAIT WORD...");
      System.exit(2);
    }
    int port = Integer.parseInt(args[0]);
    int connections = Integer.parseInt(args[1]);
    int depth = Integer.parseInt(args[2]);
    long total = Long.parseLong(args[3]);
    boolean waitAfter = args[4].equals("WAIT");
    List<String> words = List.of(Arrays.copyOfRange(args, 5, args.length));
    SplittableRandom random = new SplittableRandom();
    Selector selector = Selector.open();
    List<Conn> all = new ArrayList<>();
    for (int i = 0; i < connections; i++) {
      SocketChannel ch = SocketChannel.open(new InetSocketAddress("127.0.0.1", port));
      ch.configureBlocking(false);
      ch.socket().setTcpNoDelay(true);
      Conn c = new Conn(ch, waitAfter);
      c.key = ch.register(selector, 0, c);
      all.add(c);
    }
    long sent = 0;
    long[] latencies = new long[(int) Math.min(Integer.MAX_VALUE - 8, total / depth + connections + 1)];
    int pipelines = 0;
    long start = System.nanoTime();
    for (Conn c : all) {
      if (sent < total) {
        sent += c.send(words, (int) Math.min(depth, total - sent), random);
      }
    }
    int busy = (int) all.stream().filter(c -> c.expected > 0).count();
    while (busy > 0) {
      selector.select();
      for (SelectionKey key : selector.selectedKeys()) {
        Conn c = (Conn) key.attachment();
        if (key.isWritable()) {
          c.flush();
        }
        if (key.isReadable() && c.read()) {
          if (pipelines < latencies.length) {
            latencies[pipelines] = System.nanoTime() - c.sentAt;
          }
          pipelines++;
          if (sent < total) {
            sent += c.send(words, (int) Math.min(depth, total - sent), random);
          } else {
            busy--;
          }
        }
      }
      selector.selectedKeys().clear();
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    long[] done = Arrays.copyOf(latencies, Math.min(pipelines, latencies.length));
    Arrays.sort(done);
    System.out.printf(Locale.ROOT, "%.0f commands/s p50 %.3f ms p99 %.3f ms, %d pipelines%n", total / seconds,
        done[done.length / 2] / 1e6, done[(int) (done.length * 0.99)] / 1e6, pipelines);
    for (Conn c : all) {
      c.ch.close();
    }
  }

  /** One connection: the pipeline it sent, the replies it still expects. */
  private static final class Conn {
    final SocketChannel ch;
    final boolean waitAfter;
    SelectionKey key;
    ByteBuffer out = ByteBuffer.allocate(0);
    final ByteBuffer in = ByteBuffer.allocate(1 << 16);
    int expected;
    long sentAt;

    Conn(SocketChannel ch, boolean waitAfter) {
      this.ch = ch;
      this.waitAfter = waitAfter;
    }

    /** Sends {@code n} commands (and WAIT); returns {@code n}. */
    int send(List<String> words, int n, SplittableRandom random) throws IOException {
      java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream(n * 64);
      for (int i = 0; i < n; i++) {
        List<String> argv = new ArrayList<>(words.size());
        for (String w : words) {
          argv.add(w.replace("__rand__", Long.toString(random.nextLong(1_000_000_000_000L))));
        }
        b.writeBytes(encode(argv));
      }
      if (waitAfter) {
        b.writeBytes(WAIT);
      }
      expected = n + (waitAfter ? 1 : 0);
      out = ByteBuffer.wrap(b.toByteArray());
      sentAt = System.nanoTime();
      flush();
      return n;
    }

    void flush() throws IOException {
      ch.write(out);
      key.interestOps(out.hasRemaining() ? SelectionKey.OP_READ | SelectionKey.OP_WRITE : SelectionKey.OP_READ);
    }

    /** Reads what arrived; {@code true} once every reply of the pipeline did. */
    boolean read() throws IOException {
      if (ch.read(in) < 0) {
        throw new IOException("the server closed the connection");
      }
      in.flip();
      while (expected > 0) {
        int mark = in.position();
        int end = reply(in);
        if (end < 0) {
          in.position(mark);
          break;
        }
        expected--;
      }
      in.compact();
      return expected == 0;
    }

    /**
     * Consumes one whole reply (simple string, integer or bulk string) from {@code b}; -1 if it has not all arrived.
     * Exits on an error reply, and on a WAIT answered 0 (the last reply of a pipeline with WAIT).
     */
    private int reply(ByteBuffer b) {
      int lineEnd = lineEnd(b, b.position());
      if (lineEnd < 0) {
        return -1;
      }
      byte type = b.get(b.position());
      String line = new String(b.array(), b.position() + 1, lineEnd - b.position() - 1, StandardCharsets.US_ASCII);
      if (type == '-') {
        System.err.println("error reply: " + line);
        System.exit(1);
      }
      if (type == '$') {
        int len = Integer.parseInt(line);
        int after = lineEnd + 2 + Math.max(len, 0) + (len >= 0 ? 2 : 0);
        if (after > b.limit()) {
          return -1;
        }
        b.position(after);
        return after;
      }
      if (type == ':' && waitAfter && expected == 1 && line.equals("0")) {
        System.err.println("WAIT 1 0 answered 0: no replica acknowledged the pipeline");
        System.exit(1);
      }
      if (type != ':' && type != '+') {
        System.err.println("unexpected reply type " + (char) type);
        System.exit(1);
      }
      b.position(lineEnd + 2);
      return lineEnd + 2;
    }

    private static int lineEnd(ByteBuffer b, int from) {
      for (int i = from; i + 1 < b.limit(); i++) {
        if (b.get(i) == '\r' && b.get(i + 1) == '\n') {
          return i;
        }
      }
      return -1;
    }
  }

  private static byte[] encode(List<String> argv) {
    StringBuilder sb = new StringBuilder().append('*').append(argv.size()).append("\r\n");
    for (String a : argv) {
      sb.append('$').append(a.getBytes(StandardCharsets.UTF_8).length).append("\r\n").append(a).append("\r\n");
    }
    return sb.toString().getBytes(StandardCharsets.UTF_8);
  }
}
