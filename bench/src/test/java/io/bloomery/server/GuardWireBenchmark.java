package io.bloomery.server;

import io.bloomery.guard.PostgresCluster;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import redis.clients.jedis.Jedis;

/**
 * The GUARD.* benchmark of docs/BENCHMARKS.md, one run, printed (never asserted):
 *
 * <pre>
 * mvn -B -q -o -pl bench -am test -Dtest=GuardWireBenchmark -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dbloomery.guardwire.bench=true [-Dbloomery.guardwire.rows=200000] [-Dbloomery.guardwire.parts=a,b,f,c,l] \
 *     [-Dbloomery.guardwire.connections=1,4] [-Dbloomery.guardwire.adds=200] [-Dbloomery.guardwire.warmups=3] \
 *     [-Dbloomery.guardwire.jfr=FILE] [-Dbloomery.guardwire.perf=FILE] \
 *     [-Dbloomery.pg.options="-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track_planning=on"]
 * </pre>
 *
 * (a) the crawler's check: GUARD.MEXISTS of 100 links with 5 % seen and of 1000 links with 1 % seen, against
 * {@code SELECT url FROM plain WHERE url = ANY(?)} on a table with a primary key on url, both on the same rows,
 * over 1 and 4 connections on both sides, each after an untimed warm-up pass, the GUARD.MEXISTS calls sent once by
 * Jedis and once more by a lean RESP client ({@link RawResp}); and all-new calls beside BF.MEXISTS;
 * (b) 50 concurrent clients each sending single GUARD.ADDs (group commit) against 50 JDBC connections each running
 * {@code INSERT ... ON CONFLICT DO NOTHING RETURNING} per item, and one client sending GUARD.MADD batches of 1000;
 * (f) (b) again with the cluster's {@code fsync} on, where a commit costs a disk flush;
 * (c) the freshness lag of a read-only foreign table followed by logical replication at 10,000 inserts/s;
 * (l) (a'') in long loops, sent by Jedis and by a lean client, beside BF.MEXISTS, optionally recorded by JFR.
 * Each loop also prints the CPU seconds this JVM (clients and server) and PostgreSQL spent in it.
 */
@EnabledIfSystemProperty(named = "bloomery.guardwire.bench", matches = "true")
class GuardWireBenchmark {
  static final int ROWS = Integer.getInteger("bloomery.guardwire.rows", 200_000);
  static final int LINKS = 20_000;
  static final int CLIENTS = 50;
  /**
   * Single adds per client in each round of (b). With 200 (10,000 a round, 1-2 s) the JIT compiler still took 0.5-0.8 s
   * of the timed group-commit round after three warm-up rounds; with 600 (every side alike) 0.15-0.2 s: the figures to
   * quote use {@code -Dbloomery.guardwire.adds=600}. The default keeps a plain run at about a minute.
   */
  static final int ADDS_PER_CLIENT = Integer.getInteger("bloomery.guardwire.adds", 200);
  /**
   * Untimed warm-up rounds of (b), each as large as the timed one, before its loops. With one round, C2 was still
   * compiling the add path (pgjdbc's result processing, the client handler's drain loop) during the timed GUARD.ADD
   * round: 1.1-1.25 s of the JVM's 2.3-2.6 s were its compiler threads, and the per-item SQL round after it used
   * the pgjdbc code compiled meanwhile.
   */
  static final int WARMUP_ROUNDS = Integer.getInteger("bloomery.guardwire.warmups", 3);
  static final int FEED_RATE = 10_000;
  static final int FEED_SECONDS = 10;

  static String seenUrl(long i) {
    return "https://www.example.com/articles/" + i + "/comments?page=" + (i % 7) + "&sort=recent";
  }

  static String newUrl(String run, long i) {
    return "https://www.example.com/new/" + run + "/" + i + "?ref=crawl&depth=" + (i % 5);
  }

  static Object call(Jedis j, String... args) {
    return j.sendCommand(GuardCommandsIT.cmd(args[0]), java.util.Arrays.copyOfRange(args, 1, args.length));
  }

  /** Which parts run: {@code a} crawler's check, {@code b} concurrent adds, {@code f} (b) with fsync on, {@code c} freshness. */
  static final String PARTS = System.getProperty("bloomery.guardwire.parts", "a,b,f,c");
  /** The numbers of concurrent connections (a) runs with, on both sides. */
  static final String CONNECTIONS = System.getProperty("bloomery.guardwire.connections", "1,4");

