package io.bloomery.server.persistence.load;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.filter.BloomFilter;
import io.bloomery.format.FilterFormat;
import io.bloomery.server.BloomeryServer;
import io.bloomery.server.ServerConfig;
import io.bloomery.server.persistence.LoadDirectory;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The last chunk of a staged BF.LOADCHUNK is finished off the event loop: while a finish is held (by the test hook),
 * connections on every event loop are served, the key appears only once installed, the loading connection's later
 * commands answer after its OK and in order, and a new header, a disconnect, a competing write or the server closing
 * cancel the finish cleanly.
 */
class DeferredFileLoadTest {
  private static final int CHUNK = 1 << 20;

  @TempDir Path root;
  private Path dir;
  private final CountDownLatch entered = new CountDownLatch(1);
  private final CountDownLatch proceed = new CountDownLatch(1);

  @BeforeEach
  void holdFinishes() {
    dir = root.resolve("data");
    FileLoads.finishHook = () -> {
      entered.countDown();
      try {
        proceed.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt(); // the server is closing: the finish is cancelled
      }
    };
  }

  @AfterEach
  void noHook() {
    proceed.countDown();
    FileLoads.finishHook = null;
  }

  private BloomeryServer start() throws IOException {
    return BloomeryServer.start(ServerConfig.parse(Map.of(), "--port", "0", "--http-port", "0", "--dir",
        dir.toString(), "--appendfsync", "always"));
  }

  /** A classic filter of a few MiB holding "m0".."m{n-1}", and its file. */
  private static final BloomFilter FILTER = BloomFilter.create(3_000_000, 0.01);
  private static final byte[] FILE;

