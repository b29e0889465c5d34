package io.bloomery.cluster.node;

import io.bloomery.cluster.shard.ShardStateMachine;
import io.bloomery.cluster.slot.HashSlot;
import io.bloomery.server.keyspace.Key;
import io.bloomery.server.resp.Reply;
import io.bloomery.server.state.ClientState;
import io.bloomery.server.state.acl.AclUser;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import org.apache.ratis.server.RaftServer;

/**
 * The {@code CLUSTER} command of a node, in Redis Cluster's reply shapes (RESP2 and RESP3): a shard's Raft leader is
 * its master, its other members are its replicas, and a shard's config epoch is its leader's Raft term. Also
 * Bloomery's own {@code TOPOLOGY}, {@code JOIN-TOPOLOGY}, {@code COMMIT-TOPOLOGY}, {@code SET-TOPOLOGY} and
 * {@code LEAVE}, which {@code bloomery cluster create}, {@code add-node} and {@code del-node} send, and {@code FORGET}
 * with Redis's name and a cluster's meaning here: drop what a removed node left in PostgreSQL.
 */
final class ClusterReplies {
  private final RaftNode node;

  ClusterReplies(RaftNode node) {
    this.node = node;
  }

  /**
   * The reply to {@code CLUSTER ...} from {@code client}. JOIN-TOPOLOGY, COMMIT-TOPOLOGY, SET-TOPOLOGY and LEAVE
   * change what the node is part of, FORGET drops replication slots, FAILOVER which node leads its shard: only a
   * user allowed every command may send them. TOPOLOGY answers the topology as the metadata group holds it
   * ({@link Topology#encode}).
   */
  CompletionStage<Reply> cluster(ClientState client, List<byte[]> argv) {
    if (argv.size() < 2) {
      return RaftNode.done(Reply.error("ERR wrong number of arguments for 'cluster' command"));
    }
    String sub = text(argv.get(1)).toLowerCase(Locale.ROOT);
    int arity = switch (sub) {
      case "myid", "slots", "shards", "nodes", "info", "help", "topology", "leave" -> 2;
      case "keyslot", "countkeysinslot", "join-topology", "commit-topology", "set-topology", "forget" -> 3;
      case "getkeysinslot" -> 4;
      case "reshard" -> 5;
      case "failover" -> 2; // or 3: checked below
      default -> -1;
    };
    if (arity < 0) {
      return RaftNode.done(Reply.error("ERR unknown subcommand '" + text(argv.get(1)) + "'. Try CLUSTER HELP."));
    }
    if (sub.equals("join-topology") && argv.size() == 4) {
      Reply refused = refusedUnlessUnrestricted(client, sub);
      if (refused != null) {
        return RaftNode.done(refused);
      }
      try {
        return node.join(Topology.parse(text(argv.get(2))), Topology.parse(text(argv.get(3))));
      } catch (IllegalArgumentException e) {
        return RaftNode.done(Reply.error("ERR bad topology: " + e.getMessage()));
      }
    }
    if (sub.equals("failover")) {
      if (argv.size() > 3) {
        return RaftNode.done(Reply.error("ERR syntax error"));
      }
      if (argv.size() == 3 && !Set.of("force", "takeover").contains(text(argv.get(2)).toLowerCase(Locale.ROOT))) {
        return RaftNode.done(Reply.error("ERR syntax error"));
      }
      Reply refused = refusedUnlessUnrestricted(client, sub);
      return refused != null ? RaftNode.done(refused) : node.failover();
    }
    if (argv.size() != arity) {
      return RaftNode.done(Reply.error("ERR wrong number of arguments for 'cluster|" + sub + "' command"));
    }
    return switch (sub) {
      case "leave" -> {
        Reply refused = refusedUnlessUnrestricted(client, sub);
        yield refused != null ? RaftNode.done(refused) : node.leave();
      }
      case "forget" -> {
        Reply refused = refusedUnlessUnrestricted(client, sub);
        yield refused != null ? RaftNode.done(refused) : node.forget(text(argv.get(2)));
      }
      case "join-topology", "commit-topology", "set-topology" -> {
        Reply refused = refusedUnlessUnrestricted(client, sub);
        if (refused != null) {
          yield RaftNode.done(refused);
        }
        Topology topology;
        try {
          topology = Topology.parse(text(argv.get(2)));
        } catch (IllegalArgumentException e) {
          yield RaftNode.done(Reply.error("ERR bad topology: " + e.getMessage()));
        }
        yield switch (sub) {
          case "join-topology" -> node.join(topology, null);
          case "commit-topology" -> node.commit(topology);
          default -> node.setTopology(topology);
        };
      }
      case "reshard" -> {
        Reply refused = refusedUnlessUnrestricted(client, sub);
        if (refused != null) {
          yield RaftNode.done(refused);
        }
        String count = text(argv.get(4));
        if (!count.matches("\\d{1,5}")) {
          yield RaftNode.done(Reply.error("ERR the slot count must be an integer from 0 to 16384"));
        }
        yield node.reshard(text(argv.get(2)), text(argv.get(3)), Integer.parseInt(count));
      }
      case "topology" -> node.committedTopologyReply();
      default -> RaftNode.done(answer(sub, argv));
    };
  }

