package io.bloomery.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.pattern.ClassicConverter;
import ch.qos.logback.classic.pattern.ThrowableProxyConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import io.bloomery.guard.Credentials;
import org.slf4j.LoggerFactory;

/**
 * The command's log lines on stderr: credentials redacted (through {@link Credentials#redact}, the
 * guard's one redaction helper) in messages and stack traces, and one line per event unless
 * {@code --verbose}. {@link LogConfigurator} uses the two converters; {@link #configure} switches the
 * verbose form on: stack traces and the connection pool's own warnings, which are otherwise off
 * (the command's one-line error already says what failed).
 */
public final class LogRedaction {
  private static volatile boolean verbose;

  private LogRedaction() {}

  /** Chooses the concise (default) or verbose form. */
  static void configure(boolean verboseOutput) {
    verbose = verboseOutput;
    if (LoggerFactory.getILoggerFactory() instanceof LoggerContext context) {
      context.getLogger("com.zaxxer.hikari").setLevel(verboseOutput ? Level.WARN : Level.OFF);
    }
  }

  /** {@code %redactedMsg}: the formatted message with credentials redacted. */
  public static final class Message extends ClassicConverter {
    @Override
    public String convert(ILoggingEvent event) {
      return Credentials.redact(event.getFormattedMessage());
    }
  }

  /**
   * {@code %redactedEx}: nothing by default (one line per event); with {@code --verbose} the stack
   * trace, credentials redacted from every message in it.
   */
  public static final class StackTrace extends ThrowableProxyConverter {
    @Override
    protected String throwableProxyToString(IThrowableProxy proxy) {
      return verbose ? Credentials.redact(super.throwableProxyToString(proxy)) : "";
    }
  }
}
