package io.bloomery.bench;

import io.bloomery.server.keyspace.Key;
import io.bloomery.server.keyspace.Keyspace;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * What the server's write locking costs per command, without the command: a connection's pipelined read of
 * {@value #PIPELINE} one-key writes, each a leased {@link Keyspace#write(Key, Keyspace.Lease)} opened and closed, then
 * the lease released (as the event loop does at the end of a read). {@code oneKey}: every write of a read hits the
 * same key (the lease keeps its locks); {@code keyPerCommand}: each write another of the thread's 64 keys (the key
 * lock changes every command). Each JMH thread is one event loop with keys of its own, so threads contend only on
 * what all writers share (the cut lock's shared side, {@code KeyLocks}' map). Scores are ns per write.
 *
 * <p>Run: {@code java -jar bench/target/benchmarks.jar KeyspaceWriteBenchmark -t 1} and {@code -t 2} (one thread
 * per core), docs/BENCHMARKS.md (server section).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class KeyspaceWriteBenchmark {
  static final int PIPELINE = 16;
  private static final int KEYS = 64;

  final Keyspace keyspace = new Keyspace(System::currentTimeMillis);

  /** One event loop: its lease and its keys. */
  @State(Scope.Thread)
  public static class Loop {
    Keyspace.Lease lease;
    final Key[] keys = new Key[KEYS];
    int next;

    @Setup
    public void setUp(KeyspaceWriteBenchmark bench, ThreadParams thread) {
      lease = bench.keyspace.lease();
      for (int i = 0; i < KEYS; i++) {
        keys[i] = Key.of("loop" + thread.getThreadIndex() + ":" + i);
      }
    }

    @TearDown
    public void tearDown() {
      lease.release();
    }
  }

  @Benchmark
  @OperationsPerInvocation(PIPELINE)
  public void oneKey(Loop loop) {
    Key key = loop.keys[loop.next++ & (KEYS - 1)];
    for (int i = 0; i < PIPELINE; i++) {
      try (Keyspace.Write w = keyspace.write(key, loop.lease)) {
        // the command would run here
      }
    }
    loop.lease.release();
  }

  @Benchmark
  @OperationsPerInvocation(PIPELINE)
  public void keyPerCommand(Loop loop) {
    for (int i = 0; i < PIPELINE; i++) {
      try (Keyspace.Write w = keyspace.write(loop.keys[loop.next++ & (KEYS - 1)], loop.lease)) {
        // the command would run here
      }
    }
    loop.lease.release();
  }
}