  @Test
  void run() throws Exception {
    if (System.getProperty("io.netty.leakDetection.level") == null) {
      // as `bloomery serve` runs (Main): Netty's sampled leak tracking off, a debugging aid that costs every command
      io.netty.util.ResourceLeakDetector.setLevel(io.netty.util.ResourceLeakDetector.Level.DISABLED);
    }
    PostgresCluster pg = PostgresCluster.shared();
    String url = pg.createDatabase();
    try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE plain (url text PRIMARY KEY)");
      st.execute("INSERT INTO plain SELECT 'https://www.example.com/articles/' || g || '/comments?page=' || (g % 7)"
          + " || '&sort=recent' FROM generate_series(0, " + (ROWS - 1) + ") g");
      st.execute("CREATE TABLE plain_adds (url text PRIMARY KEY)");
      st.execute("ANALYZE plain");
    }
    try (BloomeryServer server = GuardFixtures.server("--store", "pg=" + url, "--guard-timeout", "600000",
        "--store", "feed=" + url, "--store-table", "feed=feed.url");
        Jedis j = new Jedis("127.0.0.1", server.port(), 120_000)) {
      call(j, "GUARD.RESERVE", "crawl", "pg", "0.01", String.valueOf(ROWS * 4L));
      String table = GuardFixtures.psql(url, "SELECT tablename FROM pg_tables WHERE tablename LIKE 'bloomery_seen_%' AND tablename !~ '_(pending|replies)$'")
          .strip();
      GuardFixtures.psql(url, "INSERT INTO " + table + " (digest, item) SELECT sha256(convert_to(url, 'UTF8')),"
          + " convert_to(url, 'UTF8') FROM plain; ANALYZE " + table); // both tables analyzed, as autovacuum would
      call(j, "GUARD.REBUILD", "crawl");
      GuardCommandsIT.server = server;
      GuardCommandsIT.awaitStreaming("crawl");
      System.out.printf(Locale.ROOT, "BENCH start %s, load average %s, %d cores%n", java.time.Instant.now(),
          loadAverage(), Runtime.getRuntime().availableProcessors());
      if (PARTS.contains("a")) {
        crawlerChecks(j, server.port(), url);
      }
      if (PARTS.contains("l")) {
        serverPath(j, server.port(), url);
      }
      if (PARTS.contains("b")) {
        concurrentAdds(j, server.port(), url, "b", ADDS_PER_CLIENT);
      }
      if (PARTS.contains("f")) {
        setFsync(url, true);
        try {
          concurrentAdds(j, server.port(), url, "f", ADDS_PER_CLIENT / 2);
        } finally {
          setFsync(url, false);
        }
      }
      if (PARTS.contains("c")) {
        freshness(j, server.port(), url);
      }
    }
  }

  /** CPU seconds so far of this JVM and of every postgres process: where a phase's time went. */
  static double[] cpu() {
    double jvm = ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
        .getOperatingSystemMXBean()).getProcessCpuTime() / 1e9;
    double pg = 0;
    double backends = 0;
    double walsender = 0;
    long hz = 100; // USER_HZ on Linux
    java.io.File[] procs = new java.io.File("/proc").listFiles((d, n) -> n.chars().allMatch(Character::isDigit));
    for (java.io.File p : procs == null ? new java.io.File[0] : procs) {
      try {
        String stat = java.nio.file.Files.readString(p.toPath().resolve("stat"));
        int close = stat.lastIndexOf(')');
        if (!stat.substring(stat.indexOf('(') + 1, close).equals("postgres")) {
          continue;
        }
        String[] f = stat.substring(close + 2).split(" ");
        double ticks = (Long.parseLong(f[11]) + Long.parseLong(f[12])) / (double) hz;
        pg += ticks;
        String title = java.nio.file.Files.readString(p.toPath().resolve("cmdline")).replace('\0', ' ');
        if (title.contains("walsender")) {
          walsender += ticks;
        } else if (title.matches("postgres: \\S+ \\S+ 127\\.0\\.0\\.1.*")) {
          backends += ticks;
        }
      } catch (java.io.IOException | RuntimeException e) {
        // the process ended meanwhile
      }
    }
    return new double[] {jvm, pg, backends, walsender};
  }

  static String cpuSince(double[] start) {
    double[] now = cpu();
    double pg = now[1] - start[1];
    double backends = now[2] - start[2];
    double walsender = now[3] - start[3];
    return String.format(Locale.ROOT, "cpu jvm %.2f s, postgres %.2f s (client backends %.2f s, walsender %.2f s,"
        + " other %.2f s)", now[0] - start[0], pg, backends, walsender, pg - backends - walsender);
  }

  static String loadAverage() {
    try {
      return java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).strip();
    } catch (java.io.IOException e) {
      return "?";
    }
  }

  /** {@code fsync} is reloadable: the throwaway cluster runs without it, a realistic store with it. */
  private static void setFsync(String url, boolean on) throws java.sql.SQLException {
    try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
      st.execute(on ? "ALTER SYSTEM SET fsync = on" : "ALTER SYSTEM RESET fsync");
      st.execute("SELECT pg_reload_conf()");
      for (int i = 0; i < 100; i++) {
        try (ResultSet rs = st.executeQuery("SHOW fsync")) {
          rs.next();
          if (rs.getString(1).equals(on ? "on" : "off")) {
            System.out.printf(Locale.ROOT, "BENCH fsync=%s synchronous_commit=on%n", on ? "on" : "off");
            return;
          }
        }
        try {
          Thread.sleep(20);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
      throw new IllegalStateException("fsync did not change");
    }
  }

  /** (a) in its shapes: 100 links a call with 5 % seen, 1000 with 1 % seen, and all new; 1 and more connections. */
  private static void crawlerChecks(Jedis j, int port, String url) throws Exception {
    for (String cs : CONNECTIONS.split(",")) {
      int conns = Integer.parseInt(cs.strip());
      crawlerCheck(j, port, url, "(a) 5%% seen, 100 links per call", 100, 20, LINKS, conns);
      crawlerCheck(j, port, url, "(a'') 1%% seen, 1000 links per call", 1000, 100, 10 * LINKS, conns);
      // all new: no store query at all, only the server's own path; and a plain Bloom key on the event loop
      List<List<String>> calls = links(100, Integer.MAX_VALUE, LINKS, "z" + conns);
      call(j, "BF.RESERVE", "bf" + conns, "0.01", String.valueOf(ROWS * 4L));
      double[] seconds = new double[2];
      for (int pass = 0; pass < 2; pass++) { // the first pass warms the JIT up
        List<List<String>> these = pass == 0 ? calls.subList(0, calls.size() / 5) : calls;
        seconds[0] = timed(conns, these, port, (jc, batch) -> mexists(jc, "GUARD.MEXISTS", "crawl", batch));
        seconds[1] = timed(conns, these, port, (jc, batch) -> mexists(jc, "BF.MEXISTS", "bf" + conns, batch));
      }
      System.out.printf(Locale.ROOT, "BENCH (a') connections=%d links=%d: GUARD.MEXISTS all new (no store query)"
          + " %.0f links/s; BF.MEXISTS (no guard, event loop) %.0f links/s (%s)%n", conns, LINKS, LINKS / seconds[0],
          LINKS / seconds[1], lastCpu);
    }
  }

  /** Calls per timed loop of (l); each loop first runs a fifth as many, untimed. */
  static final int LEAN_CALLS = Integer.getInteger("bloomery.guardwire.leanCalls", 1000);

  /**
   * (l) Where the time of (a'') goes: 1000 links per call, all new and 1 % seen, each sent by Jedis and by a lean
   * client ({@link RawResp}: requests encoded before the clock starts, replies parsed in place), beside BF.MEXISTS
   * and both ways of sending the plain statement's array (a {@code createArrayOf} text array and
   * {@code setObject(String[])}). With {@code -Dbloomery.guardwire.jfr=FILE} the timed loops are recorded by JFR,
   * execution samples every millisecond.
   */
  private static void serverPath(Jedis j, int port, String url) throws Exception {
    jdk.jfr.Recording recording = startRecording();
    for (String cs : CONNECTIONS.split(",")) {
      int conns = Integer.parseInt(cs.strip());
      call(j, "BF.RESERVE", "lean" + conns, "0.01", String.valueOf(ROWS * 4L));
      for (int seenEvery : new int[] {Integer.MAX_VALUE, 100}) {
        String shape = seenEvery == Integer.MAX_VALUE ? "all new" : "1% seen";
        List<List<String>> warm = links(1000, seenEvery, LEAN_CALLS * 200, "lw" + conns + "-" + seenEvery);
        List<List<String>> calls = links(1000, seenEvery, LEAN_CALLS * 1000, "l" + conns + "-" + seenEvery);
        List<String> figures = new ArrayList<>();
        JedisCall guardJedis = (jc, batch) -> mexists(jc, "GUARD.MEXISTS", "crawl", batch);
        timedSum(conns, warm, port, guardJedis);
        figures.add(figure("GUARD.MEXISTS jedis", calls, timedSum(conns, calls, port, guardJedis)));
        timedRaw(conns, RawResp.requests("GUARD.MEXISTS", "crawl", warm), port);
        figures.add(figure("GUARD.MEXISTS lean client", calls,
            timedRaw(conns, RawResp.requests("GUARD.MEXISTS", "crawl", calls), port)));
        if (seenEvery == Integer.MAX_VALUE) {
          JedisCall bfJedis = (jc, batch) -> mexists(jc, "BF.MEXISTS", "lean" + conns, batch);
          timedSum(conns, warm, port, bfJedis);
          figures.add(figure("BF.MEXISTS jedis", calls, timedSum(conns, calls, port, bfJedis)));
          timedRaw(conns, RawResp.requests("BF.MEXISTS", "lean" + conns, warm), port);
          figures.add(figure("BF.MEXISTS lean client", calls,
              timedRaw(conns, RawResp.requests("BF.MEXISTS", "lean" + conns, calls), port)));
        }
        String sql = "SELECT url FROM plain WHERE url = ANY(?)";
        SqlCall literal = (c, ps, batch) -> {
          ps.setArray(1, c.createArrayOf("text", batch.toArray()));
          return rowsOf(ps);
        };
        timedSql(conns, warm, url, sql, literal);
        figures.add(figure("SELECT = ANY createArrayOf(text)", calls, timedSql(conns, calls, url, sql, literal)));
        timedSql(conns, warm, url, sql, GuardWireBenchmark::selectAny);
        figures.add(figure("SELECT = ANY setObject(String[])", calls,
            timedSql(conns, calls, url, sql, GuardWireBenchmark::selectAny)));
        System.out.printf(Locale.ROOT, "BENCH (l) %s, 1000 links per call, connections=%d, %d calls: %s%n", shape,
            conns, calls.size(), String.join("; ", figures));
      }
    }
    stopRecording(recording);
  }

  /**
   * With {@code -Dbloomery.guardwire.jfr=FILE}: a JFR recording with the JDK's {@code profile} settings, execution
   * samples every millisecond and CPU-time samples (threads in system calls included); else null.
   */
  static jdk.jfr.Recording startRecording() throws Exception {
    if (System.getProperty("bloomery.guardwire.jfr") == null) {
      return null;
    }
    jdk.jfr.Recording recording = new jdk.jfr.Recording(jdk.jfr.Configuration.getConfiguration("profile"));
    recording.enable("jdk.ExecutionSample").withPeriod(java.time.Duration.ofMillis(1));
    recording.enable("jdk.CPUTimeSample").with("throttle", "1ms");
    recording.enable("jdk.Compilation").withThreshold(java.time.Duration.ZERO);
    recording.start();
    return recording;
  }

  /**
   * With {@code -Dbloomery.guardwire.perf=FILE}: {@code perf record -e cpu-clock -g -a -o FILE} over the timed group
   * commit round of (b), for PostgreSQL's side of it ({@code perf report -i FILE --comm postgres}); else null.
   */
  static Process startPerf() throws Exception {
    String file = System.getProperty("bloomery.guardwire.perf");
    if (file == null) {
      return null;
    }
    Process p = new ProcessBuilder("perf", "record", "-q", "-e", "cpu-clock", "-g", "-a", "-o", file)
        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    Thread.sleep(500); // perf is recording before the round starts
    return p;
  }

  /** Stops {@code perf} (if any) with SIGINT, as perf expects, and waits for it to write its file. */
  static void stopPerf(Process perf) throws Exception {
    if (perf != null) {
      new ProcessBuilder("kill", "-INT", Long.toString(perf.pid())).start().waitFor();
      perf.waitFor(60, java.util.concurrent.TimeUnit.SECONDS);
    }
  }

  /** Stops {@code recording} (if any) and writes it to the file {@code -Dbloomery.guardwire.jfr} names. */
  static void stopRecording(jdk.jfr.Recording recording) throws Exception {
    if (recording != null) {
      recording.stop();
      recording.dump(java.nio.file.Path.of(System.getProperty("bloomery.guardwire.jfr")));
      recording.close();
    }
  }

  private static String figure(String what, List<List<String>> calls, double[] secondsAndSum) {
    long links = calls.stream().mapToLong(List::size).sum();
    return String.format(Locale.ROOT, "%s %.0f links/s (%d duplicates, %s, load %s)", what,
        links / secondsAndSum[0], (long) secondsAndSum[1], lastCpu, loadAverage());
  }

  /** {@link #timedSum} with {@link RawResp} connections, call i on connection i mod conns. */
  private static double[] timedRaw(int conns, List<byte[]> requests, int port) throws Exception {
    List<RawResp> clients = new ArrayList<>();
    try {
      for (int i = 0; i < conns; i++) {
        clients.add(new RawResp(port));
      }
      return clocked(conns, (sum, i) -> {
        for (int b = i; b < requests.size(); b += conns) {
          sum.addAndGet(clients.get(i).call(requests.get(b)));
        }
      });
    } finally {
      for (RawResp c : clients) {
        c.close();
      }
    }
  }

  /**
   * A lean RESP2 client for (l): one request at a time over a plain socket, the reply read into one buffer and
   * walked in place. Its answer is the sum of the last integer of each verdict triple (the duplicates of
   * GUARD.MEXISTS) or of each integer (BF.MEXISTS); an error reply throws.
   */
  static final class RawResp implements AutoCloseable {
    private final java.net.Socket socket;
    private final java.io.OutputStream out;
    private final java.io.InputStream in;
    private byte[] buf = new byte[1 << 16];
    private int filled;
    private int pos;

    RawResp(int port) throws java.io.IOException {
      socket = new java.net.Socket("127.0.0.1", port);
      socket.setTcpNoDelay(true);
      out = socket.getOutputStream();
      in = socket.getInputStream();
    }

    /** Each batch as one encoded {@code command key item...} request. */
    static List<byte[]> requests(String command, String key, List<List<String>> batches) {
      List<byte[]> out = new ArrayList<>(batches.size());
      for (List<String> batch : batches) {
        java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream(batch.size() * 80);
        b.writeBytes(("*" + (batch.size() + 2) + "\r\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        bulk(b, command);
        bulk(b, key);
        batch.forEach(item -> bulk(b, item));
        out.add(b.toByteArray());
      }
      return out;
    }

    private static void bulk(java.io.ByteArrayOutputStream b, String s) {
      byte[] bytes = s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
      b.writeBytes(("$" + bytes.length + "\r\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      b.writeBytes(bytes);
      b.writeBytes(new byte[] {'\r', '\n'});
    }

    long call(byte[] request) {
      try {
        out.write(request);
        out.flush();
        filled = 0;
        pos = 0;
        return reply();
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }

    /** Reads one reply: the sum described above. */
    private long reply() throws java.io.IOException {
      byte type = next();
      long n = number();
      switch (type) {
        case ':':
          return n;
        case '*': {
          long sum = 0;
          for (long i = 0; i < n; i++) {
            byte t = next();
            long m = number();
            if (t == ':') {
              sum += m;
            } else if (t == '*') {
              long last = 0;
              for (long k = 0; k < m; k++) {
                next();
                last = number();
              }
              sum += last;
            } else {
              throw new IllegalStateException("unexpected reply type " + (char) t);
            }
          }
          return sum;
        }
        default:
          throw new IllegalStateException("reply " + (char) type + " " + n);
      }
    }

    /** The integer up to CRLF after a type byte (an error's text is not a number: it fails here). */
    private long number() throws java.io.IOException {
      long v = 0;
      boolean negative = false;
      for (byte c = next(); c != '\r'; c = next()) {
        if (c == '-') {
          negative = true;
        } else if (c >= '0' && c <= '9') {
          v = v * 10 + (c - '0');
        } else {
          throw new IllegalStateException("not a number in the reply: " + (char) c);
        }
      }
      next();
      return negative ? -v : v;
    }

    private byte next() throws java.io.IOException {
      if (pos == filled) {
        if (filled == buf.length) {
          filled = 0;
          pos = 0;
        }
        int r = in.read(buf, filled, buf.length - filled);
        if (r < 0) {
          throw new java.io.EOFException("server closed the connection");
        }
        filled += r;
      }
      return buf[pos++];
    }

    @Override
    public void close() throws java.io.IOException {
      socket.close();
    }
  }

  /**
   * Calls of {@code perCall} links, every {@code seenEvery}-th one seen (none for {@link Integer#MAX_VALUE}),
   * {@code total} links in all.
   */
  private static List<List<String>> links(int perCall, int seenEvery, int total, String run) {
    List<List<String>> batches = new ArrayList<>();
    for (int b = 0; b < total / perCall; b++) {
      List<String> batch = new ArrayList<>();
      for (int i = 0; i < perCall; i++) {
        long n = (long) b * perCall + i;
        boolean seen = seenEvery != Integer.MAX_VALUE && i % seenEvery == 0;
        batch.add(seen ? seenUrl(n * 7919 % ROWS) : newUrl(run, n));
      }
      batches.add(batch);
    }
    return batches;
  }

  private static long mexists(Jedis j, String command, String key, List<String> batch) {
    List<String> args = new ArrayList<>(batch.size() + 1);
    args.add(key);
    args.addAll(batch);
    long duplicates = 0;
    for (Object v : (List<?>) j.sendCommand(GuardCommandsIT.cmd(command), args.toArray(String[]::new))) {
      if (v instanceof List<?> verdict) {
        duplicates += (Long) verdict.get(2);
      }
    }
    return duplicates;
  }

  /** The CPU split of the last timed loop. */
  static volatile String lastCpu = "";

  @FunctionalInterface
  interface JedisCall {
    long run(Jedis j, List<String> batch);
  }

  @FunctionalInterface
  interface SqlCall {
    long run(Connection c, PreparedStatement ps, List<String> batch) throws java.sql.SQLException;
  }

  /** Runs the calls over {@code conns} connections at once (call i on connection i mod conns); the seconds taken. */
  private static double timed(int conns, List<List<String>> calls, int port, JedisCall call) throws Exception {
    return timedSum(conns, calls, port, call)[0];
  }

  /** {seconds, sum of what the calls returned}; the connections are open before the clock starts. */
  private static double[] timedSum(int conns, List<List<String>> calls, int port, JedisCall call)
      throws Exception {
    return withClients(conns, port, clients -> clocked(conns, (sum, i) -> {
      for (int b = i; b < calls.size(); b += conns) {
        sum.addAndGet(call.run(clients.get(i), calls.get(b)));
      }
    }));
  }

  /** What a timed loop does with its clients, which are open and answered a PING before it starts its clock. */
  private interface TimedClients {
    double[] run(List<Jedis> clients) throws Exception;
  }

  /** Opens {@code conns} clients (each answers a PING), runs {@code timed} and closes them. */
  private static double[] withClients(int conns, int port, TimedClients timed) throws Exception {
    List<Jedis> clients = new ArrayList<>();
    try {
      for (int i = 0; i < conns; i++) {
        clients.add(new Jedis("127.0.0.1", port, 120_000));
        clients.get(i).ping();
      }
      return timed.run(clients);
    } finally {
      clients.forEach(Jedis::close);
    }
  }

  /** As {@link #timedSum} with JDBC connections, each with {@code sql} prepared. */
  private static double[] timedSql(int conns, List<List<String>> calls, String url, String sql, SqlCall call)
      throws Exception {
    List<Connection> cs = new ArrayList<>();
    List<PreparedStatement> ps = new ArrayList<>();
    try {
      for (int i = 0; i < conns; i++) {
        cs.add(DriverManager.getConnection(url));
        ps.add(cs.get(i).prepareStatement(sql));
      }
      return clocked(conns, (sum, i) -> {
        try {
          for (int b = i; b < calls.size(); b += conns) {
            sum.addAndGet(call.run(cs.get(i), ps.get(i), calls.get(b)));
          }
        } catch (java.sql.SQLException e) {
          throw new IllegalStateException(e);
        }
      });
    } finally {
      for (Connection c : cs) {
        c.close();
      }
    }
  }

  /**
   * {@link #parallel} with the clock and the CPU split ({@link #lastCpu}) around it: {seconds, the sum the bodies
   * added up}.
   */
  private static double[] clocked(int n, java.util.function.ObjIntConsumer<AtomicLong> body) throws Exception {
    AtomicLong sum = new AtomicLong();
    AtomicLong clientNanos = new AtomicLong();
    java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
    Map<String, Object[]> threadCpu0 = threadCpu();
    double[] cpu0 = cpu();
    long t0 = System.nanoTime();
    parallel(n, i -> {
      long mine = threads.getCurrentThreadCpuTime();
      try {
        body.accept(sum, i);
      } finally {
        clientNanos.addAndGet(threads.getCurrentThreadCpuTime() - mine);
      }
    });
    double seconds = (System.nanoTime() - t0) / 1e9;
    lastCpu = cpuSince(cpu0);
    lastThreads = threadsSince(threadCpu0, clientNanos.get());
    return new double[] {seconds, sum.get()};
  }

  /** The CPU split of the last timed loop by thread group (the clients, then this JVM's live threads by name). */
  static volatile String lastThreads = "";

  /** CPU ticks (user + system, 1/100 s) of each of this JVM's native threads now, by thread id: name and ticks. */
  private static Map<String, Object[]> threadCpu() {
    Map<String, Object[]> out = new java.util.HashMap<>();
    java.io.File[] tasks = new java.io.File("/proc/self/task").listFiles();
    for (java.io.File t : tasks == null ? new java.io.File[0] : tasks) {
      try {
        String stat = java.nio.file.Files.readString(t.toPath().resolve("stat"));
        int close = stat.lastIndexOf(')');
        String[] f = stat.substring(close + 2).split(" ");
        out.put(t.getName(), new Object[] {stat.substring(stat.indexOf('(') + 1, close),
            Long.parseLong(f[11]) + Long.parseLong(f[12])});
      } catch (java.io.IOException | RuntimeException e) {
        // the thread ended meanwhile
      }
    }
    return out;
  }

  /**
   * "clients 0.61 s, multiThreadIoEv 0.80 s, C2 CompilerThre 0.40 s, ..." over the loop: the loop's own client
   * threads (measured on each), then every other native thread of this JVM still alive at the end (JIT compiler
   * and GC threads included), grouped by name with digits folded into N, the largest first.
   */
  private static String threadsSince(Map<String, Object[]> before, long clientNanos) {
    Map<String, Long> groups = new java.util.HashMap<>();
    threadCpu().forEach((tid, now) -> {
      Object[] was = before.get(tid);
      long delta = (Long) now[1] - (was == null ? 0 : (Long) was[1]);
      if (was != null && delta > 0) { // threads started during the loop are its clients
        groups.merge(((String) now[0]).replaceAll("[0-9]+", "N"), delta, Long::sum);
      }
    });
    StringBuilder out = new StringBuilder(String.format(Locale.ROOT, "clients %.2f s", clientNanos / 1e9));
    groups.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed())
        .filter(e -> e.getValue() >= 1)
        .forEach(e -> out.append(String.format(Locale.ROOT, ", %s %.2f s", e.getKey(), e.getValue() / 100.0)));
    return out.toString();
  }

  /** Runs {@code body(i)} for i in [0, n) on n threads and waits for all; the first failure is rethrown. */
  private static void parallel(int n, java.util.function.IntConsumer body) throws Exception {
    try (var pool = java.util.concurrent.Executors.newFixedThreadPool(n)) {
      List<java.util.concurrent.Future<?>> fs = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        int index = i;
        fs.add(pool.submit(() -> body.accept(index)));
      }
      for (java.util.concurrent.Future<?> f : fs) {
        f.get();
      }
    }
  }

  /**
   * The plain statement's call as a competent user writes it: prepared once per connection (pgjdbc makes it a
   * server-side statement after five uses), the links as a {@code String[]}, which pgjdbc sends as a binary
   * {@code text[]}, against the primary key's index. ({@code createArrayOf("text", ...)}, which (l) times beside it,
   * sends a quoted text literal and is slower on both sides.)
   */
  private static long selectAny(Connection c, PreparedStatement ps, List<String> batch) throws java.sql.SQLException {
    ps.setObject(1, batch.toArray(String[]::new));
    return rowsOf(ps);
  }

  private static long rowsOf(PreparedStatement ps) throws java.sql.SQLException {
    long found = 0;
    try (ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        found++;
      }
    }
    return found;
  }

  /**
   * The crawler's check: {@code total} links in calls of {@code perCall}, every {@code seenEvery}-th one seen,
   * GUARD.MEXISTS against {@code SELECT url FROM plain WHERE url = ANY(?)} of the same links per statement, each
   * over {@code conns} connections at once. A warm-up pass of a fifth of the calls (other links) runs first on
   * both sides, untimed.
   */
  private static void crawlerCheck(Jedis j, int port, String url, String label, int perCall, int seenEvery,
      int total, int conns) throws Exception {
    String sql = "SELECT url FROM plain WHERE url = ANY(?)";
    List<List<String>> warm = links(perCall, seenEvery, total / 5, "w" + perCall + "-" + conns);
    timedSum(conns, warm, port, (jc, batch) -> mexists(jc, "GUARD.MEXISTS", "crawl", batch));
    timedSql(conns, warm, url, sql, GuardWireBenchmark::selectAny);
    List<List<String>> batches = links(perCall, seenEvery, total, "r" + perCall + "-" + conns);
    Map<String, Object> before = GuardCommandsIT.infoOf(j, "crawl");
    double[] guard = timedSum(conns, batches, port, (jc, batch) -> mexists(jc, "GUARD.MEXISTS", "crawl", batch));
    String guardCpu = lastCpu;
    Map<String, Object> after = GuardCommandsIT.infoOf(j, "crawl");
    double[] plain = timedSql(conns, batches, url, sql, GuardWireBenchmark::selectAny);
    String plainCpu = lastCpu;
    List<byte[]> requests = RawResp.requests("GUARD.MEXISTS", "crawl", batches);
    timedRaw(conns, RawResp.requests("GUARD.MEXISTS", "crawl", warm), port);
    double[] lean = timedRaw(conns, requests, port); // the same calls again, sent by the lean client
    String leanCpu = lastCpu;
    long made = delta(before, after, "store_lookups_made");
    long avoided = delta(before, after, "store_lookups_avoided");
    System.out.printf(Locale.ROOT, "BENCH " + label + " connections=%d rows=%d links=%d: GUARD.MEXISTS %.0f links/s"
            + " (%d duplicates, store lookups made %d avoided %d = %.2f%%, %d confirmation queries for %d calls);"
            + " SELECT ... = ANY %.0f links/s (%d duplicates); ratio %.2f; guard %s; plain %s;"
            + " GUARD.MEXISTS from a lean RESP client %.0f links/s (%d duplicates), ratio %.2f, %s; load %s%n",
        conns, ROWS, total, total / guard[0], (long) guard[1], made, avoided, 100.0 * avoided / (made + avoided),
        delta(before, after, "confirm_queries"), batches.size(), total / plain[0], (long) plain[1],
        plain[0] / guard[0], guardCpu, plainCpu, total / lean[0], (long) lean[1], plain[0] / lean[0], leanCpu,
        loadAverage());
  }

  private static long delta(Map<String, Object> before, Map<String, Object> after, String field) {
    Object a = after.get(field);
    Object b = before.get(field);
    return a instanceof Long x && b instanceof Long y ? x - y : -1;
  }

  /**
   * (b) {@link #CLIENTS} clients, each sending {@code perClient} single adds of new items one after another:
   * GUARD.ADD (group commit) against JDBC connections each running INSERT ... ON CONFLICT DO NOTHING RETURNING per
   * item (autocommit); then one client's GUARD.MADD of 1000 items per call; and, as the floor of the wire itself,
   * the same clients sending single BF.ADDs to a plain Bloom key (no store at all, answered on the event loop).
   * Connections are open before the clock starts; {@link #WARMUP_ROUNDS} warm-up rounds as large as the timed one
   * (other items) run first on each side, untimed and alternating, so that neither side is timed while the JIT
   * compiles its path. A {@code BENCH (b) threads} line splits each timed round's JVM CPU by thread group (the
   * compiler threads included, so a round still compiling shows).
   */
  /**
   * With {@code -Dbloomery.pg.options="-c shared_preload_libraries=pg_stat_statements
   * -c pg_stat_statements.track_planning=on"}: {@code reset} clears pg_stat_statements, any other {@code label}
   * prints its 12 costliest statements since (calls, rows, planning and execution ms) as {@code BENCH pgss} lines.
   * Without the option it does nothing.
   */
  static void statements(String url, String label) {
    if (!PostgresCluster.EXTRA_OPTIONS.contains("pg_stat_statements")) {
      return;
    }
    try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
      st.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
      if (label.equals("reset")) {
        st.execute("SELECT pg_stat_statements_reset()");
        return;
      }
      try (ResultSet rs = st.executeQuery("SELECT calls, rows, round(total_plan_time::numeric, 1),"
          + " round(total_exec_time::numeric, 1), plans, left(regexp_replace(query, '\\s+', ' ', 'g'), 200)"
          + " FROM pg_stat_statements ORDER BY total_plan_time + total_exec_time DESC LIMIT 12")) {
        while (rs.next()) {
          System.out.printf(Locale.ROOT, "BENCH pgss %s calls=%d rows=%d plan_ms=%s exec_ms=%s plans=%d %s%n", label,
              rs.getLong(1), rs.getLong(2), rs.getString(3), rs.getString(4), rs.getLong(5), rs.getString(6));
        }
      }
    } catch (java.sql.SQLException e) {
      System.out.println("BENCH pgss unavailable: " + e);
    }
  }

  private static void concurrentAdds(Jedis j, int port, String url, String run, int perClient) throws Exception {
    List<List<List<String>>> warmRounds = new ArrayList<>();
    List<List<String>> timedItems = new ArrayList<>();
    for (int round = 0; round < WARMUP_ROUNDS; round++) {
      List<List<String>> warm = new ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        List<String> w = new ArrayList<>();
        for (int i = 0; i < perClient; i++) {
          w.add(newUrl(run + "w" + round + "-" + c, i));
        }
        warm.add(w);
      }
      warmRounds.add(warm);
    }
    for (int c = 0; c < CLIENTS; c++) {
      List<String> t = new ArrayList<>();
      for (int i = 0; i < perClient; i++) {
        t.add(newUrl(run + c, i));
      }
      timedItems.add(t);
    }
    int total = CLIENTS * perClient;
    JedisCall singleAdds = (jc, items) -> {
      long fresh = 0;
      for (String item : items) {
        fresh += (Long) call(jc, "GUARD.ADD", "crawl", item);
      }
      return fresh;
    };
    SqlCall perItem = (c, ps, items) -> {
      long fresh = 0;
      for (String item : items) {
        ps.setString(1, item);
        try (ResultSet rs = ps.executeQuery()) {
          fresh += rs.next() ? 1 : 0;
        }
      }
      return fresh;
    };
    String insert = "INSERT INTO plain_adds (url) VALUES (?) ON CONFLICT DO NOTHING RETURNING url";
    for (List<List<String>> warm : warmRounds) { // alternating, so that neither side is timed while C2 compiles
      timedPerClient(CLIENTS, warm, port, singleAdds);
      timedSql(CLIENTS, warm, url, insert, perItem);
    }
    Map<String, Object> before = GuardCommandsIT.infoOf(j, "crawl");
    statements(url, "reset");
    long[] store0 = pgCounters(url);
    jdk.jfr.Recording recording = startRecording();
    Process perf = startPerf();
    double[] group = timedPerClient(CLIENTS, timedItems, port, singleAdds);
    stopPerf(perf);
    stopRecording(recording);
    String groupStore = pgCountersSince(url, store0);
    statements(url, "group");
    String groupCpu = lastCpu;
    String groupThreads = lastThreads;
    Map<String, Object> after = GuardCommandsIT.infoOf(j, "crawl");
    statements(url, "reset");
    store0 = pgCounters(url);
    double[] sql = timedSql(CLIENTS, timedItems, url, insert, perItem);
    String sqlStore = pgCountersSince(url, store0);
    statements(url, "per-item");
    String sqlCpu = lastCpu;
    List<List<String>> madds = new ArrayList<>();
    int warmBatches = 5 * WARMUP_ROUNDS;
    for (int b = 0; b < total / 1000 + warmBatches; b++) {
      List<String> items = new ArrayList<>();
      for (int i = 0; i < 1000; i++) {
        items.add(newUrl(run + "m", b * 1000L + i));
      }
      madds.add(items);
    }
    JedisCall madd = (jc, items) -> {
      List<String> args = new ArrayList<>(List.of("GUARD.MADD", "crawl"));
      args.addAll(items);
      long fresh = 0;
      for (Object r : (List<?>) call(jc, args.toArray(String[]::new))) {
        fresh += (Long) r;
      }
      return fresh;
    };
    timedSum(1, madds.subList(0, warmBatches), port, madd);
    store0 = pgCounters(url);
    double[] batched = timedSum(1, madds.subList(warmBatches, madds.size()), port, madd);
    String batchedCpu = lastCpu;
    String batchedStore = pgCountersSince(url, store0);
    call(j, "BF.RESERVE", "wire-" + run, "0.01", String.valueOf(4L * total));
    JedisCall bloomAdds = (jc, items) -> {
      long fresh = 0;
      for (String item : items) {
        fresh += (Long) call(jc, "BF.ADD", "wire-" + run, item);
      }
      return fresh;
    };
    for (List<List<String>> warm : warmRounds) {
      timedPerClient(CLIENTS, warm, port, bloomAdds);
    }
    double[] wire = timedPerClient(CLIENTS, timedItems, port, bloomAdds);
    String wireCpu = lastCpu;
    String wireThreads = lastThreads;
    long commits = delta(before, after, "group_commits");
    System.out.printf(Locale.ROOT, "BENCH (%s) %d clients x %d single adds: GUARD.ADD group commit %.0f adds/s"
            + " (%d new, %d group commits of %.1f rows on average); INSERT ... ON CONFLICT per item %.0f adds/s"
            + " (%d new); ratio %.2f; one client GUARD.MADD x1000 %.0f adds/s (%d new); group/batched %.2f;"
            + " group %s; per item %s; batched %s; %d standalone acknowledgement transactions;"
            + " wire floor: the same clients' single BF.ADD (no store) %.0f adds/s, %s; load %s%n",
        run, CLIENTS, perClient, total / group[0], (long) group[1], commits,
        (double) delta(before, after, "group_commit_rows") / Math.max(1L, commits), total / sql[0], (long) sql[1],
        sql[0] / group[0], total / batched[0], (long) batched[1], batched[0] / group[0], groupCpu, sqlCpu,
        batchedCpu, delta(before, after, "ack_transactions"), total / wire[0], wireCpu, loadAverage());
    System.out.printf(Locale.ROOT, "BENCH (%s) threads: group commit %s; wire floor %s%n", run, groupThreads,
        wireThreads);
    System.out.printf(Locale.ROOT, "BENCH (%s) store: group commit %s; per item %s; batched %s%n", run, groupStore,
        sqlStore, batchedStore);
  }

  /** {transaction ids assigned, WAL position in bytes} of the cluster now (outside any timed loop). */
  static long[] pgCounters(String url) throws java.sql.SQLException {
    try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint,"
            + " (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint")) {
      rs.next();
      return new long[] {rs.getLong(1), rs.getLong(2)};
    }
  }

  /** "431 transactions, 2.1 MB WAL" since {@code before} (the read itself assigns no transaction id). */
  static String pgCountersSince(String url, long[] before) throws java.sql.SQLException {
    long[] now = pgCounters(url);
    return String.format(Locale.ROOT, "%d transactions, %.2f MB WAL", now[0] - before[0], (now[1] - before[1]) / 1e6);
  }

  /** {@link #timedSum} with client i sending {@code perClient.get(i)}, each on a thread of its own. */
  private static double[] timedPerClient(int conns, List<List<String>> perClient, int port, JedisCall call)
      throws Exception {
    return withClients(
        conns, port, clients -> clocked(conns, (sum, i) -> sum.addAndGet(call.run(clients.get(i), perClient.get(i)))));
  }

  /**
   * (c) A read-only foreign table followed by logical replication: a JDBC writer inserts {@link #FEED_RATE} rows/s
   * (one 100-row INSERT every 10 ms, autocommit) for {@link #FEED_SECONDS} s; for every 10th statement a prober
   * client polls GUARD.MEXISTS over RESP until the statement's last row is "maybe". The lag of a sample is the time
   * from the INSERT's return (its commit) to the first GUARD.MEXISTS reply that has the row; the prober polls
   * every open sample in one call per round, so a sample's lag is at most one round late.
   */
  private static void freshness(Jedis j, int port, String url) throws Exception {
    try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE IF NOT EXISTS feed (id bigserial PRIMARY KEY, url text NOT NULL)");
    }
    call(j, "GUARD.RESERVE", "feed", "feed", "0.01", String.valueOf(4L * FEED_RATE * FEED_SECONDS));
    GuardCommandsIT.awaitStreaming("feed");
    java.util.concurrent.ConcurrentLinkedQueue<Object[]> committed = new java.util.concurrent.ConcurrentLinkedQueue<>();
    java.util.concurrent.atomic.AtomicBoolean writing = new java.util.concurrent.atomic.AtomicBoolean(true);
    AtomicLong rows = new AtomicLong();
    long[] writeNanos = new long[1];
    CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
      try (Connection c = DriverManager.getConnection(url); PreparedStatement ps = c.prepareStatement(
          "INSERT INTO feed (url) SELECT unnest(?::text[])")) {
        long start = System.nanoTime();
        int statements = FEED_RATE * FEED_SECONDS / 100;
        for (int n = 0; n < statements; n++) {
          long due = start + n * 10_000_000L;
          while (System.nanoTime() < due) {
            java.util.concurrent.locks.LockSupport.parkNanos(due - System.nanoTime());
          }
          String[] batch = new String[100];
          for (int i = 0; i < 100; i++) {
            batch[i] = newUrl("feed", n * 100L + i);
          }
          ps.setArray(1, c.createArrayOf("text", batch));
          ps.executeUpdate();
          rows.addAndGet(100);
          if (n % 10 == 0) {
            committed.add(new Object[] {batch[99], System.nanoTime()});
          }
        }
        writeNanos[0] = System.nanoTime() - start;
      } catch (java.sql.SQLException e) {
        throw new IllegalStateException(e);
      } finally {
        writing.set(false);
      }
    });
    List<Long> lags = new ArrayList<>();
    List<Object[]> open = new ArrayList<>();
    long rounds = 0;
    try (Jedis prober = new Jedis("127.0.0.1", port, 120_000)) {
      while (writing.get() || !committed.isEmpty() || !open.isEmpty()) {
        Object[] sample;
        while ((sample = committed.poll()) != null) {
          open.add(sample);
        }
        if (open.isEmpty()) {
          Thread.onSpinWait();
          continue;
        }
        List<String> args = new ArrayList<>(List.of("GUARD.MEXISTS", "feed"));
        for (Object[] o : open) {
          args.add((String) o[0]);
        }
        List<?> verdicts = (List<?>) call(prober, args.toArray(String[]::new));
        long now = System.nanoTime();
        rounds++;
        List<Object[]> still = new ArrayList<>();
        for (int i = 0; i < open.size(); i++) {
          if ((Long) ((List<?>) verdicts.get(i)).get(0) == 1L) {
            lags.add(now - (Long) open.get(i)[1]);
          } else {
            still.add(open.get(i));
          }
        }
        open = still;
      }
    }
    writer.get();
    java.util.Collections.sort(lags);
    Map<String, Object> info = GuardCommandsIT.infoOf(j, "feed");
    System.out.printf(Locale.ROOT, "BENCH (c) foreign inserts %d rows in %.1f s = %.0f rows/s (target %d);"
            + " %d samples, %d probe rounds; lag commit -> GUARD.MEXISTS maybe: p50 %.1f ms, p99 %.1f ms, max %.1f ms;"
            + " GUARD.INFO max_commit_lag_ms %s, replication_rows %s%n",
        rows.get(), writeNanos[0] / 1e9, rows.get() / (writeNanos[0] / 1e9), FEED_RATE, lags.size(), rounds,
        lags.get(lags.size() / 2) / 1e6, lags.get((int) (lags.size() * 0.99)) / 1e6, lags.get(lags.size() - 1) / 1e6,
        info.get("max_commit_lag_ms"), info.get("replication_rows"));
  }
}
