package io.bloomery.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/** Starts an in-process server on ephemeral ports, without persistence. */
final class TestServer {
  private TestServer() {}

  static BloomeryServer start(String... extra) {
    List<String> args = new ArrayList<>(List.of("--port", "0", "--http-port", "0", "--appendonly", "no"));
    args.addAll(List.of(extra));
    try {
      return BloomeryServer.start(ServerConfig.parse(java.util.Map.of(), args.toArray(String[]::new)));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
