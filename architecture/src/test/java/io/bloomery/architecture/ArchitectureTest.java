package io.bloomery.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Checks {@link ArchitectureRules} over every module's classes; the dependencies the code base breaks them with
 * today are listed, each with its reason, in {@link ArchitectureRules#KNOWN_UPWARD_DEPENDENCIES}.
 */
class ArchitectureTest {
  private static JavaClasses classes;

  @BeforeAll
  static void importClasses() {
    classes = ArchitectureRules.productClasses();
  }

  @Test
  void modulesDependOnlyOnTheModulesBelowThem() {
    ArchitectureRules.MODULES_DEPEND_DOWNWARD.check(classes);
  }

  @Test
  void coreUsesNoIoFramework() {
    ArchitectureRules.CORE_HAS_NO_IO_FRAMEWORK.check(classes);
  }

  @Test
  void coreInternalIsUsedOnlyByCore() {
    ArchitectureRules.CORE_INTERNAL_STAYS_IN_CORE.check(classes);
  }

  @Test
  void coreInternalNamesNoKind() {
    ArchitectureRules.CORE_INTERNAL_NAMES_NO_KIND.check(classes);
  }

  @Test
  void noPackageCycles() {
    ArchitectureRules.NO_PACKAGE_CYCLES.check(classes);
  }

  @Test
  void cliUsesOnlyWhatTheServerExports() {
    assertThat(ArchitectureRules.serverExports()).contains("io.bloomery.server");
    ArchitectureRules.CLI_USES_ONLY_SERVER_EXPORTS.check(classes);
  }

  @Test
  void serverLayersDependDownward() {
    ArchitectureRules.SERVER_LAYERS.check(classes);
  }
}
