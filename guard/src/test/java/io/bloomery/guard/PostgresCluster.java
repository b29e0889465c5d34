package io.bloomery.guard;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * A throwaway PostgreSQL 15 cluster for tests: {@code initdb} (as user {@code postgres} when the
 * tests run as root) in a temp dir, {@code pg_ctl start} on a free port, listening on 127.0.0.1
 * only with its unix socket inside the temp dir; stopped and deleted on {@link #close()} and at
 * JVM exit. No Docker, no mocks: the Debian {@code postgresql-15} binaries.
 *
 * <p>Binaries missing: with {@code CI=true} the test fails, telling you to run {@code ./run-tests}
 * (which installs them); elsewhere the test is skipped with a loud message on stderr.
 *
 * <p>{@code fsync=off} for speed: it only matters for an OS crash; {@link #stopImmediately()} kills
 * the server processes, which loses nothing the OS already holds, and {@code synchronous_commit}
 * stays on so a commit reported to the client is in the WAL.
 *
 * <p>{@code -Dbloomery.pg.options="-c NAME=VALUE ..."} adds server settings to every cluster a run
 * starts, for a benchmark's diagnostics (e.g. {@code shared_preload_libraries=pg_stat_statements});
 * tests never depend on it.
 */
public final class PostgresCluster implements AutoCloseable {
  /** Extra {@code postgres} command-line settings from {@code -Dbloomery.pg.options} (default none). */
  public static final String EXTRA_OPTIONS = System.getProperty("bloomery.pg.options", "");

  static final Path BIN = Path.of(
      System.getProperty("bloomery.postgres.bin", "/usr/lib/postgresql/15/bin"));
  private static final AtomicInteger DATABASES = new AtomicInteger();
  private static PostgresCluster shared;

  private final Path directory;
  private final Path data;
  private final Path sockets;
  private final int port;
  private final boolean asRoot;
  private final Thread cleanup;
  private final String walLevel;
  private boolean closed;

  private PostgresCluster(String walLevel) throws IOException, InterruptedException {
    this.walLevel = walLevel;
    asRoot = "root".equals(System.getProperty("user.name"));
    port = freePort();
    directory = Files.createTempDirectory("bloomery-pg-");
    data = directory.resolve("data");
    sockets = directory.resolve("sockets");
    cleanup = new Thread(this::destroyQuietly, "postgres-cluster-cleanup");
    Runtime.getRuntime().addShutdownHook(cleanup);
    try {
      Files.createDirectories(sockets);
      if (asRoot) {
        run(List.of("chown", "-R", "postgres:postgres", directory.toString()), false);
      }
      run(List.of(BIN.resolve("initdb").toString(), "-D", data.toString(), "-U", "postgres",
          "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"), true);
      // in the config file, not on the command line, so that a benchmark may turn it on with
      // ALTER SYSTEM SET fsync = on and pg_reload_conf() (and back with ALTER SYSTEM RESET)
      Files.writeString(data.resolve("postgresql.conf"), "\nfsync = off\n",
          StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.APPEND);
      start();
    } catch (IOException | InterruptedException | RuntimeException e) {
      close(); // a half-started server and its directory go now, not at JVM exit
      throw e;
    }
  }

  /**
   * A new cluster owned by the caller (for tests that stop and restart the server), with
   * {@code wal_level=logical} so that a guard can follow its tables by logical replication.
   */
  public static PostgresCluster startNew() {
    return startNew("logical");
  }

  /** A new cluster with the given {@code wal_level} ({@code replica} to test the fallback). */
  public static PostgresCluster startNew(String walLevel) {
    requireBinaries();
    try {
      return new PostgresCluster(walLevel);
    } catch (IOException e) {
      throw new IllegalStateException("cannot start a throwaway PostgreSQL cluster: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while starting PostgreSQL", e);
    }
  }

  /** One cluster shared by every test class of this JVM, stopped and deleted at JVM exit. */
  public static synchronized PostgresCluster shared() {
    if (shared == null) {
      shared = startNew();
    }
    return shared;
  }

  private static void requireBinaries() {
    if (Files.isExecutable(BIN.resolve("initdb")) && Files.isExecutable(BIN.resolve("pg_ctl"))) {
      return;
    }
    String message = "PostgreSQL 15 binaries not found in " + BIN + ": run ./run-tests (it"
        + " installs postgresql-15) or apt-get install postgresql-15; these tests use a real"
        + " server, never a mock";
    if ("true".equalsIgnoreCase(System.getenv("CI"))) {
      throw new IllegalStateException(message);
    }
    System.err.println("!!!!!!!! SKIPPING POSTGRESQL TESTS !!!!!!!! " + message);
    Assumptions.abort(message);
  }

  /** Creates a fresh database and returns its JDBC URL (user postgres, trust auth). */
  public String createDatabase() {
    String name = "bloomery_test_" + DATABASES.incrementAndGet();
    try (Connection c = DriverManager.getConnection(jdbcUrl("postgres"));
        Statement st = c.createStatement()) {
      st.execute("CREATE DATABASE " + name);
    } catch (SQLException e) {
      throw new IllegalStateException("cannot create database " + name + ": " + e, e);
    }
    return jdbcUrl(name);
  }

  public String jdbcUrl(String database) {
    return "jdbc:postgresql://127.0.0.1:" + port + "/" + database + "?user=postgres";
  }

  public int port() {
    return port;
  }

  /** Starts (or restarts) the server and waits until it accepts connections. */
  public void start() {
    try {
      run(List.of(BIN.resolve("pg_ctl").toString(), "-D", data.toString(), "-w", "-t", "120",
          "-l", directory.resolve("server.log").toString(), "-o",
          "-p " + port + " -k " + sockets + " -c listen_addresses=127.0.0.1"
              + " -c max_connections=200 -c wal_level=" + walLevel
              + " -c max_replication_slots=20 -c max_wal_senders=20 " + EXTRA_OPTIONS, "start"), true);
    } catch (IOException | InterruptedException e) {
      throw new IllegalStateException("pg_ctl start failed: " + e, e);
    }
  }

  /** {@code pg_ctl stop -m immediate}: the server dies as in a crash (recovery on next start). */
  public void stopImmediately() {
    stop("immediate");
  }

  private void stop(String mode) {
    try {
      run(List.of(BIN.resolve("pg_ctl").toString(), "-D", data.toString(), "-w", "-t", "60",
          "-m", mode, "stop"), true);
    } catch (IOException | InterruptedException e) {
      throw new IllegalStateException("pg_ctl stop failed: " + e, e);
    }
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    destroyQuietly();
    try {
      Runtime.getRuntime().removeShutdownHook(cleanup);
    } catch (IllegalStateException shuttingDown) {
      // already in the hook
    }
  }

  private synchronized void destroyQuietly() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      if (Files.exists(data.resolve("postmaster.pid"))) {
        stop("immediate");
      }
    } catch (RuntimeException e) {
      System.err.println("postgres cluster " + directory + ": stop failed: " + e);
    }
    try (Stream<Path> paths = Files.walk(directory)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      System.err.println("postgres cluster " + directory + ": cleanup failed: " + e);
    }
  }

  private void run(List<String> command, boolean asPostgres)
      throws IOException, InterruptedException {
    List<String> full = new ArrayList<>();
    if (asPostgres && asRoot) {
      full.addAll(List.of("runuser", "-u", "postgres", "--"));
    }
    full.addAll(command);
    Path output = Files.createTempFile("bloomery-pg-cmd-", ".log");
    try {
      Process process = new ProcessBuilder(full).redirectErrorStream(true)
          .redirectOutput(output.toFile()).start();
      if (!process.waitFor(180, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new IOException("timed out: " + String.join(" ", full));
      }
      if (process.exitValue() != 0) {
        String log = Files.readString(output, StandardCharsets.UTF_8);
        Path serverLog = directory.resolve("server.log");
        if (Files.exists(serverLog)) {
          log += "\n--- server.log ---\n" + Files.readString(serverLog, StandardCharsets.UTF_8);
        }
        throw new IOException("exit " + process.exitValue() + ": " + String.join(" ", full)
            + "\n" + log);
      }
    } finally {
      Files.deleteIfExists(output);
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
