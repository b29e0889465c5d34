package io.bloomery.server;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** Base of test classes that share one in-process server (ephemeral ports, no persistence) for all their tests. */
abstract class SharedServerTest {
  static BloomeryServer server;

  @BeforeAll
  static void startServer() {
    server = TestServer.start();
  }

  @AfterAll
  static void stopServer() {
    server.close();
  }
}