  /**
   * The NOPERM reply for a subcommand that changes what the cluster is (its topology, a shard's leader), unless
   * {@code client}'s user may run every command; {@code null} when it may.
   */
  private static Reply refusedUnlessUnrestricted(ClientState client, String sub) {
    AclUser user = client.user();
    return user == null || user.unrestricted() ? null
        : Reply.error("NOPERM User " + user.name() + " has no permissions to run the 'cluster|" + sub + "' command");
  }

  private Reply answer(String sub, List<byte[]> argv) {
    Topology t = node.topology();
    return switch (sub) {
      case "myid" -> Reply.bulk(node.me().id());
      case "keyslot" -> Reply.integer(HashSlot.of(argv.get(2)));
      case "info" -> new Reply.Verbatim("txt", info(t));
      case "nodes" -> new Reply.Verbatim("txt", nodes(t));
      case "slots" -> slots(t);
      case "shards" -> shards(t);
      case "countkeysinslot" -> {
        Integer slot = slot(argv.get(2));
        if (slot == null) {
          yield Reply.error(isInteger(argv.get(2)) ? "ERR Invalid slot"
              : "ERR value is not an integer or out of range");
        }
        yield Reply.integer(keysInSlot(t, slot, Long.MAX_VALUE).size());
      }
      case "getkeysinslot" -> {
        Integer slot = slot(argv.get(2));
        if (!isInteger(argv.get(2)) || !isInteger(argv.get(3))) {
          yield Reply.error("ERR value is not an integer or out of range");
        }
        long count = Long.parseLong(text(argv.get(3)));
        if (slot == null || count < 0) {
          yield Reply.error("ERR Invalid slot or number of keys");
        }
        List<Reply> keys = new ArrayList<>();
        for (Key k : keysInSlot(t, slot, count)) {
          keys.add(Reply.bulk(k.bytes()));
        }
        yield Reply.array(keys);
      }
      default -> help();
    };
  }

  /** This node's keys in {@code slot}, at most {@code limit}: none unless it replicates the slot's shard. */
  private List<Key> keysInSlot(Topology t, int slot, long limit) {
    List<Key> out = new ArrayList<>();
    ShardStateMachine machine = t == null ? null : node.machine(t.shardOf(slot));
    if (machine == null) {
      return out;
    }
    for (Key k : machine.keyspace().keys()) {
      if (out.size() >= limit) {
        break;
      }
      if (HashSlot.of(k.bytes()) == slot) {
        out.add(k);
      }
    }
    return out;
  }