  static {
    for (int i = 0; i < 10_000; i++) {
      FILTER.add(utf8("m" + i));
    }
    FILE = FilterFormat.toBytes(FILTER);
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** Sends every chunk of {@link #FILE} but the last, each answered OK; returns the last chunk's command. */
  private static byte[][] allButLast(Raw c, String key) throws IOException {
    int header = 18 + ((FILE[8] & 0xFF) | (FILE[9] & 0xFF) << 8);
    assertThat(c.call("BF.LOADCHUNK", key, "1", Arrays.copyOf(FILE, header))).isEqualTo("OK");
    int at = header;
    for (; FILE.length - at > CHUNK; at += CHUNK) {
      assertThat(c.call("BF.LOADCHUNK", key, Integer.toString(at + 1), Arrays.copyOfRange(FILE, at, at + CHUNK)))
          .isEqualTo("OK");
    }
    return Raw.args("BF.LOADCHUNK", key, Integer.toString(at + 1), Arrays.copyOfRange(FILE, at, FILE.length));
  }

  private static String info(Raw c) throws IOException {
    return new String((byte[]) c.call("INFO", "bloomery"), StandardCharsets.UTF_8);
  }

  private List<String> loadFiles() {
    return LoadDirectory.files(dir);
  }

  private static void await(BooleanSupplier condition) throws InterruptedException {
    LoadDirectory.await(condition);
  }

  private void awaitHeld() throws InterruptedException {
    assertThat(entered.await(60, TimeUnit.SECONDS)).as("the finish reached the hook").isTrue();
  }

  /** One connection per event loop besides the loader's: connections are spread over the loops round-robin. */
  private static List<Raw> others(int port) throws IOException {
    List<Raw> out = new ArrayList<>();
    for (int i = 0; i < Runtime.getRuntime().availableProcessors(); i++) {
      out.add(new Raw(port));
    }
    return out;
  }

  @Test
  void otherConnectionsAreServedWhileTheLastChunkIsFinishedAndTheLoadersRepliesStayInOrder() throws Exception {
    try (BloomeryServer s = start(); Raw loader = new Raw(s.port())) {
      byte[][] last = allButLast(loader, "big");
      List<Raw> others = others(s.port());
      try {
        // the last chunk and three commands behind it, pipelined in one write
        loader.send(last, Raw.args("PING"), Raw.args("BF.EXISTS", "big", "m1"), Raw.args("BF.ADD", "big", "late"));
        awaitHeld();
        for (Raw o : others) { // one of them shares the loader's event loop
          assertThat(o.call("PING")).isEqualTo("PONG");
          assertThat(o.call("BF.EXISTS", "big", "m1")).isEqualTo(0L); // not yet: the key appears whole or not
          assertThat(o.call("EXISTS", "big")).isEqualTo(0L);
          assertThat(o.call("BF.ADD", "other", "x")).isIn(0L, 1L);
        }
        assertThat(info(others.get(0))).contains("file_loads_finishing:1").contains("file_loads_pending:0");
        proceed.countDown();
        assertThat(loader.reply()).isEqualTo("OK");
        assertThat(loader.reply()).isEqualTo("PONG");
        assertThat(loader.reply()).isEqualTo(1L);
        assertThat(loader.reply()).isEqualTo(FILTER.mightContain(utf8("late")) ? 0L : 1L);
        Raw o = others.get(0);
        for (int i = 0; i < 10_000; i += 97) {
          assertThat(o.call("BF.EXISTS", "big", "m" + i)).isEqualTo(1L);
        }
        assertThat(info(o)).contains("file_loads_finishing:0").contains("file_loads_reserved_bytes:0")
            .contains("file_loads_staged_bytes:0");
        assertThat(loadFiles()).hasSize(1).allMatch(n -> n.endsWith(".blmf")); // named by the journal record
      } finally {
        for (Raw o : others) {
          o.close();
        }
      }
    }
    // the journal record (or the shutdown snapshot) brings the key back
    FileLoads.finishHook = null;
    try (BloomeryServer s = start(); Raw c = new Raw(s.port())) {
      assertThat(c.call("BF.EXISTS", "big", "m9999")).isEqualTo(1L);
      assertThat(c.call("BF.EXISTS", "big", "late")).isEqualTo(1L);
    }
  }

  @Test
  void aNewHeaderForTheKeyCancelsTheFinish() throws Exception {
    BloomFilter small = BloomFilter.create(100, 0.01);
    small.add(utf8("small"));
    byte[] whole = FilterFormat.toBytes(small);
    try (BloomeryServer s = start(); Raw loader = new Raw(s.port()); Raw other = new Raw(s.port())) {
      loader.send(allButLast(loader, "k"));
      awaitHeld();
      assertThat(other.call("BF.LOADCHUNK", "k", "1", whole)).isEqualTo("OK"); // supersedes the finishing load
      assertThat(info(other)).contains("file_loads_finishing:0").contains("file_loads_reserved_bytes:0");
      proceed.countDown();
      assertThat((String) loader.reply()).startsWith("ERR invalid Bloomery file: the load was cancelled");
      assertThat(other.call("BF.EXISTS", "k", "small")).isEqualTo(1L);
      assertThat(other.call("BF.CARD", "k")).isEqualTo(1L);
      assertThat(loadFiles()).isEmpty();
      assertThat(loader.call("PING")).isEqualTo("PONG");
    }
  }

  @Test
  void aKeyCreatedMeanwhileWinsAndTheFinishAnswersItemExists() throws Exception {
    try (BloomeryServer s = start(); Raw loader = new Raw(s.port()); Raw other = new Raw(s.port())) {
      loader.send(allButLast(loader, "k"));
      awaitHeld();
      assertThat(other.call("BF.ADD", "k", "theirs")).isEqualTo(1L);
      proceed.countDown();
      assertThat((String) loader.reply()).isEqualTo("ERR item exists");
      assertThat(other.call("BF.EXISTS", "k", "theirs")).isEqualTo(1L);
      assertThat(info(other)).contains("file_loads_finishing:0").contains("file_loads_reserved_bytes:0")
          .contains("file_loads_staged_bytes:0");
      assertThat(loadFiles()).isEmpty();
    }
  }

  @Test
  void aDisconnectWhileFinishingReleasesTheLoadOnceAndInstallsNothing() throws Exception {
    try (BloomeryServer s = start(); Raw other = new Raw(s.port())) {
      Raw loader = new Raw(s.port());
      loader.send(allButLast(loader, "k"));
      awaitHeld();
      loader.close();
      await(() -> infoQuietly(other).contains("file_loads_finishing:0"));
      assertThat(info(other)).contains("file_loads_reserved_bytes:0").contains("file_loads_staged_bytes:0");
      proceed.countDown();
      await(() -> loadFiles().isEmpty()); // the finishing thread deletes the staging file
      assertThat(other.call("EXISTS", "k")).isEqualTo(0L);
      assertThat(info(other)).contains("file_loads_reserved_bytes:0").contains("file_loads_staged_bytes:0");
    }
  }

  @Test
  void closingTheServerWhileFinishingLeavesNoKeyAndNoFile() throws Exception {
    try (BloomeryServer s = start(); Raw loader = new Raw(s.port())) {
      loader.send(allButLast(loader, "k"));
      awaitHeld();
      s.close(); // interrupts the held finish, which then installs nothing
    }
    assertThat(loadFiles()).isEmpty();
    FileLoads.finishHook = null;
    try (BloomeryServer s = start(); Raw c = new Raw(s.port())) {
      assertThat(c.call("EXISTS", "k")).isEqualTo(0L);
    }
  }

  @Test
  void insideMultiTheLastChunkIsFinishedInPlace() throws Exception {
    FileLoads.finishHook = null;
    try (BloomeryServer s = start(); Raw c = new Raw(s.port())) {
      byte[][] last = allButLast(c, "k");
      assertThat(c.call("MULTI")).isEqualTo("OK");
      assertThat(c.call(last)).isEqualTo("QUEUED");
      assertThat(c.call("EXEC")).isEqualTo(List.of("OK"));
      assertThat(c.call("BF.EXISTS", "k", "m42")).isEqualTo(1L);
    }
  }

  @Test
  void theLastScanDumpChunkOfABigKeyIsComputedOffTheEventLoop() throws Exception {
    Runnable hold = FileLoads.finishHook;
    FileLoads.finishHook = null;
    try (BloomeryServer s = start(); Raw dumper = new Raw(s.port())) {
      dumper.send(allButLast(dumper, "big"));
      assertThat(dumper.reply()).isEqualTo("OK");
      List<Object> header = list(dumper.call("BF.SCANDUMP", "big", "0"));
      ByteArrayOutputStream file = new ByteArrayOutputStream();
      file.write((byte[]) header.get(1));
      long next = (Long) header.get(0);
      List<Raw> others = others(s.port());
      try {
        FileLoads.finishHook = hold;
        // the file is shorter than a dump chunk: the next chunk is its last, and streams it all for the CRC
        dumper.send(Raw.args("BF.SCANDUMP", "big", Long.toString(next)), Raw.args("PING"));
        awaitHeld();
        for (Raw o : others) {
          assertThat(o.call("PING")).isEqualTo("PONG");
          assertThat(o.call("BF.EXISTS", "big", "m7")).isEqualTo(1L);
        }
        proceed.countDown();
        List<Object> last = list(dumper.reply());
        assertThat(dumper.reply()).isEqualTo("PONG");
        file.write((byte[]) last.get(1));
        next = (Long) last.get(0);
        assertThat(list(dumper.call("BF.SCANDUMP", "big", Long.toString(next))).get(0)).isEqualTo(0L);
        assertThat(file.toByteArray()).isEqualTo(FILE);
      } finally {
        for (Raw o : others) {
          o.close();
        }
      }
    }
  }

  @SuppressWarnings("unchecked")
  private static List<Object> list(Object reply) {
    return (List<Object>) reply;
  }

  private static String infoQuietly(Raw c) {
    try {
      return info(c);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** A raw RESP2 connection: binary arguments, pipelining, errors as their text. */
  static final class Raw implements AutoCloseable {
    private final Socket socket;
    private final OutputStream out;
    private final InputStream in;

    Raw(int port) throws IOException {
      socket = new Socket("127.0.0.1", port);
      socket.setSoTimeout(120_000); // a stalled server fails the test instead of hanging it
      out = socket.getOutputStream();
      in = new BufferedInputStream(socket.getInputStream());
    }

    static byte[][] args(Object... parts) {
      byte[][] out = new byte[parts.length][];
      for (int i = 0; i < parts.length; i++) {
        out[i] = parts[i] instanceof byte[] b ? b : utf8(parts[i].toString());
      }
      return out;
    }

    void send(byte[][]... commands) throws IOException {
      ByteArrayOutputStream buf = new ByteArrayOutputStream();
      for (byte[][] argv : commands) {
        buf.write(utf8("*" + argv.length + "\r\n"));
        for (byte[] a : argv) {
          buf.write(utf8("$" + a.length + "\r\n"));
          buf.write(a);
          buf.write(utf8("\r\n"));
        }
      }
      out.write(buf.toByteArray());
      out.flush();
    }

    Object call(Object... parts) throws IOException {
      return call(args(parts));
    }

    Object call(byte[][] argv) throws IOException {
      send(argv);
      return reply();
    }

    Object reply() throws IOException {
      String line = line();
      switch (line.charAt(0)) {
        case '+', '-':
          return line.substring(1);
        case ':':
          return Long.parseLong(line.substring(1));
        case '$': {
          int n = Integer.parseInt(line.substring(1));
          if (n < 0) {
            return null;
          }
          byte[] b = in.readNBytes(n + 2);
          return Arrays.copyOf(b, n);
        }
        case '*': {
          int n = Integer.parseInt(line.substring(1));
          List<Object> items = new ArrayList<>();
          for (int i = 0; i < n; i++) {
            items.add(reply());
          }
          return items;
        }
        default:
          throw new IOException("unexpected reply line " + line);
      }
    }

    private String line() throws IOException {
      StringBuilder sb = new StringBuilder();
      int c;
      while ((c = in.read()) != '\n') {
        if (c == -1) {
          throw new IOException("connection closed");
        }
        if (c != '\r') {
          sb.append((char) c);
        }
      }
      return sb.toString();
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }
}
