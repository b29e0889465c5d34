package io.bloomery.architecture;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.library.Architectures.LayeredArchitecture;
import com.tngtech.archunit.library.dependencies.SliceRule;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.module.ModuleDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The dependency rules of the code base, one constant per rule. {@link ArchitectureTest} checks them over every
 * module's compiled classes; {@link PlantedViolationTest} shows that each one fails on a class that breaks it.
 *
 * <p>The modules, lowest first: core (filters, formats, no I/O framework) ← guard (a filter in front of a store)
 * ← server (RESP, keyspace, persistence) ← cli (the {@code bloomery} command); spark sits on core alone. Inside the
 * server, the layers are: {@code resp} (the wire protocol) and {@code persistence} (journal, snapshots) at the
 * bottom, {@code keyspace} on persistence, {@code persistence.load} (BF.LOADCHUNK's staged files) and {@code rdb}
 * (Redis's DUMP payloads and RDB files, used by the command families) on the keyspace, {@code state} (server
 * context, settings, statistics) on those, the dispatch ({@code command}) on state, the command families
 * ({@code command.bloom}, {@code command.guard}, ...) on dispatch, {@code net} (RESP connections) and {@code http}
 * (the HTTP port) on dispatch, {@code dashboard} on those, and the root package wiring them together.
 */
final class ArchitectureRules {
  /** Core's packages: the public API and {@code internal}. */
  static final String[] CORE = {
    "io.bloomery.aging..", "io.bloomery.blocked..", "io.bloomery.counting..", "io.bloomery.cuckoo..",
    "io.bloomery.filter..", "io.bloomery.format..", "io.bloomery.fuse..", "io.bloomery.hash..",
    "io.bloomery.internal..", "io.bloomery.plan..", "io.bloomery.scalable..",
    "io.bloomery.sizing..", "io.bloomery.sketch..",
  };

  /** The modules whose classes the rules read, by folder under the repository root. */
  static final List<String> MODULES = List.of("core", "guard", "server", "cluster", "cli", "spark");

  /** Which module may use which: each module only the ones below it. */
  static final ArchRule MODULES_DEPEND_DOWNWARD = layeredArchitecture()
      .consideringOnlyDependenciesInLayers()
      .layer("core").definedBy(CORE)
      .layer("guard").definedBy("io.bloomery.guard..")
      .layer("server").definedBy("io.bloomery.server..")
      .layer("cluster").definedBy("io.bloomery.cluster..")
      .layer("cli").definedBy("io.bloomery.cli..")
      .layer("spark").definedBy("io.bloomery.spark..")
      .whereLayer("cli").mayNotBeAccessedByAnyLayer()
      .whereLayer("spark").mayNotBeAccessedByAnyLayer()
      .whereLayer("cluster").mayOnlyBeAccessedByLayers("cli")
      .whereLayer("server").mayOnlyBeAccessedByLayers("cluster", "cli")
      .whereLayer("guard").mayOnlyBeAccessedByLayers("server", "cluster", "cli")
      .because("a module may use only the modules below it (core <- guard <- server <- cluster <- cli; core <- spark)");

  /** Core runs inside other people's programs: no network, database, logging or engine framework. */
  static final ArchRule CORE_HAS_NO_IO_FRAMEWORK = noClasses().that().resideInAnyPackage(CORE)
      .should().dependOnClassesThat().resideInAnyPackage(
          "io.netty..", "java.sql..", "javax.sql..", "java.net.http..", "org.slf4j..", "ch.qos.logback..",
          "io.micrometer..", "org.apache.spark..", "scala..", "org.postgresql..", "org.sqlite..", "com.zaxxer..",
          "picocli..", "redis.clients..", "io.lettuce..", "com.fasterxml.jackson..", "org.apache.parquet..",
          "com.google.common..")
      .because("core is embedded in crawlers and Spark jobs and must bring no framework with it");

  /** {@code io.bloomery.internal} is core's own; module-info hides it, this also holds on the class path. */
  static final ArchRule CORE_INTERNAL_STAYS_IN_CORE = noClasses().that().resideOutsideOfPackages(CORE)
      .should().dependOnClassesThat().resideInAPackage("io.bloomery.internal..")
      .because("io.bloomery.internal is not exported by core's module-info");

  /**
   * {@code io.bloomery.internal} is the bottom of core: every kind uses it, so it names no kind and no package above
   * the hash protocols. Its access interfaces ({@code KindAccess}) are generic in the kinds they serve.
   */
  static final ArchRule CORE_INTERNAL_NAMES_NO_KIND = noClasses().that().resideInAPackage("io.bloomery.internal..")
      .should().dependOnClassesThat(resideInAnyPackage(CORE)
          .and(not(resideInAnyPackage("io.bloomery.internal..", "io.bloomery.hash.."))))
      .because("every kind uses io.bloomery.internal, so a dependency back on a kind is a package cycle");

  /**
   * The upward dependencies the code has today, each named here so that nothing else may join them. They close
   * every package cycle {@link #NO_PACKAGE_CYCLES} would otherwise report. There are none today: a new entry
   * needs a reason, and removing it again is the way back.
   */
  static final List<Upward> KNOWN_UPWARD_DEPENDENCIES = List.of();

  /** A dependency of a class matching {@code origin} on one matching {@code target}, allowed for now. */
  record Upward(DescribedPredicate<JavaClass> origin, DescribedPredicate<JavaClass> target) {}

  /** No two packages depend on each other, directly or around a loop (beyond the known upward dependencies). */
  static final ArchRule NO_PACKAGE_CYCLES = allowingKnown(slices().matching("io.bloomery.(**)")
      .should().beFreeOfCycles())
      .because("a package cycle means neither package can be read, tested or moved alone");

  /**
   * The cli reaches the server only through the packages the server's {@code module-info} exports, read from its
   * compiled descriptor, so the rule and the descriptor cannot drift apart.
   */
  static final ArchRule CLI_USES_ONLY_SERVER_EXPORTS = noClasses().that().resideInAPackage("io.bloomery.cli..")
      .should().dependOnClassesThat(resideInAPackage("io.bloomery.server..")
          .and(not(resideInAnyPackage(serverExports().toArray(String[]::new)))))
      .because("the server's module-info exports only what the cli needs: " + serverExports());

  /** The server's layers: each package uses only the ones below it. */
  static final ArchRule SERVER_LAYERS = allowingKnown(layeredArchitecture()
      .consideringOnlyDependenciesInLayers()
      .layer("resp").definedBy("io.bloomery.server.resp..")
      .layer("persistence").definedBy("io.bloomery.server.persistence")
      .layer("keyspace").definedBy("io.bloomery.server.keyspace..")
      .layer("file loads").definedBy("io.bloomery.server.persistence.load..")
      .layer("rdb").definedBy("io.bloomery.server.rdb..")
      .layer("state").definedBy("io.bloomery.server.state..")
      .layer("dispatch").definedBy("io.bloomery.server.command")
      .layer("command families").definedBy("io.bloomery.server.command.*..")
      .layer("net").definedBy("io.bloomery.server.net..")
      .layer("http").definedBy("io.bloomery.server.http..")
      .layer("dashboard").definedBy("io.bloomery.server.dashboard..")
      .layer("wiring").definedBy("io.bloomery.server")
      .whereLayer("wiring").mayNotBeAccessedByAnyLayer()
      .whereLayer("net").mayOnlyBeAccessedByLayers("wiring")
      .whereLayer("http").mayOnlyBeAccessedByLayers("dashboard", "wiring")
      .whereLayer("dashboard").mayOnlyBeAccessedByLayers("wiring")
      .whereLayer("command families").mayOnlyBeAccessedByLayers("dashboard", "wiring")
      .whereLayer("dispatch").mayOnlyBeAccessedByLayers("command families", "net", "http", "dashboard", "wiring")
      .whereLayer("state").mayOnlyBeAccessedByLayers("dispatch", "command families", "net", "http", "dashboard",
          "wiring")
      .whereLayer("file loads").mayOnlyBeAccessedByLayers("state", "dispatch", "command families", "wiring")
      .whereLayer("rdb").mayOnlyBeAccessedByLayers("command families", "wiring")
      .whereLayer("keyspace").mayOnlyBeAccessedByLayers("file loads", "rdb", "state", "dispatch", "command families",
          "net", "dashboard", "wiring")
      .whereLayer("persistence").mayOnlyBeAccessedByLayers("keyspace", "file loads", "state", "dispatch",
          "command families", "dashboard", "wiring")
      .whereLayer("resp").mayOnlyBeAccessedByLayers("file loads", "state", "dispatch", "command families", "net",
          "dashboard", "wiring"))
      .because("inside the server a package may use only the layers below it: resp and persistence <- keyspace"
          + " <- persistence.load and rdb <- state <- command (dispatch) <- the command families; dispatch <- net,"
          + " http <- dashboard <- the root package's wiring");

  private ArchitectureRules() {}

  private static SliceRule allowingKnown(SliceRule rule) {
    for (Upward u : KNOWN_UPWARD_DEPENDENCIES) {
      rule = rule.ignoreDependency(u.origin(), u.target());
    }
    return rule;
  }

  private static LayeredArchitecture allowingKnown(LayeredArchitecture rule) {
    for (Upward u : KNOWN_UPWARD_DEPENDENCIES) {
      rule = rule.ignoreDependency(u.origin(), u.target());
    }
    return rule;
  }

  /** The packages the server's compiled {@code module-info} exports. */
  static List<String> serverExports() {
    Path descriptor = productFolders().get(MODULES.indexOf("server")).resolve("module-info.class");
    try (InputStream in = Files.newInputStream(descriptor)) {
      return ModuleDescriptor.read(in).exports().stream().map(ModuleDescriptor.Exports::source).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + descriptor, e);
    }
  }

  /** Every module's main classes, read from its {@code target/classes} (the reactor builds them first). */
  static JavaClasses productClasses() {
    return new ClassFileImporter().importPaths(productFolders());
  }

  /** The {@code target/classes} folder of every module in {@link #MODULES}. */
  static List<Path> productFolders() {
    Path root = repositoryRoot();
    List<Path> folders = new ArrayList<>();
    for (String module : MODULES) {
      Path classes = root.resolve(module).resolve("target").resolve("classes");
      if (!Files.isDirectory(classes.resolve("io").resolve("bloomery"))) {
        throw new IllegalStateException("no compiled classes in " + classes + ": build the module first (mvn verify"
            + " from the repository root builds every module before this one)");
      }
      folders.add(classes);
    }
    return folders;
  }

  static Path repositoryRoot() {
    Path here = Path.of("").toAbsolutePath();
    for (Path p = here; p != null; p = p.getParent()) {
      if (Files.isDirectory(p.resolve("architecture")) && Files.isRegularFile(p.resolve("pom.xml"))
          && Files.isDirectory(p.resolve("core"))) {
        return p;
      }
    }
    throw new IllegalStateException("the repository root is not above " + here);
  }
}
