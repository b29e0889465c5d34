package io.bloomery.cluster.shard;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;

/**
 * One shard's Raft group: its name and its replicas' ids and Raft addresses. The group id is derived from the name,
 * so every replica and client that names the shard names the same group.
 *
 * @param shard the shard's name
 * @param peers replica id to the address its Raft port listens on, in a fixed order
 */
public record ShardGroup(String shard, Map<String, InetSocketAddress> peers) {

  public ShardGroup {
    if (shard == null || shard.isEmpty()) {
      throw new IllegalArgumentException("a shard needs a name");
    }
    if (peers.isEmpty()) {
      throw new IllegalArgumentException("shard " + shard + " has no replicas");
    }
    peers = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(peers));
  }

  /**
   * Parses {@code id=host:port,id=host:port,...}.
   *
   * @throws IllegalArgumentException naming the part that is not {@code id=host:port}
   */
  public static ShardGroup parse(String shard, String peers) {
    Map<String, InetSocketAddress> out = new LinkedHashMap<>();
    for (String part : peers.split(",")) {
      int eq = part.indexOf('=');
      int colon = part.lastIndexOf(':');
      if (eq <= 0 || colon <= eq + 1 || colon == part.length() - 1) {
        throw new IllegalArgumentException("'" + part + "' is not id=host:port");
      }
      int port;
      try {
        port = Integer.parseInt(part.substring(colon + 1));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("'" + part + "' has no port number", e);
      }
      if (port < 1 || port > 65535) {
        throw new IllegalArgumentException("'" + part + "': port " + port + " is not in 1..65535");
      }
      String id = part.substring(0, eq);
      if (out.put(id, InetSocketAddress.createUnresolved(part.substring(eq + 1, colon), port)) != null) {
        throw new IllegalArgumentException("replica " + id + " is named twice");
      }
    }
    return new ShardGroup(shard, out);
  }

  /** The Raft group id: a name-based UUID of the shard's name. */
  public RaftGroupId groupId() {
    return RaftGroupId.valueOf(UUID.nameUUIDFromBytes(("bloomery-shard:" + shard).getBytes(StandardCharsets.UTF_8)));
  }

  /** The group as Ratis takes it. */
  public RaftGroup raftGroup() {
    List<RaftPeer> list = new ArrayList<>();
    peers.forEach((id, address) -> list.add(RaftPeer.newBuilder().setId(RaftPeerId.valueOf(id))
        .setAddress(address.getHostString() + ":" + address.getPort()).build()));
    return RaftGroup.valueOf(groupId(), list);
  }
}
