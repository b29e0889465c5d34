package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The JVM flags the launchers give {@code bloomery serve} (scripts/serve-jvm-flags.sh, run with bash as
 * {@code ./bloomery} and the packaged launcher source it): the heap from maxmemory wherever it is given, a collector
 * that gives memory back, and the AOT cache only when it lies beside the jar and is not older than it.
 */
class ServeJvmFlagsTest {
  /** The script, from the module directory surefire runs in. */
  private static final Path SCRIPT = Path.of("..", "scripts", "serve-jvm-flags.sh").toAbsolutePath().normalize();

  @TempDir Path dir;

  private List<String> flags(Map<String, String> env, String... serveArgs) throws Exception {
    Path jar = dir.resolve("bloomery.jar");
    if (!Files.exists(jar)) {
      Files.writeString(jar, "jar");
    }
    List<String> command = new ArrayList<>(List.of("bash", "-c",
        "source \"$0\"; bloomery_serve_jvm_flags \"$@\"; printf '%s\\n' \"${BLOOMERY_SERVE_FLAGS[@]}\"",
        SCRIPT.toString(), jar.toString()));
    command.addAll(List.of(serveArgs));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.environment().remove("BLOOMERY_MAXMEMORY");
    builder.environment().putAll(env);
    Process process = builder.start();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).as(out).isZero();
    return out.lines().toList();
  }

  @Test
  void theHeapIsTwiceMaxmemoryPlus64MiB() throws Exception {
    assertThat(flags(Map.of(), "--maxmemory", "100mb")).contains("-Xmx264m").doesNotContain("-Xmx6g");
    assertThat(flags(Map.of(), "--maxmemory=1gb")).contains("-Xmx2112m");
    assertThat(flags(Map.of(), "--port", "6390", "--MAXMEMORY", "1000000")).contains("-Xmx66m");
    assertThat(flags(Map.of(), "--maxmemory", "2g")).contains("-Xmx3879m"); // 2e9 bytes, rounded up to MiB
  }

  @Test
  void maxmemoryComesFromTheFileThenTheEnvironmentThenTheFlags() throws Exception {
    Path conf = Files.writeString(dir.resolve("bloomery.conf"),
        "# maxmemory 1gb\nport 6390\n  maxmemory \"32mb\"\n");
    assertThat(flags(Map.of(), conf.toString())).contains("-Xmx128m");
    assertThat(flags(Map.of("BLOOMERY_MAXMEMORY", "64mb"), conf.toString())).contains("-Xmx192m");
    assertThat(flags(Map.of("BLOOMERY_MAXMEMORY", "64mb"), conf.toString(), "--maxmemory", "16mb"))
        .contains("-Xmx96m");
  }

  @Test
  void withoutMaxmemoryTheHeapFollowsTheMachinesMemory() throws Exception {
    for (List<String> flags : List.of(flags(Map.of()), flags(Map.of(), "--maxmemory", "0"),
        flags(Map.of(), "--maxmemory", "lots"))) {
      assertThat(flags).contains("-XX:MaxRAMPercentage=75").noneMatch(f -> f.startsWith("-Xmx"));
    }
  }

  @Test
  void theCollectorGivesMemoryBack() throws Exception {
    assertThat(flags(Map.of(), "--maxmemory", "100mb")).contains("-XX:+UseG1GC", "-XX:G1PeriodicGCInterval=15000",
        "-XX:MaxHeapFreeRatio=30").noneMatch(f -> f.contains("ParallelGC"));
    assertThat(flags(Map.of(), "--maxmemory", "100mb")).contains("-XX:TrimNativeHeapInterval=5000");
  }

  /** This JDK (the one the launchers run, Temurin 25) starts with every flag the script gives. */
  @Test
  void theJvmAcceptsEveryFlag() throws Exception {
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString()));
    command.addAll(flags(Map.of(), "--maxmemory", "100mb"));
    command.add("-version");
    Process java = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(java.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(java.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(java.exitValue()).as(out).isZero();
  }

  @Test
  void theAotCacheIsPassedWhenItLiesBesideTheJarAndIsNotOlder() throws Exception {
    Path jar = Files.writeString(dir.resolve("bloomery.jar"), "jar");
    assertThat(flags(Map.of())).noneMatch(f -> f.startsWith("-XX:AOTCache"));
    Path aot = Files.writeString(dir.resolve("bloomery.aot"), "cache");
    Files.setLastModifiedTime(jar, FileTime.fromMillis(1_000_000_000_000L));
    Files.setLastModifiedTime(aot, FileTime.fromMillis(1_000_000_001_000L));
    assertThat(flags(Map.of())).contains("-XX:AOTCache=" + aot);
    Files.setLastModifiedTime(jar, FileTime.fromMillis(1_000_000_002_000L)); // the jar was rebuilt since
    assertThat(flags(Map.of())).noneMatch(f -> f.startsWith("-XX:AOTCache"));
  }
}
