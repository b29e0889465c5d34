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
 * shards (the nodes that replicate each, the slot ranges each serves), and the slots being moved from one shard to
 * another, if a reshard is under way. Every one of the 16,384 slots belongs to exactly one shard (a slot being moved
 * to its source until the move completes). Written as text lines ({@link #encode}) into the metadata group's log.
 *
 * @param cluster the cluster's id (40 hex digits)
 * @param nodes every node, in the order {@code cluster create} was given them
 * @param shards every shard
 * @param migration the slots a reshard is moving, or {@code null}
 */
public record Topology(String cluster, List<Node> nodes, List<Shard> shards, Migration migration) {

  /**
   * Slots being moved from shard {@code from}, which serves them until the move completes, to shard {@code to}: a
   * reshard under way ({@code bloomery cluster reshard}).
   */
  public record Migration(String from, String to, List<SlotRange> slots) {
    public Migration {
      slots = List.copyOf(slots);
      if (from.equals(to)) {
        throw new IllegalArgumentException("a migration moves slots from one shard to another, not to " + to);
      }
      if (slots.isEmpty()) {
        throw new IllegalArgumentException("a migration moves at least one slot");
      }
    }

    /** Whether {@code slot} is one of the slots being moved. */
    public boolean covers(int slot) {
      for (SlotRange r : slots) {
        if (slot >= r.first() && slot <= r.last()) {
          return true;
        }
      }
      return false;
    }

    /** The slots being moved, ascending. */
    public int[] slotList() {
      return slots.stream().flatMapToInt(r -> java.util.stream.IntStream.rangeClosed(r.first(), r.last())).sorted()
          .toArray();
    }
  }

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

  /** A topology with no reshard under way. */
  public Topology(String cluster, List<Node> nodes, List<Shard> shards) {
    this(cluster, nodes, shards, null);
  }

  public Topology {
    nodes = List.copyOf(nodes);
    shards = List.copyOf(shards);
    Set<String> names = new HashSet<>();
    for (Shard s : shards) {
      if (!names.add(s.name())) {
        throw new IllegalArgumentException("shard " + s.name() + " is listed twice");
      }
    }
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
    if (migration != null) {
      if (!names.contains(migration.from()) || !names.contains(migration.to())) {
        throw new IllegalArgumentException("the migration names an unknown shard (" + migration.from() + " -> "
            + migration.to() + ")");
      }
      for (SlotRange r : migration.slots()) {
        for (int slot = r.first(); slot <= r.last(); slot++) {
          if (!shards.get(owner[slot]).name().equals(migration.from())) {
            throw new IllegalArgumentException("slot " + slot + " is migrating from " + migration.from()
                + ", which does not serve it");
          }
        }
      }
    }
  }

  /**
   * This topology with {@code count} slots of shard {@code from} migrating to shard {@code to}: the highest ones
   * {@code from} serves. What {@code bloomery cluster reshard} asks for first.
   *
   * @throws IllegalArgumentException if a migration is under way, a shard does not exist, or {@code from} serves
   *     fewer than {@code count} slots
   */
  public Topology withMigration(String from, String to, int count) {
    if (migration != null) {
      throw new IllegalArgumentException("slots are already migrating from " + migration.from() + " to "
          + migration.to());
    }
    Shard source = shard(from);
    if (source == null || shard(to) == null) {
      throw new IllegalArgumentException("no shard " + (source == null ? from : to) + " (shards: "
          + String.join(", ", shards.stream().map(Shard::name).toList()) + ")");
    }
    if (count < 1 || count > source.slotCount()) {
      throw new IllegalArgumentException("shard " + from + " serves " + source.slotCount() + " slots: move 1 to "
          + source.slotCount() + ", not " + count);
    }
    int[] all = source.slots().stream().flatMapToInt(r -> java.util.stream.IntStream.rangeClosed(r.first(), r.last()))
        .sorted().toArray();
    return new Topology(cluster, nodes, shards, new Migration(from, to,
        ranges(java.util.Arrays.copyOfRange(all, all.length - count, all.length))));
  }

  /**
   * This topology with the migration done: its slots served by its target.
   *
   * @throws IllegalStateException if no migration is under way
   */
  public Topology migrated() {
    if (migration == null) {
      throw new IllegalStateException("no slots are migrating");
    }
    return migrated(migration.slotList());
  }

  /**
   * This topology with {@code part} of the migration done (a reshard's step): those slots served by its target, the
   * rest still migrating; no migration once none is left.
   *
   * @throws IllegalStateException if no migration is under way
   * @throws IllegalArgumentException if a slot of {@code part} is not migrating
   */
  public Topology migrated(int[] part) {
    if (migration == null) {
      throw new IllegalStateException("no slots are migrating");
    }
    java.util.BitSet moving = new java.util.BitSet(HashSlot.SLOTS);
    for (int slot : part) {
      if (!migration.covers(slot)) {
        throw new IllegalArgumentException("slot " + slot + " is not migrating");
      }
      moving.set(slot);
    }
    List<Shard> next = new ArrayList<>();
    for (Shard s : shards) {
      java.util.BitSet slots = new java.util.BitSet(HashSlot.SLOTS);
      s.slots().forEach(r -> slots.set(r.first(), r.last() + 1));
      if (s.name().equals(migration.from())) {
        slots.andNot(moving);
      } else if (s.name().equals(migration.to())) {
        slots.or(moving);
      }
      next.add(new Shard(s.name(), ranges(slots.stream().toArray()), s.members()));
    }
    java.util.BitSet left = new java.util.BitSet(HashSlot.SLOTS);
    migration.slots().forEach(r -> left.set(r.first(), r.last() + 1));
    left.andNot(moving);
    return new Topology(cluster, nodes, next, left.isEmpty() ? null
        : new Migration(migration.from(), migration.to(), ranges(left.stream().toArray())));
  }

  /**
   * The slots of this topology's migration that {@code next} serves on the migration's target: the part of it that
   * {@code next} records as done (none without a migration).
   */
  public int[] migratedIn(Topology next) {
    if (migration == null) {
      return new int[0];
    }
    return java.util.Arrays.stream(migration.slotList()).filter(s -> next.shardOf(s).name().equals(migration.to()))
        .toArray();
  }

  /** {@code slots} (ascending) as the fewest inclusive ranges. */
  static List<SlotRange> ranges(int[] slots) {
    List<SlotRange> out = new ArrayList<>();
    for (int i = 0; i < slots.length; ) {
      int j = i;
      while (j + 1 < slots.length && slots[j + 1] == slots[j] + 1) {
        j++;
      }
      out.add(new SlotRange(slots[i], slots[j]));
      i = j + 1;
    }
    return out;
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
    return new Topology(cluster, moreNodes, next, migration);
  }

  /**
   * This topology with a new shard whose members are {@code members}, nodes not in the cluster yet: what {@code
   * bloomery cluster add-shard} asks for. Its name is the first of {@code s0}, {@code s1}, ... not taken; it serves no
   * slot until a reshard moves some to it.
   *
   * @throws IllegalArgumentException if there are no members, or a node's id or an address is taken
   */
  public Topology withShard(List<Node> members) {
    if (members.isEmpty()) {
      throw new IllegalArgumentException("a shard needs at least one member");
    }
    String name = null;
    for (int i = 0; name == null; i++) {
      if (shard("s" + i) == null) {
        name = "s" + i;
      }
    }
    List<Node> moreNodes = new ArrayList<>(nodes);
    moreNodes.addAll(members);
    List<Shard> next = new ArrayList<>(shards);
    next.add(new Shard(name, List.of(), members.stream().map(Node::id).toList()));
    return new Topology(cluster, moreNodes, next, migration);
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
    return new Topology(cluster, nodes.stream().filter(n -> !n.id().equals(id)).toList(), next, migration);
  }

  /**
   * This topology without shard {@code name} and its members: what {@code bloomery cluster del-shard} asks for. Only
   * a shard that serves no slot (every slot moved away by a reshard) can go.
   *
   * @throws IllegalArgumentException if no such shard exists, it serves slots, a reshard to or from it is under way,
   *     or it is the cluster's last shard
   */
  public Topology withoutShard(String name) {
    Shard gone = shard(name);
    if (gone == null) {
      throw new IllegalArgumentException("no shard " + name + " in cluster " + cluster + " (shards: "
          + String.join(", ", shards.stream().map(Shard::name).toList()) + ")");
    }
    if (migration != null && (migration.from().equals(name) || migration.to().equals(name))) {
      throw new IllegalArgumentException("slots are migrating from " + migration.from() + " to " + migration.to()
          + ": finish that reshard first");
    }
    if (gone.slotCount() > 0) {
      throw new IllegalArgumentException("shard " + name + " serves " + gone.slotCount() + " slots: move them to "
          + "another shard first (bloomery cluster reshard --from " + name + " --to SHARD --slots "
          + gone.slotCount() + " HOST:PORT)");
    }
    if (shards.size() == 1) {
      throw new IllegalArgumentException("shard " + name + " is the cluster's only shard");
    }
    return new Topology(cluster, nodes.stream().filter(n -> !gone.members().contains(n.id())).toList(),
        shards.stream().filter(s -> s != gone).toList(), migration);
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
   * Whether {@code next} differs from this topology only in its nodes, the shards' members, and shards added or
   * removed that serve no slot (a membership change): the same cluster, every other shard serving the same slots, the
   * same migration.
   */
  public boolean sameSlots(Topology next) {
    if (!cluster.equals(next.cluster()) || !java.util.Objects.equals(migration, next.migration())) {
      return false;
    }
    for (Shard s : shards) {
      Shard other = next.shard(s.name());
      if (other == null ? !s.slots().isEmpty() : !other.slots().equals(s.slots())) {
        return false;
      }
    }
    for (Shard s : next.shards()) {
      if (shard(s.name()) == null && !s.slots().isEmpty()) {
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
   * MEMBERS} (RANGES {@code -} for a shard that serves no slot), and during a reshard {@code migrating FROM TO
   * RANGES}.
   */
  public String encode() {
    StringBuilder out = new StringBuilder("cluster ").append(cluster).append('\n');
    for (Node n : nodes) {
      out.append("node ").append(n.id()).append(' ').append(n.host()).append(' ').append(n.port()).append(' ')
          .append(n.busHost()).append(' ').append(n.busPort()).append('\n');
    }
    for (Shard s : shards) {
      out.append("shard ").append(s.name()).append(' ').append(encode(s.slots()));
      out.append(' ').append(String.join(",", s.members())).append('\n');
    }
    if (migration != null) {
      out.append("migrating ").append(migration.from()).append(' ').append(migration.to()).append(' ')
          .append(encode(migration.slots())).append('\n');
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
    Migration migration = null;
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
            if (f.length != 4) {
              throw new IllegalArgumentException("a shard line has a name, slot ranges and members");
            }
            shards.add(new Shard(f[1], parseRanges(f[2]), List.of(f[3].split(","))));
          }
          case "migrating" -> {
            if (f.length != 4 || migration != null) {
              throw new IllegalArgumentException(migration != null ? "a second migration"
                  : "a migrating line has a source shard, a target shard and slot ranges");
            }
            migration = new Migration(f[1], f[2], parseRanges(f[3]));
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
    return new Topology(cluster, nodes, shards, migration);
  }

  private static String encode(List<SlotRange> ranges) {
    return ranges.isEmpty() ? "-" : String.join(",", ranges.stream().map(r -> r.first() + "-" + r.last()).toList());
  }

  private static List<SlotRange> parseRanges(String text) {
    List<SlotRange> ranges = new ArrayList<>();
    if (text.equals("-")) {
      return ranges;
    }
    for (String r : text.split(",")) {
      int dash = r.indexOf('-');
      if (dash <= 0) {
        throw new IllegalArgumentException("'" + r + "' is not a slot range FIRST-LAST");
      }
      ranges.add(new SlotRange(Integer.parseInt(r.substring(0, dash)), Integer.parseInt(r.substring(dash + 1))));
    }
    return ranges;
  }

  private static int port(String s) {
    int p = Integer.parseInt(s);
    if (p < 1 || p > 65535) {
      throw new IllegalArgumentException("port " + p + " is not in 1..65535");
    }
    return p;
  }
}