  private static Reply help() {
    List<Reply> lines = new ArrayList<>();
    for (String l : List.of("CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "COUNTKEYSINSLOT <slot>", "    Return the number of keys in <slot> on this node.",
        "GETKEYSINSLOT <slot> <count>", "    Return key names stored by this node in a slot.",
        "INFO", "    Return information about the cluster.",
        "KEYSLOT <key>", "    Return the hash slot for <key>.",
        "MYID", "    Return the node id.",
        "NODES", "    Return cluster configuration seen by node. Output format:",
        "    <id> <ip:port@bus-port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
        "RESHARD <from-shard> <to-shard> <count>", "    Move <count> slots and their keys between shards, after "
            + "finishing any move under way.",
        "SHARDS", "    Return information about slot range mappings and the nodes that own them.",
        "SLOTS", "    Return information about slots range mappings. Each range is made of:",
        "    start, end, master and replicas IP addresses, ports and ids",
        "FAILOVER [FORCE|TAKEOVER]", "    Make this replica its shard's leader (a Raft leadership transfer).",
        "TOPOLOGY", "    Return the cluster's topology as its metadata group holds it (Bloomery).",
        "JOIN-TOPOLOGY <topology> [<current>]", "    Host the Raft groups <topology> gives this node (bloomery cluster "
            + "create); with the running cluster's <current> topology, wait for their leaders to add it (add-node).",
        "COMMIT-TOPOLOGY <topology>", "    Write a new cluster's topology (bloomery cluster create).",
        "SET-TOPOLOGY <topology>", "    Change the members of shards and of the cluster (bloomery cluster add-node, "
            + "del-node).",
        "LEAVE", "    Drop this node's Raft groups once the cluster no longer lists it (bloomery cluster del-node).",
        "FORGET <node-id>", "    Drop the replication slots a node the cluster no longer lists left in this node's "
            + "PostgreSQL stores (bloomery cluster del-node).",
        "HELP", "    Print this help.")) {
      lines.add(new Reply.Simple(l));
    }
    return Reply.array(lines);
  }

  // ------------------------------------------------------------------------------------------------ views

  /**
   * A shard's members, its leader first. While none is known (an election), this node if it is a member (it answers
   * the shard's commands once the election is over, with MOVED if another member won), else the first member.
   */
  private List<Topology.Node> membersLeaderFirst(Topology t, Topology.Shard shard) {
    String leader = node.leaderOf(shard);
    if (leader == null || !shard.members().contains(leader)) {
      leader = shard.members().contains(node.me().id()) ? node.me().id() : shard.members().get(0);
    }
    List<Topology.Node> out = new ArrayList<>();
    out.add(t.node(leader));
    for (String m : shard.members()) {
      if (!m.equals(leader)) {
        out.add(t.node(m));
      }
    }
    return out;
  }

  private String info(Topology t) {
    boolean ok = t != null && t.shards().stream().allMatch(s -> node.leaderOf(s) != null);
    long epoch = 0;
    long myEpoch = 0;
    if (t != null) {
      for (Topology.Shard s : t.shards()) {
        long term = node.termOf(s);
        epoch = Math.max(epoch, term);
        if (s.members().contains(node.me().id())) {
          myEpoch = term;
        }
      }
    }
    int slots = t == null ? 0 : HashSlot.SLOTS;
    Map<String, Object> f = new LinkedHashMap<>();
    f.put("cluster_state", ok ? "ok" : "fail");
    f.put("cluster_slots_assigned", slots);
    f.put("cluster_slots_ok", ok ? slots : 0);
    f.put("cluster_slots_pfail", 0);
    f.put("cluster_slots_fail", ok ? 0 : slots);
    f.put("cluster_known_nodes", t == null ? 1 : t.nodes().size());
    f.put("cluster_size", t == null ? 0 : t.shards().stream().filter(s -> s.slotCount() > 0).count());
    f.put("cluster_current_epoch", epoch);
    f.put("cluster_my_epoch", myEpoch);
    f.put("cluster_stats_messages_sent", 0);
    f.put("cluster_stats_messages_received", 0);
    f.put("total_cluster_links_buffer_limit_exceeded", 0);
    StringBuilder out = new StringBuilder();
    f.forEach((k, v) -> out.append(k).append(':').append(v).append("\r\n"));
    return out.toString();
  }

  private String nodes(Topology t) {
    NodeIdentity me = node.me();
    if (t == null) {
      return me.id() + " " + me.host() + ":" + me.port() + "@" + me.busPort() + " myself,master - 0 0 0 connected\n";
    }
    StringBuilder out = new StringBuilder();
    for (Topology.Shard s : t.shards()) {
      List<Topology.Node> members = membersLeaderFirst(t, s);
      String leader = members.get(0).id();
      long epoch = node.termOf(s);
      for (Topology.Node n : members) {
        boolean master = n.id().equals(leader);
        out.append(n.id()).append(' ').append(n.address()).append(' ')
            .append(n.id().equals(me.id()) ? "myself," : "").append(master ? "master" : "slave").append(' ')
            .append(master ? "-" : leader).append(" 0 0 ").append(epoch).append(" connected");
        if (master) {
          for (Topology.SlotRange r : s.slots()) {
            out.append(' ').append(r.first() == r.last() ? Integer.toString(r.first()) : r.first() + "-" + r.last());
          }
          migrating(t, s, out);
        }
        out.append('\n');
      }
    }
    return out.toString();
  }

