package io.bloomery.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.Location;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import io.bloomery.cli.planted.PlantedInternalUse;
import io.bloomery.cli.planted.PlantedServerInternalUse;
import io.bloomery.guard.planted.PlantedServerUse;
import io.bloomery.internal.planted.PlantedKindUse;
import io.bloomery.planted.cycle.a.CycleA;
import io.bloomery.planted.cycle.b.CycleB;
import io.bloomery.server.command.PlantedDispatchUsesFamily;
import io.bloomery.server.resp.planted.PlantedRespUsesKeyspace;
import io.bloomery.server.state.planted.PlantedStateUsesDispatch;
import io.bloomery.sizing.planted.PlantedJdbcUse;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Each rule of {@link ArchitectureRules} fails on a class planted to break it (the planted classes live in this
 * module's tests only) and added to every module's classes, so a rule that could never fail would show here.
 */
class PlantedViolationTest {
  private static JavaClasses withPlanted;

  @Test
  void aCoreClassUsingJdbcBreaksTheCoreRule() {
    assertViolates(ArchitectureRules.CORE_HAS_NO_IO_FRAMEWORK, PlantedJdbcUse.class, "java.sql.Connection");
  }

  @Test
  void guardUsingTheServerBreaksTheModuleRule() {
    assertViolates(ArchitectureRules.MODULES_DEPEND_DOWNWARD, PlantedServerUse.class, "io.bloomery.server");
  }

  @Test
  void cliUsingCoreInternalBreaksTheInternalRule() {
    assertViolates(ArchitectureRules.CORE_INTERNAL_STAYS_IN_CORE, PlantedInternalUse.class, "io.bloomery.internal");
  }

  @Test
  void coreInternalNamingAKindBreaksTheInternalBottomRule() {
    assertViolates(ArchitectureRules.CORE_INTERNAL_NAMES_NO_KIND, PlantedKindUse.class, "io.bloomery.filter.BloomFilter");
  }

  @Test
  void cliUsingAServerPackageNotExportedBreaksTheExportRule() {
    assertViolates(ArchitectureRules.CLI_USES_ONLY_SERVER_EXPORTS, PlantedServerInternalUse.class,
        "io.bloomery.server.state.Settings");
  }

  @Test
  void twoPackagesUsingEachOtherBreakTheCycleRule() {
    JavaClasses both = new ClassFileImporter().importClasses(CycleA.class, CycleB.class);
    EvaluationResult result = ArchitectureRules.NO_PACKAGE_CYCLES.evaluate(both);
    assertThat(result.hasViolation()).isTrue();
    assertThat(String.join("\n", result.getFailureReport().getDetails())).contains("planted.cycle.a", "planted.cycle.b");
    assertThat(ArchitectureRules.NO_PACKAGE_CYCLES.evaluate(new ClassFileImporter().importClasses(CycleB.class))
        .hasViolation()).isFalse();
  }

  @Test
  void theProtocolLayerUsingTheKeyspaceBreaksTheServerLayers() {
    assertViolates(ArchitectureRules.SERVER_LAYERS, PlantedRespUsesKeyspace.class, "io.bloomery.server.keyspace");
  }

  @Test
  void serverStateUsingTheDispatchBreaksTheServerLayers() {
    assertViolates(ArchitectureRules.SERVER_LAYERS, PlantedStateUsesDispatch.class,
        "io.bloomery.server.command.Invocation");
  }

  @Test
  void theDispatchNamingACommandFamilyBreaksTheServerLayers() {
    assertViolates(ArchitectureRules.SERVER_LAYERS, PlantedDispatchUsesFamily.class,
        "io.bloomery.server.command.bloom.BloomCommands");
  }

  /**
   * Evaluates {@code rule} over every module's classes with the planted ones added, and checks that one of the
   * violations is {@code planted}'s use of {@code target} ({@link ArchitectureTest} shows the modules alone keep the
   * rule, or break it only where recorded).
   */
  private static void assertViolates(ArchRule rule, Class<?> planted, String target) {
    JavaClasses classes = withPlanted();
    assertThat(classes.contain(planted)).isTrue();
    assertThat(rule.evaluate(classes).getFailureReport().getDetails())
        .as("%s breaks: %s", planted.getName(), rule.getDescription())
        .anySatisfy(line -> assertThat(line).contains(planted.getName(), target));
  }

  /** Every module's classes and the planted ones, imported once for all cases. */
  private static synchronized JavaClasses withPlanted() {
    if (withPlanted == null) {
      Stream<Class<?>> planted = Stream.of(PlantedJdbcUse.class, PlantedServerUse.class, PlantedInternalUse.class,
          PlantedKindUse.class, PlantedRespUsesKeyspace.class, PlantedStateUsesDispatch.class,
          PlantedDispatchUsesFamily.class, PlantedServerInternalUse.class);
      withPlanted = new ClassFileImporter().importLocations(Stream.concat(
          ArchitectureRules.productFolders().stream().map(Location::of),
          planted.map(PlantedViolationTest::classFile).map(Location::of)).collect(Collectors.toSet()));
    }
    return withPlanted;
  }

  private static Path classFile(Class<?> type) {
    try {
      return Path.of(type.getResource(type.getSimpleName() + ".class").toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }
}
