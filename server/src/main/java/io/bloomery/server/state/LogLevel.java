package io.bloomery.server.state;

import ch.qos.logback.classic.Level;
import java.util.List;
import java.util.Locale;
import org.slf4j.LoggerFactory;

/**
 * Redis's {@code loglevel} names and what they set: the level of the server's and the guard's loggers
 * ({@code io.bloomery}) in Logback, whatever the logging configuration file says, since the option is the operator's
 * way to ask for more or less. {@code debug} and {@code verbose} log per-client events and the stack traces of
 * unexpected errors, {@code notice} (the default) start-up, shutdown and clients closed for errors, {@code warning}
 * only warnings, {@code nothing} nothing.
 */
public final class LogLevel {
  /** Every name {@code loglevel} takes. */
  public static final List<String> NAMES = List.of("debug", "verbose", "notice", "warning", "nothing");

  /** The logger whose level {@code loglevel} sets: every logger of the server and the guard. */
  public static final String LOGGERS = "io.bloomery";

  private LogLevel() {}

  /**
   * The canonical name of {@code text} (case-insensitive, surrounding blanks ignored).
   *
   * @throws IllegalArgumentException naming the names it takes, for anything else
   */
  public static String parse(String text) {
    String s = text.strip().toLowerCase(Locale.ROOT);
    if (!NAMES.contains(s)) {
      throw new IllegalArgumentException("loglevel must be debug, verbose, notice, warning or nothing, not '" + text
          + "'");
    }
    return s;
  }

  /** Sets the level of {@link #LOGGERS} from a name {@link #parse} accepted. */
  public static void apply(String loglevel) {
    if (LoggerFactory.getLogger(LOGGERS) instanceof ch.qos.logback.classic.Logger logger) {
      logger.setLevel(switch (loglevel) {
        case "debug", "verbose" -> Level.DEBUG;
        case "warning" -> Level.WARN;
        case "nothing" -> Level.OFF;
        default -> Level.INFO;
      });
    }
  }
}
