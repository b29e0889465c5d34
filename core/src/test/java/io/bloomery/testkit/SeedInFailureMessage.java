package io.bloomery.testkit;

import java.util.List;
import java.util.Optional;
import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.PropagationMode;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;

/**
 * Puts the seed of a failing jqwik property into its failure message, where Surefire prints it on the console.
 *
 * <p>jqwik reports the seed in a separate report (on standard output, or as a JUnit Platform report entry); Surefire
 * sends the first to a file ({@code redirectTestOutputToFile}) and prints neither, so a red build showed the
 * assertion but not how to reproduce it. This hook wraps the failure in an {@link AssertionError} naming the seed and
 * the falsified sample, with the original failure as its cause (its stack trace stays in the output).
 *
 * <p>Registered for every module through {@code META-INF/services/net.jqwik.api.lifecycle.LifecycleHook} in core's
 * test jar, which every module's tests depend on.
 */
public final class SeedInFailureMessage implements AroundPropertyHook {

  @Override
  public PropertyExecutionResult aroundProperty(PropertyLifecycleContext context, PropertyExecutor property) {
    PropertyExecutionResult result = property.execute();
    if (result.status() != PropertyExecutionResult.Status.FAILED) {
      return result;
    }
    Optional<Throwable> cause = result.throwable();
    String seed = result.seed().orElse("unknown");
    String message = "property failed after " + result.countTries() + " tries with jqwik seed " + seed
        + " (rerun it with @Property(seed = \"" + seed + "\")); falsified sample "
        + result.falsifiedParameters().map(List::toString).orElse("unknown")
        + cause.map(failure -> ": " + failure).orElse("");
    return result.mapToFailed(new AssertionError(message, cause.orElse(null)));
  }

  /** Registered globally, that is on the engine: it must propagate to every container and property below. */
  @Override
  public PropagationMode propagateTo() {
    return PropagationMode.ALL_DESCENDANTS;
  }

  /** Outermost, so that the message describes the property's final result. */
  @Override
  public int aroundPropertyProximity() {
    return -100;
  }
}
