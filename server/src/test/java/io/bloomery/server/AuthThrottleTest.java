package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Wrong passwords: after three on a connection, each further reply waits longer, without holding up anyone else. */
class AuthThrottleTest {
  private static final String WRONGPASS = "-WRONGPASS invalid username-password pair or user is disabled.\r\n";

  private static long info(RawClient client, String field) {
    for (String line : client.call("INFO", "stats").split("\r\n")) {
      if (line.startsWith(field + ":")) {
        return Long.parseLong(line.substring(field.length() + 1));
      }
    }
    throw new AssertionError("INFO has no " + field);
  }

  /**
   * Twenty wrong passwords pipelined on one connection, then a PING: the first three are answered at once, the other
   * seventeen only after 10, 20, 40, 80, then 160 ms each (2230 ms in all), in order, with the PING behind them;
   * another client is answered meanwhile, and the right password still works.
   */
  @Test
  void wrongPasswordsAreAnsweredEverLaterWhileOtherClientsAreServed() {
    try (BloomeryServer server = TestServer.start("--requirepass", "right", "--auth-fail-delay", "10");
        RawClient guesser = new RawClient(server.port());
        RawClient other = new RawClient(server.port())) {
      assertThat(other.call("AUTH", "right")).isEqualTo("+OK\r\n");
      ByteArrayOutputStream burst = new ByteArrayOutputStream();
      for (int i = 0; i < 20; i++) {
        burst.writeBytes(RawClient.encode("AUTH", "guess-" + i));
      }
      burst.writeBytes(RawClient.encode("PING"));
      long start = System.nanoTime();
      guesser.send(burst.toByteArray());
      for (int i = 0; i < 3; i++) {
        assertThat(guesser.reply()).isEqualTo(WRONGPASS);
      }
      // the fourth is held back now; the event loop is not: the other client is answered, the throttle counted
      assertThat(other.call("BF.ADD", "k", "x")).isEqualTo(":1\r\n");
      long delayedSoFar = info(other, "auth_failures_delayed");
      assertThat(delayedSoFar).isBetween(1L, 16L);
      for (int i = 3; i < 20; i++) {
        assertThat(guesser.reply()).as("reply %d", i + 1).isEqualTo(WRONGPASS);
      }
      assertThat(guesser.reply()).isEqualTo("-NOAUTH Authentication required.\r\n");
      assertThat(System.nanoTime() - start).as("the server held the replies back")
          .isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(10 + 20 + 40 + 80 + 13 * 160));
      assertThat(info(other, "acl_access_denied_auth")).isEqualTo(20);
      assertThat(info(other, "auth_failures_delayed")).isEqualTo(17);
      try (RawClient fresh = new RawClient(server.port())) {
        assertThat(fresh.call("AUTH", "right")).isEqualTo("+OK\r\n");
        assertThat(fresh.call("BF.EXISTS", "k", "x")).isEqualTo(":1\r\n");
      }
      assertThat(guesser.call("HELLO", "3", "AUTH", "default", "right")).startsWith("%");
      assertThat(guesser.call("PING")).isEqualTo("+PONG\r\n");
    }
  }

  /** Wrong passwords through HELLO count and are held back the same way; RESET does not forget them. */
  @Test
  void helloAndResetDoNotEscapeTheThrottle() {
    try (BloomeryServer server = TestServer.start("--requirepass", "right", "--auth-fail-delay", "10");
        RawClient guesser = new RawClient(server.port());
        RawClient other = new RawClient(server.port())) {
      for (int i = 0; i < 3; i++) {
        assertThat(guesser.call("HELLO", "3", "AUTH", "default", "guess")).isEqualTo(WRONGPASS);
      }
      assertThat(guesser.call("RESET")).isEqualTo("+RESET\r\n");
      assertThat(guesser.call("AUTH", "guess")).isEqualTo(WRONGPASS);
      assertThat(other.call("AUTH", "right")).isEqualTo("+OK\r\n");
      assertThat(info(other, "acl_access_denied_auth")).isEqualTo(4);
      assertThat(info(other, "auth_failures_delayed")).isEqualTo(1);
    }
  }
}
