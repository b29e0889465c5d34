package io.bloomery.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.bloomery.filter.DumpRejectedException;
import io.bloomery.filter.FilterFullException;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;

/** The reason of the exception an operation throws, failing the test if it throws none or another type. */
public final class Rejections {
  private Rejections() {}

  /** Why {@code load} rejected a dump header or chunk. */
  public static DumpRejectedException.Reason dumpReason(ThrowingCallable load) {
    DumpRejectedException e = catchThrowableOfType(DumpRejectedException.class, load);
    assertThat(e).as("a DumpRejectedException").isNotNull();
    return e.reason();
  }

  /** Why {@code add} was refused. */
  public static FilterFullException.Reason fullReason(ThrowingCallable add) {
    FilterFullException e = catchThrowableOfType(FilterFullException.class, add);
    assertThat(e).as("a FilterFullException").isNotNull();
    return e.reason();
  }
}
