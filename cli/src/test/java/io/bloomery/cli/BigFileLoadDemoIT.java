package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.filter.BloomFilter;
import io.bloomery.format.FilterFormat;
import io.bloomery.hash.HashProtocol;
import io.bloomery.hash.Protocols;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.UnifiedJedis;

/**
 * Opt-in demonstration that a filter file past one Java array is served unchanged: a classic filter of m = 2^34 +
 * 2^20 bits (a 2 GiB + 128 KiB bitmap, a 2,147,614,762-byte file) written with core's streaming writer, loaded
 * through {@code bloomery load} into a real server process, answering BF.MEXISTS exactly like the library, then
 * after a kill -9 (the journal names the loaded file) and after a clean restart (the key comes from the snapshot).
 *
 * <p>Needs about 2.5 GB of heap here, a server with {@code -Xmx4g}, and 7 GB of free disk in java.io.tmpdir. Run
 * it alone, under the benchmark lock, since it prints times and the server's RSS:
 *
 * <pre>{@code
 * flock /tmp/bloomery-bench.lock mvn -B -q -pl cli -am test -Dtest=BigFileLoadDemoIT \
 *     -Dsurefire.failIfNoSpecifiedTests=false -Dbloomery.bigload=true
 * }</pre>
 */
@EnabledIfSystemProperty(named = "bloomery.bigload", matches = "true")
class BigFileLoadDemoIT {
  private static final long BITS = (1L << 34) + (1L << 20);
  private static final int HASHES = 7;
  private static final int MEMBERS = 1_000_000;
  private static final int PROBES = 20_000;

  @TempDir Path dir;

  @Test
  void aFilterPastTwoGibibytesIsLoadedServedAndSurvivesRestarts() throws Exception {
    String[] probe = new String[2 * PROBES];
    for (int i = 0; i < PROBES; i++) {
      probe[i] = "https://example.org/page/" + (i * 37);
      probe[PROBES + i] = "https://example.org/absent/" + i;
    }
    Path file = dir.resolve("big.blmf");
    Built built = build(file, probe); // the library's filter is gone after this: the server's copy is under test
    List<Boolean> expected = built.expected();
    long inserted = built.inserted();
    long started;

    Path data = dir.resolve("data");
    Path log = dir.resolve("server.log");
    Process server = launch(data, log);
    try {
      int port = readyPort(server, log);
      started = System.nanoTime();
      Cli.Result load = Cli.run("load", file.toString(), "--key", "big", "--port", String.valueOf(port),
          "--chunk-size", String.valueOf(64 << 20));
      assertThat(load.exitCode()).as(load.toString()).isZero();
      System.out.printf("bloomery load: %.1f s; server RSS %d MiB%n", seconds(started), rssMiB(server));
      assertAnswers(port, probe, expected, inserted);
    } finally {
      server.destroyForcibly().waitFor(); // kill -9: the journal's record names the fsynced loaded file
    }
    server = launch(data, log);
    try {
      started = System.nanoTime();
      int port = readyPort(server, log);
      System.out.printf("restart after kill -9 (replay of the loaded file): %.1f s; server RSS %d MiB%n",
          seconds(started), rssMiB(server));
      assertAnswers(port, probe, expected, inserted);
    } finally {
      server.destroy(); // SIGTERM: final snapshot of the > 2 GiB key, then the loaded file is deleted
      assertThat(server.waitFor(10, TimeUnit.MINUTES)).isTrue();
    }
    try (var loads = Files.list(data.resolve("loads"))) {
      assertThat(loads.toList()).isEmpty();
    }
    server = launch(data, log);
    try {
      started = System.nanoTime();
      int port = readyPort(server, log);
      System.out.printf("restart from the snapshot: %.1f s; server RSS %d MiB%n", seconds(started), rssMiB(server));
      assertAnswers(port, probe, expected, inserted);
    } finally {
      server.destroyForcibly().waitFor();
    }
  }

  private record Built(List<Boolean> expected, long inserted) {}

  /** Builds the library's filter, notes its answers for {@code probe}, and streams it to {@code file}. */
  private static Built build(Path file, String[] probe) throws IOException {
    HashProtocol protocol = Protocols.defaultProtocol();
    BloomFilter filter = BloomFilter.create(protocol, new byte[0], BITS, HASHES);
    for (int i = 0; i < MEMBERS; i++) {
      filter.add("https://example.org/page/" + i);
    }
    List<Boolean> expected = java.util.Arrays.stream(probe).map(filter::mightContain).toList();
    assertThat(expected.subList(0, PROBES)).containsOnly(true);
    long started = System.nanoTime();
    try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(file), 1 << 20)) {
      FilterFormat.write(filter, out); // streams the words; never one array
    }
    System.out.printf("wrote %s: %d bytes in %.1f s%n", file, Files.size(file), seconds(started));
    assertThat(Files.size(file)).isEqualTo(18 + 20 + 8 * (BITS / 64) + 4).isGreaterThan(1L << 31);
    return new Built(expected, filter.insertedCount());
  }

  private static void assertAnswers(int port, String[] probe, List<Boolean> expected, long inserted) {
    try (UnifiedJedis j = RedisClient.builder().hostAndPort(new HostAndPort("127.0.0.1", port))
        .clientConfig(DefaultJedisClientConfig.builder().socketTimeoutMillis(600_000).build()).build()) {
      assertThat(j.type("big")).isEqualTo("BLbloom");
      assertThat(j.bfMExists("big", probe)).isEqualTo(expected);
      assertThat(j.bfCard("big")).isEqualTo(inserted);
    }
  }

  private static double seconds(long startedNanos) {
    return (System.nanoTime() - startedNanos) / 1e9;
  }

  private static long rssMiB(Process process) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/" + process.pid() + "/status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024;
      }
    }
    return -1;
  }

  private static Process launch(Path data, Path log) throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    return new ProcessBuilder(java, "-Xmx4g", "-cp", System.getProperty("java.class.path"),
        "io.bloomery.server.Main", "--port", "0", "--http-port", "0", "--dir", data.toString(), "--appendfsync",
        "always").redirectError(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
  }

  private static int readyPort(Process process, Path log) throws Exception {
    return ServerReady.port(process, log, 10, TimeUnit.MINUTES);
  }
}
