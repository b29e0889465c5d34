package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * An idle server uses next to no CPU: a real {@code bloomery serve} child with its defaults (journal on, dashboard
 * sampler, active expiry, HTTP), one write, then nothing. Its CPU time (utime + stime from {@code /proc/PID/stat})
 * over a few idle seconds must stay far below one core: a thread that polls in a tight loop shows as most of a
 * core, the periodic threads as a few milliseconds.
 */
class IdleCpuIT {
  private static final long IDLE_MILLIS = 3_000;
  /** A tenth of one core over the window: a bound far above what sleeping threads use, far below a spinning one. */
  private static final double MAX_CORE_SHARE = 0.10;
  /** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
  private static final long TICKS_PER_SECOND = 100;

  @TempDir Path dir;

  @ParameterizedTest
  @ValueSource(strings = {"everysec", "always", "no"})
  void anIdleServerUsesNextToNoCpu(String fsync) throws Exception {
    assumeTrue(Files.isReadable(Path.of("/proc/self/stat")), "needs Linux /proc to read a process's CPU time");
    Path log = dir.resolve("server.log");
    ChildServer.Started child = ChildServer.start(List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"),
        List.of("--dir", dir.resolve("data").toString(), "--appendonly", "yes", "--appendfsync", fsync), log);
    try {
      try (RawClient c = new RawClient(child.port())) {
        assertThat(c.call("BF.ADD", "k", "x")).isEqualTo(":1\r\n");
      }
      Thread.sleep(2_000); // let start-up work (class loading, compilation) finish
      long pid = child.process().pid();
      long before = cpuTicks(pid);
      long started = System.nanoTime();
      Thread.sleep(IDLE_MILLIS);
      long used = cpuTicks(pid) - before;
      double seconds = (System.nanoTime() - started) / 1e9;
      double share = used / (double) TICKS_PER_SECOND / seconds;
      assertThat(share).as("share of one core used by an idle server (appendfsync %s) over %.1f s: %d ticks",
          fsync, seconds, used).isLessThan(MAX_CORE_SHARE);
    } finally {
      child.process().destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
  }

  /** utime + stime of process {@code pid}, in clock ticks. */
  private static long cpuTicks(long pid) throws IOException {
    String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
    // The command name (field 2) may hold spaces: the fields after it start past its closing parenthesis.
    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
    return Long.parseLong(fields[11]) + Long.parseLong(fields[12]); // fields 14 and 15 of the whole line
  }
}
