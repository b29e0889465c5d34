package io.bloomery.cli;

import java.io.Console;
import java.lang.reflect.Method;

/** Whether the process talks to a person at a terminal (progress bars are drawn only then). */
final class Terminal {
  private Terminal() {}

  /**
   * True when the JVM has an interactive console. From JDK 22 {@code System.console()} also returns a
   * console for redirected streams, so {@code Console.isTerminal()} is asked when it exists (the CLI
   * compiles to release 21, hence the reflective call).
   */
  static boolean isInteractive() {
    Console console = System.console();
    if (console == null) {
      return false;
    }
    try {
      Method isTerminal = Console.class.getMethod("isTerminal");
      return (Boolean) isTerminal.invoke(console);
    } catch (NoSuchMethodException e) {
      return true;
    } catch (ReflectiveOperationException | RuntimeException e) {
      return false;
    }
  }
}
