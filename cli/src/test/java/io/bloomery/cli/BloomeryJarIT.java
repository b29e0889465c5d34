package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The real shaded {@code cli/target/bloomery.jar} in a subprocess: main class, exit codes, stdin, stderr. */
class BloomeryJarIT {
  @TempDir Path dir;

  record Run(int exitCode, String out, String err) {}

  @Test
  void jar_buildsFromStdin_andReportsErrorsAsOneLine() throws Exception {
    Run version = java(null, "--version");
    assertThat(version.exitCode()).as(version.toString()).isZero();
    assertThat(version.out()).startsWith("bloomery ");

    Path filter = dir.resolve("doc.blmf");
    Run built = java("doc-00\ndoc-01\ndoc-02\ndoc-03\n", "build", "--input", "-", "--output", filter.toString(),
        "--protocol", "sha256-doc-v1", "--seed-hex", "6c6162", "--bits", "16", "--hashes", "3");
    assertThat(built.exitCode()).as(built.toString()).isZero();
    Run info = java(null, "info", filter.toString(), "--json");
    assertThat(info.out()).contains("\"packed_bits_hex\": \"d291\"");

    Run usage = java(null, "plan", "--expected", "1000", "--fpp", "1");
    assertThat(usage.exitCode()).isEqualTo(2);
    assertThat(usage.err()).contains("--fpp");

    Run failure = java(null, "info", dir.resolve("missing").toString());
    assertThat(failure.exitCode()).isEqualTo(1);
    assertThat(failure.err().strip()).isEqualTo("bloomery info: no such file: " + dir.resolve("missing"));
  }

  @Test
  void jar_pipedOutput_carriesOnlyThePlotOrTheData_neverProgress() throws Exception {
    Run plot = java(null, "plan", "--expected", "1000", "--fpp", "0.01", "--plot", "--plot-width", "24", "--plot-height", "5");
    assertThat(plot.exitCode()).as(plot.toString()).isZero();
    try (var golden = BloomeryJarIT.class.getResourceAsStream("/plots/plan-1000-1pct-24x5.txt")) {
      assertThat(plot.out()).isEqualTo(new String(golden.readAllBytes(), StandardCharsets.UTF_8));
    }
    assertThat(plot.err()).isEmpty();

    StringBuilder items = new StringBuilder();
    for (int i = 0; i < 300_000; i++) {
      items.append("item-").append(i).append('\n');
    }
    Path input = dir.resolve("items.txt");
    Files.writeString(input, items);
    Run built = java(null, "build", "--input", input.toString(), "--output", dir.resolve("f.blmf").toString(),
        "--expected", "300000", "--fpp", "0.01");
    assertThat(built.exitCode()).as(built.toString()).isZero();
    assertThat(built.out()).startsWith("wrote ").doesNotContain("\r", "\u001b");
    assertThat(built.out().lines()).hasSize(2);
    assertThat(built.err()).as("no progress bar into a pipe").doesNotContain("\r", "reading");
  }

  private Run java(String stdin, String... args) throws IOException, InterruptedException {
    String jar = System.getProperty("bloomery.jar", "target/bloomery.jar");
    assertThat(Path.of(jar)).as("the shaded jar (built in the package phase)").exists();
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m", "-jar", jar));
    command.addAll(List.of(args));
    Path out = dir.resolve("stdout");
    Path err = dir.resolve("stderr");
    ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile());
    if (stdin == null) {
      builder.redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
    }
    Process process = builder.start();
    try {
      if (stdin != null) {
        process.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
      }
      process.getOutputStream().close();
      assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("finished within a minute").isTrue();
    } finally {
      process.destroyForcibly(); // a no-op once it exited; a hung jar never outlives the test
    }
    return new Run(process.exitValue(), Files.readString(out), Files.readString(err));
  }
}
