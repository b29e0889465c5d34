package io.bloomery.server.state;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** A kind of client-caused event logs a bounded number of lines per window, then says how many it dropped. */
class RateLimitedLogTest {

  @Test
  void linesPastTheWindowsBudgetAreCountedAndSummarizedByTheNextLine() {
    Logger logger = (Logger) LoggerFactory.getLogger("test.RateLimitedLog");
    logger.setLevel(Level.INFO);
    ListAppender<ILoggingEvent> lines = new ListAppender<>();
    lines.start();
    logger.addAppender(lines);
    try {
      AtomicLong now = new AtomicLong(1_000);
      RateLimitedLog log = new RateLimitedLog(logger, org.slf4j.event.Level.WARN, "protocol error", now::get);
      for (int i = 0; i < 25; i++) {
        log.log("event {}", i);
      }
      assertThat(messages(lines)).hasSize(RateLimitedLog.LINES_PER_WINDOW).endsWith("event 9");
      now.addAndGet(TimeUnit.SECONDS.toNanos(RateLimitedLog.WINDOW_SECONDS) - 1);
      log.log("event {}", 25);
      assertThat(messages(lines)).hasSize(RateLimitedLog.LINES_PER_WINDOW);
      now.addAndGet(1);
      log.log("event {}", 26);
      assertThat(messages(lines)).hasSize(RateLimitedLog.LINES_PER_WINDOW + 2)
          .endsWith("suppressed 16 protocol error lines since the last one logged", "event 26");
      log.log("event {}", 27);
      assertThat(messages(lines)).last().isEqualTo("event 27");
      assertThat(lines.list).allMatch(e -> e.getLevel() == Level.WARN);
    } finally {
      logger.detachAppender(lines);
    }
  }

  private static List<String> messages(ListAppender<ILoggingEvent> lines) {
    return lines.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
  }
}
