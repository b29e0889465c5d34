package io.bloomery.release;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The release, short of Maven Central: {@code mvn -Prelease deploy} with signing skipped puts the parent, the BOM,
 * core, guard and spark (each jar with its sources and javadoc jars) into a file repository under target/, and a
 * user's project outside the reactor ({@code src/it/quickstart}: imports the BOM, depends on bloomery-core) resolves
 * them from there and runs the README's ten lines.
 */
class ReleaseRepositoryIT {
  private static final Path ROOT = Path.of(System.getProperty("bloomery.root")).toAbsolutePath().normalize();
  private static final Path TARGET = Path.of(System.getProperty("bloomery.target")).toAbsolutePath();
  private static final String VERSION = System.getProperty("bloomery.version");
  private static final Path REPO = TARGET.resolve("release-repo");
  private static final Path M2 = Path.of(System.getProperty("user.home"), ".m2", "repository");
  private static final List<String> PUBLISHED_JARS = List.of("bloomery-core", "bloomery-guard", "bloomery-spark_2.13");

  @BeforeAll
  static void deploy() throws Exception {
    deleteRecursively(REPO);
    // Not offline: the deploy plugin refuses to run offline (it downloads nothing here, the outer build has resolved
    // everything). Never into ~/.m2 (maven.install.skip).
    run(ROOT, TARGET.resolve("deploy.log"), "-Prelease", "-Dgpg.skip", "-DskipTests", "-Dmaven.install.skip=true",
        "-DaltDeploymentRepository=bloomery-release::" + REPO.toUri(),
        "-pl", ":bloomery-bom,:bloomery-core,:bloomery-guard,:bloomery-spark_2.13", "-am", "deploy");
  }

  /**
   * Removes what the deploy left in ~/.m2: the file repository's metadata cached under its id (no artifact is ever
   * installed there), so the shared local repository holds nothing of io.bloomery afterwards.
   */
  @AfterAll
  static void forgetTheFileRepository() throws IOException {
    Path group = M2.resolve("io/bloomery");
    if (!Files.isDirectory(group)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(group)) {
      for (Path path : paths.sorted((a, b) -> b.getNameCount() - a.getNameCount()).toList()) {
        String name = path.getFileName().toString();
        if (name.equals("maven-metadata-bloomery-release.xml") || name.equals("resolver-status.properties")
            || (Files.isDirectory(path) && isEmpty(path))) {
          Files.delete(path);
        }
      }
    }
  }

  private static boolean isEmpty(Path dir) throws IOException {
    try (Stream<Path> entries = Files.list(dir)) {
      return entries.findAny().isEmpty();
    }
  }

  @Test
  void theRepository_holdsThePublishedModules_withSourcesAndJavadoc() throws IOException {
    Path group = REPO.resolve("io/bloomery");
    try (Stream<Path> modules = Files.list(group)) {
      assertThat(modules.map(p -> p.getFileName().toString()).sorted().toList()).containsExactly(
          "bloomery-bom", "bloomery-core", "bloomery-guard", "bloomery-parent", "bloomery-spark_2.13");
    }
    byte[] licence = Files.readAllBytes(ROOT.resolve("LICENSE"));
    for (String artifact : PUBLISHED_JARS) {
      Path dir = group.resolve(artifact).resolve(VERSION);
      List<String> files = files(dir);
      for (String suffix : List.of(".jar", ".pom", "-sources.jar", "-javadoc.jar")) {
        assertThat(files).as("%s %s", artifact, suffix).anyMatch(f -> f.endsWith(suffix) && !f.endsWith("-tests.jar"));
      }
      String jar = files.stream().filter(f -> f.endsWith(".jar") && !f.matches(".*-(sources|javadoc|tests)\\.jar"))
          .reduce((a, b) -> b).orElseThrow();
      try (JarFile classes = new JarFile(dir.resolve(jar).toFile())) {
        assertThat(classes.getInputStream(classes.getJarEntry("META-INF/LICENSE")).readAllBytes()).as(jar)
            .isEqualTo(licence);
        assertThat(classes.getJarEntry("META-INF/NOTICE")).as(jar).isNotNull();
      }
    }
    String parent = newest(group.resolve("bloomery-parent").resolve(VERSION), ".pom");
    String bom = newest(group.resolve("bloomery-bom").resolve(VERSION), ".pom");
    for (String pom : List.of(parent, bom)) {
      assertThat(pom).contains("<licenses>", "<name>Apache-2.0</name>", "<url>https://", "<scm", "<developers>",
          "<description>");
    }
    assertThat(bom).contains("<artifactId>bloomery-core</artifactId>", "<artifactId>bloomery-guard</artifactId>",
        "<artifactId>bloomery-spark_2.13</artifactId>").doesNotContain("<parent>");
  }