  /**
   * During a reshard, Redis's markers on a master's line: {@code [SLOT->-ID]} for each slot its shard is moving out
   * (ID: the target's leader), {@code [SLOT-<-ID]} for each slot moving in (ID: the source's leader).
   */
  private void migrating(Topology t, Topology.Shard s, StringBuilder out) {
    Topology.Migration m = t.migration();
    boolean from = m != null && m.from().equals(s.name());
    if (m == null || !from && !m.to().equals(s.name())) {
      return;
    }
    String other = membersLeaderFirst(t, t.shard(from ? m.to() : m.from())).get(0).id();
    for (int slot : m.slotList()) {
      out.append(" [").append(slot).append(from ? "->-" : "-<-").append(other).append(']');
    }
  }

  private Reply slots(Topology t) {
    List<Reply> ranges = new ArrayList<>();
    if (t == null) {
      return Reply.array(ranges);
    }
    for (Topology.Shard s : t.shards()) {
      List<Topology.Node> members = membersLeaderFirst(t, s);
      for (Topology.SlotRange r : s.slots()) {
        List<Reply> entry = new ArrayList<>(List.of(Reply.integer(r.first()), Reply.integer(r.last())));
        for (Topology.Node n : members) {
          entry.add(Reply.arrayOf(Reply.bulk(n.host()), Reply.integer(n.port()), Reply.bulk(n.id()),
              new Reply.MapReply(List.of())));
        }
        ranges.add(Reply.array(entry));
      }
    }
    return Reply.array(ranges);
  }

  private Reply shards(Topology t) {
    List<Reply> out = new ArrayList<>();
    if (t == null) {
      return Reply.array(out);
    }
    for (Topology.Shard s : t.shards()) {
      List<Reply> slots = new ArrayList<>();
      for (Topology.SlotRange r : s.slots()) {
        slots.add(Reply.integer(r.first()));
        slots.add(Reply.integer(r.last()));
      }
      List<Topology.Node> members = membersLeaderFirst(t, s);
      List<Reply> nodes = new ArrayList<>();
      for (Topology.Node n : members) {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("id", n.id());
        f.put("port", (long) n.port());
        f.put("ip", n.host());
        f.put("endpoint", n.host());
        f.put("role", n == members.get(0) ? "master" : "replica");
        f.put("replication-offset", appliedIndex(s, n.id()));
        f.put("health", "online");
        nodes.add(Reply.bulkMap(f));
      }
      out.add(new Reply.MapReply(List.of(Reply.bulk("slots"), Reply.array(slots), Reply.bulk("nodes"),
          Reply.array(nodes))));
    }
    return Reply.array(out);
  }

  /**
   * A member's applied log index as this node knows it: its own, exactly; a follower's match index when this node
   * leads the shard; else 0 (unknown here: {@code bloomery cluster status} asks each node for its own).
   */
  private long appliedIndex(Topology.Shard shard, String member) {
    RaftServer.Division division = node.division(shard);
    if (division == null) {
      return 0;
    }
    if (member.equals(node.me().id())) {
      return division.getInfo().getLastAppliedIndex();
    }
    for (RaftNode.Follower f : RaftNode.followers(division)) {
      if (f.id().equals(member)) {
        return f.matchIndex();
      }
    }
    return 0;
  }

  /** A slot number, or {@code null} if {@code arg} is not an integer in 0..16383. */
  private static Integer slot(byte[] arg) {
    if (!isInteger(arg)) {
      return null;
    }
    long n = Long.parseLong(text(arg));
    return n < 0 || n >= HashSlot.SLOTS ? null : (int) n;
  }

  private static boolean isInteger(byte[] arg) {
    try {
      Long.parseLong(text(arg));
      return true;
    } catch (NumberFormatException e) {
      return false;
    }
  }

  private static String text(byte[] b) {
    return new String(b, StandardCharsets.UTF_8);
  }
}
