/**
 * Benchmarks against the anchors (Guava, RedisBloom), never run by the test suite: {@link
 * io.bloomery.bench.BenchMain} (the {@code bloomery bench} harness and {@code bench/run}), the JMH benchmarks
 * ({@code LookupBenchmark}, {@code RealDataBenchmark}), {@code QuickBench} and {@code KindSpeedBench}. Every figure
 * they print goes to docs/BENCHMARKS.md with the command that reproduces it; the tests beside them only check that
 * each workload computes the right answers.
 */
package io.bloomery.bench;
