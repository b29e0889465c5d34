package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shaded jar as a shell runs it, for what only a real process shows: {@code /dev/full}, a pipe to
 * {@code head -1}, a closed stdin ({@code <&-}), a file-size limit standing in for a full disk, and the
 * umask, a heap too small for the job. Each command runs under {@code bash -c}; the generous wait is a
 * hang guard, not a timing claim.
 */
class JarInAShellIT {
  @TempDir Path dir;
  private Path filter;

  record Run(int exitCode, String out, String err) {}

  @BeforeEach
  void setUp() throws Exception {
    Files.writeString(dir.resolve("items.txt"), "a\nb\nc\n");
    filter = dir.resolve("f.blmf");
    Run built = bash("$BLOOMERY build --input items.txt --output f.blmf --expected 1000 --fpp 0.01");
    assertThat(built.exitCode()).as(built.toString()).isZero();
  }

  @Test
  void everyCommandWritingToDevFull_exits1_withOneLine() throws Exception {
    for (String command : List.of(
        "plan --expected 1M --fpp 0.01",
        "plan --expected 1M --fpp 0.01 --json",
        "info f.blmf --json",
        "info f.blmf",
        "query f.blmf --input items.txt",
        "build --input items.txt --output g.blmf --expected 1000 --fpp 0.01",
        "--version")) {
      Run run = bash("$BLOOMERY " + command + " >/dev/full");
      assertThat(run.exitCode()).as(command + "\n" + run).isEqualTo(1);
      assertThat(run.err().strip()).as(command).endsWith("cannot write standard output: No space left on device")
          .doesNotContain("\n");
    }
  }

  /**
   * {@code yes} never ends: before the fix the query read it for ever. Now the first write after
   * {@code head} exits fails with EPIPE and the query stops quietly with 141, like {@code yes} itself.
   */
  @Test
  void queryIntoHeadOne_stopsOnTheBrokenPipe_quietly() throws Exception {
    Run run = bash("yes item | $BLOOMERY query f.blmf --input - | head -1; echo \"status ${PIPESTATUS[1]}\" >&2");
    assertThat(run.out()).isEqualTo("absent\titem\n");
    assertThat(run.err().strip()).as(run.toString()).isEqualTo("status 141");
  }

  @Test
  void queryOfABigFileIntoHeadOne_stopsEarly() throws Exception {
    Run run = bash("seq 1 2000000 > big.txt; $BLOOMERY query f.blmf --input big.txt --json | head -3;"
        + " echo \"status ${PIPESTATUS[0]}\" >&2");
    assertThat(run.out()).startsWith("{");
    assertThat(run.err().strip()).as(run.toString()).isEqualTo("status 141");
  }

  @Test
  void closedStdin_isRefused_andNoFilterIsWritten() throws Exception {
    Run run = bash("$BLOOMERY build --input - --output closed.blmf --expected 1M --fpp 0.01 <&-");
    assertThat(run.exitCode()).as(run.toString()).isEqualTo(1);
    assertThat(run.err().strip()).startsWith("bloomery build: standard input is closed");
    assertThat(dir.resolve("closed.blmf")).doesNotExist();
    Run query = bash("$BLOOMERY query f.blmf --input - <&-");
    assertThat(query.exitCode()).isEqualTo(1);
    assertThat(query.out()).isEmpty();
    assertThat(query.err()).contains("standard input is closed");
  }

  @Test
  void stdinFromTheOutputFile_isRefused_andTheItemsSurvive() throws Exception {
    Run run = bash("$BLOOMERY build --input - --output items.txt --expected 1000 --fpp 0.01 < items.txt");
    assertThat(run.exitCode()).as(run.toString()).isEqualTo(2);
    assertThat(Files.readString(dir.resolve("items.txt"))).isEqualTo("a\nb\nc\n");
  }

  /** A file-size limit makes the filter's write fail with EFBIG, as a full disk fails it with ENOSPC. */
  @Test
  void failedFilterWrite_exits1_namesTheFile_andLeavesTheOldOneIntact() throws Exception {
    byte[] before = Files.readAllBytes(filter);
    Run run = bash("ulimit -f 64; $BLOOMERY build --input items.txt --output f.blmf --expected 10M --fpp 0.01");
    assertThat(run.exitCode()).as(run.toString()).isEqualTo(1);
    assertThat(run.err().strip()).startsWith("bloomery build: cannot write f.blmf: File too large").doesNotContain("\n");
    assertThat(Files.readAllBytes(filter)).isEqualTo(before);
    try (var files = Files.list(dir)) {
      assertThat(files.filter(p -> p.getFileName().toString().endsWith(".tmp"))).isEmpty();
    }
  }

