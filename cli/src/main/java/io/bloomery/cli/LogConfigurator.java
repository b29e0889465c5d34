package io.bloomery.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.PatternLayout;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ConfiguratorRank;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.LayoutWrappingEncoder;
import ch.qos.logback.core.spi.ContextAwareBase;
import org.slf4j.Logger;

/**
 * The bloomery command's logging (the server's included), set up in code rather than by logback's XML configurator,
 * whose parsing (an XML parser, several hundred classes of logback's configuration framework) cost a start of
 * {@code bloomery serve} more CPU than the server's own setup: one line per event on stderr (stdout carries data,
 * e.g. dedup's new items, and the server's Ready line), {@code HH:mm:ss.SSS LEVEL Logger - message}, credentials
 * redacted and stack traces only with {@code --verbose} ({@link LogRedaction}); {@code io.bloomery} at INFO, the
 * connection pool off, everything else at WARN.
 *
 * <p>Logback finds it through {@code META-INF/services} and runs it before its XML configurator, which it then
 * skips. With {@code -Dlogback.configurationFile=FILE} it does nothing, and that file configures logback.
 */
@ConfiguratorRank(ConfiguratorRank.CUSTOM_NORMAL_PRIORITY)
public final class LogConfigurator extends ContextAwareBase implements Configurator {
  /** The pattern of every line. */
  static final String PATTERN = "%d{HH:mm:ss.SSS} %-5level %logger{0} - %redactedMsg%n%redactedEx";

  @Override
  public ExecutionStatus configure(LoggerContext context) {
    if (System.getProperty("logback.configurationFile") != null) {
      return ExecutionStatus.INVOKE_NEXT_IF_ANY;
    }
    PatternLayout layout = new PatternLayout();
    layout.setContext(context);
    layout.getInstanceConverterMap().put("redactedMsg", LogRedaction.Message::new);
    layout.getInstanceConverterMap().put("redactedEx", LogRedaction.StackTrace::new);
    layout.setPattern(PATTERN);
    layout.start();
    LayoutWrappingEncoder<ILoggingEvent> encoder = new LayoutWrappingEncoder<>();
    encoder.setContext(context);
    encoder.setLayout(layout);
    encoder.start();
    ConsoleAppender<ILoggingEvent> stderr = new ConsoleAppender<>();
    stderr.setContext(context);
    stderr.setName("STDERR");
    stderr.setTarget("System.err");
    stderr.setEncoder(encoder);
    stderr.start();
    context.getLogger("io.bloomery").setLevel(Level.INFO);
    context.getLogger("com.zaxxer.hikari").setLevel(Level.OFF);
    ch.qos.logback.classic.Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    root.setLevel(Level.WARN);
    root.addAppender(stderr);
    return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
  }
}
