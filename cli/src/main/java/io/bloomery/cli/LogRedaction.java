package io.bloomery.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.pattern.ClassicConverter;
import ch.qos.logback.classic.pattern.ThrowableProxyConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.OutputStreamAppender;
import io.bloomery.guard.Credentials;
import java.util.Iterator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The command's log lines on stderr: credentials redacted (through {@link Credentials#redact}, the
 * guard's one redaction helper) in messages and stack traces, and one line per event unless
 * {@code --verbose}. {@code logback.xml} declares the converters; {@link #configure} switches the
 * verbose form on: stack traces and the connection pool's own warnings, which are otherwise off
 * (the command's one-line error already says what failed).
 */
public final class LogRedaction {
  static final String CONCISE = "%d{HH:mm:ss.SSS} %-5level %logger{0} - %redactedMsg%n%nopex";
  static final String VERBOSE = "%d{HH:mm:ss.SSS} %-5level %logger{0} - %redactedMsg%n%redactedEx";

  private LogRedaction() {}

  /** Applies the concise (default) or verbose form to the stderr appender. */
  static void configure(boolean verbose) {
    if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
      return; // another SLF4J backend embeds the command: its configuration rules
    }
    context.getLogger("com.zaxxer.hikari").setLevel(verbose ? Level.WARN : Level.OFF);
    ch.qos.logback.classic.Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    for (Iterator<Appender<ILoggingEvent>> it = root.iteratorForAppenders(); it.hasNext(); ) {
      if (it.next() instanceof OutputStreamAppender<ILoggingEvent> appender) {
        PatternLayoutEncoder encoder = new PatternLayoutEncoder();
        encoder.setContext(context);
        encoder.setPattern(verbose ? VERBOSE : CONCISE);
        encoder.start();
        appender.setEncoder(encoder);
      }
    }
  }

  /** {@code %redactedMsg}: the formatted message with credentials redacted. */
  public static final class Message extends ClassicConverter {
    @Override
    public String convert(ILoggingEvent event) {
      return Credentials.redact(event.getFormattedMessage());
    }
  }

  /** {@code %redactedEx}: the stack trace with credentials redacted from every message in it. */
  public static final class StackTrace extends ThrowableProxyConverter {
    @Override
    protected String throwableProxyToString(IThrowableProxy proxy) {
      return Credentials.redact(super.throwableProxyToString(proxy));
    }
  }
}
