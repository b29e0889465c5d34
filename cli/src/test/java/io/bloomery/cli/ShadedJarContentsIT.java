package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What {@code cli/target/bloomery.jar} bundles: every bundled jar's licence and notice files (none overwritten by
 * another's), Bloomery's own at the top, SQLite natives for the supported platforms only, and no pre-release
 * library.
 */
class ShadedJarContentsIT {
  private static final Pattern LICENCE_FILE = Pattern.compile("META-INF/(LICENSE|NOTICE)(\\.txt|\\.md)?");
  private static final Pattern SQLITE_NATIVE = Pattern.compile("org/sqlite/native/([^/]+/[^/]+)/[^/]+");
  private static final Set<String> SQLITE_PLATFORMS =
      Set.of("Linux/x86_64", "Linux/aarch64", "Linux-Musl/x86_64", "Linux-Musl/aarch64", "Mac/x86_64", "Mac/aarch64");

  private static JarFile jar;
  private static List<Path> classpath;

  @BeforeAll
  static void open() throws IOException {
    jar = new JarFile(Path.of(System.getProperty("bloomery.jar")).toFile());
    classpath = new ArrayList<>();
    String listed = Files.readString(Path.of(System.getProperty("bloomery.runtimeClasspath")), StandardCharsets.UTF_8);
    for (String entry : listed.strip().split(java.io.File.pathSeparator)) {
      Path path = Path.of(entry);
      // third-party jars only: Bloomery's own modules carry its LICENSE and NOTICE, which are the jar's top-level ones
      if (entry.endsWith(".jar") && Files.isRegularFile(path) && !path.getFileName().toString().startsWith("bloomery-")) {
        classpath.add(path);
      }
    }
    assertThat(classpath).as("the runtime class path of bloomery-cli").hasSizeGreaterThan(10);
  }

  @Test
  void everyBundledLicenceAndNotice_isKeptByteForByte() throws IOException {
    List<String> checked = new ArrayList<>();
    for (Path dependency : classpath) {
      try (JarFile source = new JarFile(dependency.toFile())) {
        if (!bundled(source)) {
          continue;
        }
        for (JarEntry entry : Collections.list(source.entries())) {
          if (!LICENCE_FILE.matcher(entry.getName()).matches()) {
            continue;
          }
          byte[] expected = read(source, entry);
          String kept = keptCopy(entry.getName(), expected);
          assertThat(kept).as("%s of %s in bloomery.jar under META-INF/licenses/", entry.getName(),
              dependency.getFileName()).isNotNull();
          checked.add(dependency.getFileName() + "!" + entry.getName());
        }
      }
    }
    // Files that used to overwrite one another at META-INF/: slf4j's and HdrHistogram's LICENSE.txt, PostgreSQL's
    // LICENSE, and Micrometer's LICENSE and NOTICE (one pair in each of its jars).
    assertThat(checked).anyMatch(s -> s.startsWith("slf4j-api-") && s.endsWith("!META-INF/LICENSE.txt"))
        .anyMatch(s -> s.startsWith("HdrHistogram-") && s.endsWith("!META-INF/LICENSE.txt"))
        .anyMatch(s -> s.startsWith("postgresql-") && s.endsWith("!META-INF/LICENSE"))
        .anyMatch(s -> s.startsWith("micrometer-core-") && s.endsWith("!META-INF/NOTICE"));
  }

  @Test
  void bloomerysOwnLicenceAndNotice_areAtTheTop() throws IOException {
    Path root = Path.of(System.getProperty("bloomery.jar")).toAbsolutePath().getParent().getParent().getParent();
    assertThat(read(jar, jar.getJarEntry("META-INF/LICENSE"))).isEqualTo(Files.readAllBytes(root.resolve("LICENSE")));
    assertThat(read(jar, jar.getJarEntry("META-INF/NOTICE"))).isEqualTo(Files.readAllBytes(root.resolve("NOTICE")));
    assertThat(new String(read(jar, jar.getJarEntry("META-INF/LICENSE")), StandardCharsets.UTF_8))
        .contains("Apache License", "Version 2.0, January 2004");
  }

  @Test
  void sqliteNatives_areThoseOfTheSupportedPlatforms() {
    Set<String> platforms = new TreeSet<>();
    for (JarEntry entry : Collections.list(jar.entries())) {
      var matcher = SQLITE_NATIVE.matcher(entry.getName());
      if (matcher.matches()) {
        platforms.add(matcher.group(1));
      }
    }
    assertThat(platforms).isEqualTo(new TreeSet<>(SQLITE_PLATFORMS));
  }

  @Test
  void noPreReleaseLibrary_isBundled() throws IOException {
    List<String> versions = new ArrayList<>();
    for (Path dependency : classpath) {
      try (JarFile source = new JarFile(dependency.toFile())) {
        if (bundled(source)) {
          // a jar in a Maven repository lies in GROUP/ARTIFACT/VERSION/
          versions.add(dependency.getParent().getParent().getFileName() + ":" + dependency.getParent().getFileName());
        }
      }
    }
    assertThat(versions).hasSizeGreaterThan(10).anyMatch(v -> v.startsWith("netty-common:"))
        .noneMatch(v -> v.matches("(?i).*[-.](alpha|beta|rc|m|milestone|pre|snapshot)[-.]?\\d*$"));
  }

  /** Whether {@code source}'s classes went into bloomery.jar (its first class file is there). */
  private static boolean bundled(JarFile source) {
    return Collections.list(source.entries()).stream()
        .filter(e -> e.getName().endsWith(".class") && !e.getName().endsWith("module-info.class"))
        .findFirst().map(e -> jar.getJarEntry(e.getName()) != null).orElse(false);
  }

  /** The name of an entry under META-INF/licenses/ ending in {@code name} with exactly {@code bytes}, else null. */
  private static String keptCopy(String name, byte[] bytes) throws IOException {
    for (JarEntry entry : Collections.list(jar.entries())) {
      if (entry.getName().startsWith("META-INF/licenses/") && entry.getName().endsWith("/" + name)
          && Arrays.equals(read(jar, entry), bytes)) {
        return entry.getName();
      }
    }
    return null;
  }

  private static byte[] read(JarFile file, JarEntry entry) throws IOException {
    assertThat(entry).isNotNull();
    try (InputStream in = file.getInputStream(entry)) {
      return in.readAllBytes();
    }
  }
}