  @Test
  void aProjectOutsideTheReactor_runsTheReadmeQuickstart_againstIt() throws Exception {
    Path project = TARGET.resolve("quickstart");
    deleteRecursively(project);
    deleteRecursively(TARGET.resolve("quickstart-m2"));
    copyRecursively(ROOT.resolve("release/src/it/quickstart"), project);
    Path settings = TARGET.resolve("quickstart-settings.xml");
    // Its own local repository, so ~/.m2 never caches io.bloomery artifacts; third-party artifacts (Maven's plugins,
    // JUnit, hash4j) come from ~/.m2 read as a file repository, the only protocol allowed while offline.
    Files.writeString(settings, """
        <settings>
          <localRepository>%s</localRepository>
          <profiles><profile><id>user-m2</id>
            <repositories><repository><id>user-m2</id><url>%s</url>
              <releases><checksumPolicy>ignore</checksumPolicy></releases>
              <snapshots><enabled>false</enabled></snapshots></repository></repositories>
            <pluginRepositories><pluginRepository><id>user-m2</id><url>%s</url>
              <releases><checksumPolicy>ignore</checksumPolicy></releases>
              <snapshots><enabled>false</enabled></snapshots></pluginRepository></pluginRepositories>
          </profile></profiles>
          <activeProfiles><activeProfile>user-m2</activeProfile></activeProfiles>
        </settings>
        """.formatted(TARGET.resolve("quickstart-m2"), M2.toUri(), M2.toUri()), StandardCharsets.UTF_8);
    Path log = TARGET.resolve("quickstart.log");
    run(project, log, "-o", "-Daether.offline.protocols=file", "-s", settings.toString(),
        "-Dbloomery.repo=" + REPO.toUri(), "-Dbloomery.version=" + VERSION, "test");
    String output = Files.readString(log, StandardCharsets.UTF_8);
    assertThat(output).contains("Tests run: 1, Failures: 0, Errors: 0, Skipped: 0")
        .containsPattern("Downloaded from bloomery-release: file:\\S*/io/bloomery/bloomery-core/" + Pattern.quote(VERSION)
            + "/bloomery-core-\\S*\\.jar")
        .containsPattern("Downloaded from bloomery-release: file:\\S*/io/bloomery/bloomery-bom/");
    assertThat(TARGET.resolve("quickstart-m2/io/bloomery/bloomery-core")).isDirectory();
  }

  @Test
  void theOutsideProject_runsTheReadmesTenLinesVerbatim() throws IOException {
    String test = Files.readString(ROOT.resolve("release/src/it/quickstart/src/test/java/example/QuickstartTest.java"),
        StandardCharsets.UTF_8);
    Matcher region = Pattern.compile("// region readme-quickstart\n(.*?)\n\\s*// endregion readme-quickstart",
        Pattern.DOTALL).matcher(test);
    assertThat(region.find()).isTrue();
    String readme = Files.readString(ROOT.resolve("README.md"), StandardCharsets.UTF_8);
    assertThat(readme).contains(region.group(1).stripIndent().strip());
  }

  private static void run(Path directory, Path log, String... arguments) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("maven.home"), "bin", "mvn").toString());
    command.add("-B");
    command.add("-Dstyle.color=never");
    command.addAll(List.of(arguments));
    Process process = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true)
        .redirectOutput(log.toFile()).start();
    if (!process.waitFor(15, TimeUnit.MINUTES)) {
      process.destroyForcibly();
      throw new AssertionError("timed out: " + command + " (log: " + log + ")");
    }
    assertThat(process.exitValue()).as("%s in %s exited non-zero; its log ends:%n%s", command, directory, tail(log))
        .isZero();
  }

  private static String tail(Path log) throws IOException {
    List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
    return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
  }

  private static List<String> files(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  /** The text of the newest (timestamped snapshot, or release) file in {@code dir} ending in {@code suffix}. */
  private static String newest(Path dir, String suffix) throws IOException {
    List<String> matching = files(dir).stream().filter(f -> f.endsWith(suffix)).toList();
    assertThat(matching).as("%s*%s", dir, suffix).isNotEmpty();
    return Files.readString(dir.resolve(matching.get(matching.size() - 1)), StandardCharsets.UTF_8);
  }

  private static void copyRecursively(Path from, Path to) throws IOException {
    try (Stream<Path> paths = Files.walk(from)) {
      for (Path path : paths.toList()) {
        Path target = to.resolve(from.relativize(path).toString());
        if (Files.isDirectory(path)) {
          Files.createDirectories(target);
        } else {
          Files.copy(path, target);
        }
      }
    }
  }

  private static void deleteRecursively(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path path : paths.sorted((a, b) -> b.getNameCount() - a.getNameCount()).toList()) {
        Files.delete(path);
      }
    }
  }
}
