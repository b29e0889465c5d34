package io.bloomery.cluster.shard;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.LinkedHashMap;
import java.util.Map;

/** Loopback addresses for a test shard's replicas: ports the kernel handed out free a moment ago. */
final class FreePorts {
  private FreePorts() {}

  /** A group of {@code n} replicas named r1..rN on 127.0.0.1. */
  static ShardGroup group(String shard, int n) {
    Map<String, InetSocketAddress> peers = new LinkedHashMap<>();
    for (int i = 1; i <= n; i++) {
      try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        peers.put("r" + i, InetSocketAddress.createUnresolved("127.0.0.1", s.getLocalPort()));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return new ShardGroup(shard, peers);
  }
}
