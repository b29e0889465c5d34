package io.bloomery.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every package of every module's main sources has a {@code package-info.java}: the page that says what the package
 * owns, where to start reading and what it may touch.
 */
class PackageInfoTest {
  @Test
  void everyPackageSaysWhatItOwns() throws IOException {
    Path root = ArchitectureRules.repositoryRoot();
    List<Path> sourceRoots;
    try (Stream<Path> modules = Files.list(root)) {
      sourceRoots = modules.map(m -> m.resolve("src/main/java")).filter(Files::isDirectory).toList();
    }
    assertThat(sourceRoots).as("modules with main sources under %s", root).hasSizeGreaterThanOrEqualTo(6);
    List<String> missing;
    try (Stream<Path> dirs = sourceRoots.stream().flatMap(PackageInfoTest::walk)) {
      missing = dirs.filter(Files::isDirectory)
          .filter(PackageInfoTest::holdsClasses)
          .filter(d -> !Files.isRegularFile(d.resolve("package-info.java")))
          .map(d -> root.relativize(d).toString())
          .sorted()
          .toList();
    }
    assertThat(missing).as("packages without a package-info.java").isEmpty();
  }

  private static Stream<Path> walk(Path dir) {
    try {
      return Files.walk(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static boolean holdsClasses(Path dir) {
    try (Stream<Path> files = Files.list(dir)) {
      return files.anyMatch(f -> f.toString().endsWith(".java") && !f.endsWith("module-info.java"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