  @Test
  void newOutputs_followTheUmask_andReplacedOnesKeepTheirMode() throws Exception {
    Run strict = bash("umask 077; $BLOOMERY build --input items.txt --output strict.blmf --bits 64 --hashes 2");
    assertThat(strict.exitCode()).as(strict.toString()).isZero();
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("strict.blmf")))).isEqualTo("rw-------");
    Run open = bash("printf 'd\\n' > more.txt; umask 022; $BLOOMERY build --input more.txt --output open.blmf --bits 64 --hashes 2");
    assertThat(open.exitCode()).isZero();
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("open.blmf")))).isEqualTo("rw-r--r--");
    Run replaced = bash("chmod 0640 open.blmf; umask 077; $BLOOMERY merge open.blmf strict.blmf --output open.blmf");
    assertThat(replaced.exitCode()).as(replaced.toString()).isZero();
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("open.blmf")))).isEqualTo("rw-r-----");
  }

  @Test
  void noCommand_printsUsageToStderr_andExits2() throws Exception {
    Run run = bash("$BLOOMERY");
    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.out()).isEmpty();
    assertThat(run.err()).startsWith("bloomery: a command is required").contains("Usage: bloomery");
  }

  /**
   * The product jar carries no benchmark harness (no JMH, no Guava): {@code bench} checks its options and
   * then says in one line how to run it. The benchmark itself runs from bench's jar (bench's
   * BenchCommandTest, and {@code ./bloomery bench}).
   */
  @Test
  void bench_inTheProductJar_saysWhereTheBenchmarkIs_andAHugeKeyCountIsStillAUsageError() throws Exception {
    Run one = bash("$BLOOMERY bench --keys 1000 --queries 1000 --rounds 1");
    assertThat(one.exitCode()).as(one.toString()).isEqualTo(1);
    assertThat(one.out()).isEmpty();
    assertThat(one.err().strip()).isEqualTo("bloomery bench: " + BenchCommand.NO_HARNESS);
    Run huge = bash("$BLOOMERY bench --keys 9223372036854775807");
    assertThat(huge.exitCode()).as(huge.toString()).isEqualTo(2);
    assertThat(huge.err().strip()).startsWith("bloomery bench: --keys 9,223,372,036,854,775,807 is more than the benchmark's filters hold")
        .doesNotContain("BloomFilter of").doesNotContain("\n");
  }

  @Test
  void productJar_shipsNoBenchmarkHarness() throws Exception {
    try (JarFile jar = new JarFile(System.getProperty("bloomery.jar", "target/bloomery.jar"))) {
      for (String prefix : List.of("org/openjdk/jmh/", "com/google/common/", "org/apache/commons/math3/",
          "io/bloomery/bench/", "org/checkerframework/")) {
        assertThat(jar.stream().map(JarEntry::getName).filter(name -> name.startsWith(prefix)).findAny())
            .as(prefix).isEmpty();
      }
    }
  }

  /**
   * With a 512 MiB heap, 3M URLs fit the filter and the probes but not the exact HashSet (about 480
   * MB): the step is skipped at once with the heap it would need, instead of running the heap full.
   */
  @Test
  void demo_skipsAHashSetThatCannotFit_andSaysWhatHeapItNeeds() throws Exception {
    Run run = bash("$JAVA -Xmx512m -jar $JAR demo --urls 3M");
    assertThat(run.exitCode()).as(run.toString()).isZero();
    assertThat(run.out()).containsPattern("4\\. exact   HashSet<String> not measured: it would need about [0-9.]+ MiB of heap"
        + " and only [0-9.]+ MiB of the [0-9.]+ MiB maximum is free; rerun with BLOOMERY_JAVA_OPTS=-Xmx1g to measure it");
  }

  /** Before: "out of memory … rerun with -Xmx1g" for a filter that alone needs 1.1 GiB. */
  @Test
  void aFilterLargerThanTheHeap_isRefusedBeforeAllocating_withTheHeapItNeeds() throws Exception {
    Run run = bash("$BLOOMERY build --input items.txt --output huge.blmf --expected 1G --fpp 0.01");
    assertThat(run.exitCode()).as(run.toString()).isEqualTo(1);
    assertThat(run.err().strip()).isEqualTo("bloomery build: a filter of 9,585,058,378 bits needs at least 1.1 GiB of heap;"
        + " the JVM's maximum is 256.0 MiB: rerun with BLOOMERY_JAVA_OPTS=-Xmx2g");
    assertThat(dir.resolve("huge.blmf")).doesNotExist();
  }

  private Run bash(String script) throws IOException, InterruptedException {
    String jar = Path.of(System.getProperty("bloomery.jar", "target/bloomery.jar")).toAbsolutePath().toString();
    assertThat(Path.of(jar)).as("the shaded jar (built in the package phase)").exists();
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    ProcessBuilder builder = new ProcessBuilder("bash", "-c", script).directory(dir.toFile())
        .redirectOutput(dir.resolve(".stdout").toFile()).redirectError(dir.resolve(".stderr").toFile())
        .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
    builder.environment().put("JAVA", java);
    builder.environment().put("JAR", jar);
    builder.environment().put("BLOOMERY", java + " -Xmx256m -jar " + jar);
    Process process = builder.start();
    try {
      assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("finished (hang guard): " + script).isTrue();
    } finally {
      // A hung pipeline's members (java, yes) are bash's children: end them first, while they still are.
      process.descendants().forEach(ProcessHandle::destroyForcibly);
      process.destroyForcibly();
    }
    return new Run(process.exitValue(), Files.readString(dir.resolve(".stdout")), Files.readString(dir.resolve(".stderr")));
  }
}
