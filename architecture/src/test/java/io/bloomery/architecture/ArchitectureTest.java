package io.bloomery.architecture;

import static com.tngtech.archunit.library.freeze.FreezingArchRule.freeze;

import com.tngtech.archunit.core.domain.JavaClasses;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Checks {@link ArchitectureRules} over every module's classes. The two rules that the code base breaks today
 * (package cycles, one upward call inside the server) are frozen: the violations recorded under
 * {@code src/test/resources/frozen-violations} pass, any other fails. Fixing a recorded one and running with
 * {@code -Darchunit.freeze.refreeze=true} shrinks the record; CI never writes it.
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
  void noPackageCycleBeyondTheRecordedOnes() {
    freeze(ArchitectureRules.NO_PACKAGE_CYCLES).check(classes);
  }

  @Test
  void serverLayersDependDownwardBeyondTheRecordedExceptions() {
    freeze(ArchitectureRules.SERVER_LAYERS).check(classes);
  }
}
