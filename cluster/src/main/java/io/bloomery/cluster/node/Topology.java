package io.bloomery.cluster.node;

import io.bloomery.cluster.shard.ShardGroup;
import io.bloomery.cluster.slot.HashSlot;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A cluster's layout: its nodes (the address clients use, the bus address their Raft server listens on), its
 * shards (the nodes that replicate each, the slot ranges each serves). Every one of the 16,384 slots belongs to
 * exactly one shard. Written as text lines ({@link #encode}) into the metadata group's log.
 *
 * @param cluster the cluster's id (40 hex digits)
 * @param nodes every node, in the order {@code cluster create} was given them
 * @param shards every shard
 */
public record Topology(String cluster, List<Node> nodes, List<Shard> shards) {

  /** A node: its 40-hex id, the address it announces to clients, the address of its cluster bus (Raft). */
  public record Node(String id, String host, int port, String busHost, int busPort) {
    /** {@code host:port@busport}, as CLUSTER NODES writes an address. */
    String address() {
      return host + ":" + port + "@" + busPort;
    }
  }

  /** An inclusive range of slots. */
  public record SlotRange(int first, int last) {
    public SlotRange {
      if (first < 0 || last >= HashSlot.SLOTS || first > last) {
        throw new IllegalArgumentException("slot range " + first + "-" + last + " is not within 0-16383");
      }
    }
  }

  /** A shard: its name (also its Raft group's), its slot ranges, its members' node ids. */
  public record Shard(String name, List<SlotRange> slots, List<String> members) {
    public Shard {
      slots = List.copyOf(slots);
      members = List.copyOf(members);
    }

    /** How many slots it serves. */
    public int slotCount() {
      return slots.stream().mapToInt(r -> r.last() - r.first() + 1).sum();
    }
  }

  public Topology {
    nodes = List.copyOf(nodes);
    shards = List.copyOf(shards);
    Set<String> ids = new HashSet<>();
    Set<String> addresses = new HashSet<>();
    for (Node n : nodes) {
      if (!ids.add(n.id())) {
        throw new IllegalArgumentException("node " + n.id() + " is listed twice");
      }
      if (!addresses.add(n.host() + ":" + n.port()) || !addresses.add("bus " + n.busHost() + ":" + n.busPort())) {
        throw new IllegalArgumentException("address " + n.host() + ":" + n.port() + " is listed twice");
      }
    }
    int[] owner = new int[HashSlot.SLOTS];
    java.util.Arrays.fill(owner, -1);
    Set<String> members = new HashSet<>();
    for (int s = 0; s < shards.size(); s++) {
      for (String m : shards.get(s).members()) {
        if (!ids.contains(m)) {
          throw new IllegalArgumentException("shard " + shards.get(s).name() + " names unknown node " + m);
        }
        if (!members.add(m)) {
          throw new IllegalArgumentException("node " + m + " is in two shards");
        }
      }
      for (SlotRange r : shards.get(s).slots()) {
        for (int slot = r.first(); slot <= r.last(); slot++) {
          if (owner[slot] >= 0) {
            throw new IllegalArgumentException("slot " + slot + " is in two shards");
          }
          owner[slot] = s;
        }
      }
    }
    for (int slot = 0; slot < owner.length; slot++) {
      if (owner[slot] < 0) {
        throw new IllegalArgumentException("slot " + slot + " belongs to no shard");
      }
    }
  }

  /**
   * Shards of {@code factor} members over {@code nodes} in their order (the first {@code factor} nodes form the
   * first shard, and so on), the slots split evenly in ascending ranges.
   *
   * @throws IllegalArgumentException if the node count is not a positive multiple of {@code factor}
   */
  public static Topology plan(String cluster, List<Node> nodes, int factor) {
    if (factor < 1) {
      throw new IllegalArgumentException("the replication factor must be at least 1, not " + factor);
    }
    if (nodes.isEmpty() || nodes.size() % factor != 0) {
      throw new IllegalArgumentException(nodes.size() + " nodes do not make shards of " + factor + " members: give a "
          + "multiple of " + factor + " nodes");
    }
    int count = nodes.size() / factor;
    List<Shard> shards = new ArrayList<>();
    for (int s = 0; s < count; s++) {
      int first = s * HashSlot.SLOTS / count;
      int last = (s + 1) * HashSlot.SLOTS / count - 1;
      List<String> members = nodes.subList(s * factor, (s + 1) * factor).stream().map(Node::id).toList();
      shards.add(new Shard("s" + s, List.of(new SlotRange(first, last)), members));
    }
    return new Topology(cluster, nodes, shards);
  }

  /**
   * This topology with {@code node} added to the cluster as a member of {@code shard}: what {@code bloomery cluster
   * add-node} asks for.
   *
   * @throws IllegalArgumentException if the shard does not exist, or the node's id or an address is taken
   */
  public Topology withMember(String shard, Node node) {
    if (shard(shard) == null) {
      throw new IllegalArgumentException("no shard " + shard + " (shards: "
          + String.join(", ", shards.stream().map(Shard::name).toList()) + ")");
    }
    List<Node> moreNodes = new ArrayList<>(nodes);
    moreNodes.add(node);
    List<Shard> next = new ArrayList<>();
    for (Shard s : shards) {
      List<String> members = new ArrayList<>(s.members());
      if (s.name().equals(shard)) {
        members.add(node.id());
      }
      next.add(new Shard(s.name(), s.slots(), members));
    }
    return new Topology(cluster, moreNodes, next);
  }

  /**
   * This topology without the node {@code id}: what {@code bloomery cluster del-node} asks for.
   *
   * @throws IllegalArgumentException if no such node is in the cluster, or it is the last member of its shard
   */
  public Topology without(String id) {
    if (node(id) == null) {
      throw new IllegalArgumentException("node " + id + " is not in cluster " + cluster);
    }
    List<Shard> next = new ArrayList<>();
    for (Shard s : shards) {
      List<String> members = new ArrayList<>(s.members());
      if (members.remove(id) && members.isEmpty()) {
        throw new IllegalArgumentException("node " + id + " is the last member of shard " + s.name()
            + ": its slots would have no replica");
      }
      next.add(new Shard(s.name(), s.slots(), members));
    }
    return new Topology(cluster, nodes.stream().filter(n -> !n.id().equals(id)).toList(), next);
  }

  /** The shard named {@code name}, or {@code null}. */
  public Shard shard(String name) {
    for (Shard s : shards) {
      if (s.name().equals(name)) {
        return s;
      }
    }
    return null;
  }

  /**
   * Whether {@code next} differs from this topology only in its nodes and the shards' members: the same cluster, the
   * same shards serving the same slots.
   */
  public boolean sameSlots(Topology next) {
    if (!cluster.equals(next.cluster()) || shards.size() != next.shards().size()) {
      return false;
    }
    for (Shard s : shards) {
      Shard other = next.shard(s.name());
      if (other == null || !other.slots().equals(s.slots())) {
        return false;
      }
    }
    return true;
  }

  /** The node with {@code id}, or {@code null}. */
  public Node node(String id) {
    for (Node n : nodes) {
      if (n.id().equals(id)) {
        return n;
      }
    }
    return null;
  }

  /** The shard that serves {@code slot}. */
  public Shard shardOf(int slot) {
    for (Shard s : shards) {
      for (SlotRange r : s.slots()) {
        if (slot >= r.first() && slot <= r.last()) {
          return s;
        }
      }
    }
    throw new IllegalStateException("slot " + slot + " has no shard");
  }

  /** The shard {@code node} is a member of, or {@code null}. */
  public Shard shardOfNode(String node) {
    for (Shard s : shards) {
      if (s.members().contains(node)) {
        return s;
      }
    }
    return null;
  }

  /** A shard's Raft group: its members' ids and bus addresses. */
  public ShardGroup group(Shard shard) {
    Map<String, InetSocketAddress> peers = new LinkedHashMap<>();
    for (String m : shard.members()) {
      Node n = node(m);
      peers.put(m, InetSocketAddress.createUnresolved(n.busHost(), n.busPort()));
    }
    return new ShardGroup(shard.name(), peers);
  }

  /**
   * One line per fact: {@code cluster ID}, {@code node ID HOST PORT BUSHOST BUSPORT}, {@code shard NAME RANGES
   * MEMBERS}.
   */
  public String encode() {
    StringBuilder out = new StringBuilder("cluster ").append(cluster).append('\n');
    for (Node n : nodes) {
      out.append("node ").append(n.id()).append(' ').append(n.host()).append(' ').append(n.port()).append(' ')
          .append(n.busHost()).append(' ').append(n.busPort()).append('\n');
    }
    for (Shard s : shards) {
      out.append("shard ").append(s.name()).append(' ');
      out.append(String.join(",", s.slots().stream().map(r -> r.first() + "-" + r.last()).toList()));
      out.append(' ').append(String.join(",", s.members())).append('\n');
    }
    return out.toString();
  }

  /**
   * Reads {@link #encode}'s text.
   *
   * @throws IllegalArgumentException naming the line that is wrong, or what the whole does not satisfy
   */
  public static Topology parse(String text) {
    String cluster = null;
    List<Node> nodes = new ArrayList<>();
    List<Shard> shards = new ArrayList<>();
    for (String line : text.split("\n")) {
      if (line.isBlank()) {
        continue;
      }
      String[] f = line.strip().split(" ");
      try {
        switch (f[0]) {
          case "cluster" -> cluster = NodeIdentity.checkId(f[1]);
          case "node" -> nodes.add(new Node(NodeIdentity.checkId(f[1]), f[2], port(f[3]), f[4], port(f[5])));
          case "shard" -> {
            List<SlotRange> ranges = new ArrayList<>();
            for (String r : f[2].split(",")) {
              int dash = r.indexOf('-');
              ranges.add(new SlotRange(Integer.parseInt(r.substring(0, dash)),
                  Integer.parseInt(r.substring(dash + 1))));
            }
            shards.add(new Shard(f[1], ranges, List.of(f[3].split(","))));
          }
          default -> throw new IllegalArgumentException("unknown line");
        }
      } catch (RuntimeException e) {
        throw new IllegalArgumentException("topology line '" + line + "': " + e.getMessage(), e);
      }
    }
    if (cluster == null) {
      throw new IllegalArgumentException("the topology names no cluster");
    }
    return new Topology(cluster, nodes, shards);
  }

  private static int port(String s) {
    int p = Integer.parseInt(s);
    if (p < 1 || p > 65535) {
      throw new IllegalArgumentException("port " + p + " is not in 1..65535");
    }
    return p;
  }
}
