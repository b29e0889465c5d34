package io.bloomery.cli;

import io.bloomery.cluster.node.Topology;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * {@code bloomery cluster}: creates a cluster out of running nodes ({@code bloomery serve --cluster-enabled yes})
 * and shows its state, over RESP as {@code redis-cli --cluster} does.
 */
@Command(
    name = "cluster",
    mixinStandardHelpOptions = true,
    versionProvider = BloomeryCommand.Version.class,
    header = "Create a cluster of running nodes, show its state, replace its nodes, add and remove shards, move slots "
        + "between them, or move a shard's leadership (docs/CLUSTER.md).",
    subcommands = {ClusterCommand.Create.class, ClusterCommand.Status.class, ClusterCommand.Failover.class,
        ClusterCommand.AddNode.class, ClusterCommand.DelNode.class, ClusterCommand.AddShard.class,
        ClusterCommand.DelShard.class, ClusterCommand.Reshard.class})
final class ClusterCommand implements Callable<Integer> {
  @ParentCommand BloomeryCommand root;

  @Override
  public Integer call() {
    throw CliException.usage("bloomery cluster needs a subcommand: create, status, failover, add-node, del-node, "
        + "add-shard, del-shard or reshard");
  }

  /** A node given as HOST:PORT. */
  record Address(String host, int port) {
    static Address parse(String text) {
      int colon = text.lastIndexOf(':');
      if (colon <= 0 || colon == text.length() - 1) {
        throw CliException.usage("'" + text + "' is not HOST:PORT");
      }
      int port;
      try {
        port = Integer.parseInt(text.substring(colon + 1));
      } catch (NumberFormatException e) {
        throw CliException.usage("'" + text + "' has no port number");
      }
      if (port < 1 || port > 65535) {
        throw CliException.usage("'" + text + "': port " + port + " is not in [1, 65535]");
      }
      return new Address(text.substring(0, colon), port);
    }

    @Override
    public String toString() {
      return host + ":" + port;
    }
  }

  /** The password option both subcommands take. */
  static final class Auth {
    @Option(names = {"-a", "--password"}, description = "The nodes' requirepass (else REDISCLI_AUTH).")
    String password;

    /** The password given, else REDISCLI_AUTH (as redis-cli reads it), else {@code null}. */
    String secret() {
      return password != null ? password : System.getenv("REDISCLI_AUTH");
    }

    RespClient connect(Address a, int readTimeoutMillis) {
      try {
        return RespClient.connect(a.host(), a.port(), 3000, readTimeoutMillis, secret());
      } catch (IOException e) {
        throw CliException.failure("cannot reach node " + a + ": " + e.getMessage(), e);
      }
    }

    /** Node {@code id}'s applied log index of its shard as it reports it itself, or {@code null} if unreadable. */
    Long ownIndex(Address a, String id) {
      try (RespClient c = RespClient.connect(a.host(), a.port(), 2000, 5000, secret())) {
        for (Object shard : (List<Object>) c.call("CLUSTER", "SHARDS")) {
          for (Object member : (List<Object>) flatMap(shard).get("nodes")) {
            Map<String, Object> m = flatMap(member);
            if (text(m.get("id")).equals(id)) {
              return (Long) m.get("replication-offset");
            }
          }
        }
        return null;
      } catch (IOException e) {
        return null;
      }
    }
  }

  @Command(name = "create", mixinStandardHelpOptions = true, versionProvider = BloomeryCommand.Version.class,
      header = "Make shards of --replication-factor nodes each over the nodes given, the "
      + "16384 slots split evenly between them, and print the topology.")
  static final class Create implements Callable<Integer> {
    @ParentCommand ClusterCommand parent;

    @Option(names = "--replication-factor", defaultValue = "3", paramLabel = "N",
        description = "Members of each shard's Raft group, leader included (default: ${DEFAULT-VALUE}).")
    int factor;

    @picocli.CommandLine.Mixin Auth auth = new Auth();

    @Parameters(arity = "1..*", paramLabel = "HOST:PORT", description = "The nodes, each started with "
        + "--cluster-enabled yes; every --replication-factor of them in a row form one shard.")
    List<String> nodes;

    @Override
    public Integer call() throws IOException {
      if (factor < 1) {
        throw CliException.usage("--replication-factor must be at least 1, was " + factor);
      }
      List<Address> addresses = new ArrayList<>();
      Set<Address> seen = new HashSet<>();
      for (String n : nodes) {
        Address a = Address.parse(n);
        if (!seen.add(a)) {
          throw CliException.usage("node " + a + " is given twice");
        }
        addresses.add(a);
      }
      if (addresses.size() % factor != 0) {
        throw CliException.usage(addresses.size() + " nodes do not make shards of " + factor + " members: give a "
            + "multiple of " + factor + " nodes");
      }
      List<Topology.Node> found = new ArrayList<>();
      Set<String> ids = new HashSet<>();
      for (Address a : addresses) {
        Topology.Node node = describe(auth, a);
        if (!ids.add(node.id())) {
          throw CliException.usage("node " + a + " is the same node (" + node.id() + ") as another address given");
        }
        found.add(node);
      }
      byte[] random = new byte[20];
      new SecureRandom().nextBytes(random);
      Topology topology;
      try {
        topology = Topology.plan(HexFormat.of().formatHex(random), found, factor);
      } catch (IllegalArgumentException e) {
        throw CliException.usage(e.getMessage(), e);
      }
      String text = topology.encode();
      for (int i = 0; i < addresses.size(); i++) {
        try (RespClient c = auth.connect(addresses.get(i), 30_000)) {
          c.call("CLUSTER", "JOIN-TOPOLOGY", text);
        } catch (RespClient.Failure e) {
          throw CliException.failure("node " + addresses.get(i) + " did not join: " + e.getMessage(), e);
        }
      }
      try (RespClient c = auth.connect(addresses.get(0), 60_000)) {
        c.call("CLUSTER", "COMMIT-TOPOLOGY", text);
      } catch (RespClient.Failure e) {
        throw CliException.failure("the cluster's metadata group did not take the topology: " + e.getMessage(), e);
      }
      awaitOk(auth, addresses);
      awaitFormed(auth, topology, addresses, found);
      PrintWriter out = parent.root.out();
      out.println("Cluster " + topology.cluster() + ": " + found.size() + " nodes, " + topology.shards().size()
          + " shard(s) of " + factor + " members");
      try (RespClient c = auth.connect(addresses.get(0), 10_000)) {
        out.print(c.callForText("CLUSTER", "NODES"));
      } catch (RespClient.Failure e) {
        throw CliException.failure("cannot read the topology back from " + addresses.get(0) + ": " + e.getMessage(), e);
      }
      out.flush();
      return BloomeryCommand.EXIT_OK;
    }

  }

  /** A node's id and addresses as it announces them; refused if it is no cluster node or is in a cluster. */
  static Topology.Node describe(Auth auth, Address a) {
    Described d = describeAny(auth, a);
    if (d.inCluster() != null) {
      throw CliException.failure("node " + a + " is already in a cluster (" + d.inCluster() + ")");
    }
    return d.node();
  }

  /** A node as it announces itself, and why it counts as in a cluster ({@code null}: it is in none). */
  record Described(Topology.Node node, String inCluster) {}

  /** A node's id and addresses as it announces them, in a cluster or not; refused if it is no cluster node. */
  static Described describeAny(Auth auth, Address a) {
    try (RespClient c = auth.connect(a, 10_000)) {
      String myself;
      Map<String, String> info;
      try {
        info = fields(c.callForText("CLUSTER", "INFO"));
        myself = c.callForText("CLUSTER", "NODES").lines().filter(l -> l.contains("myself")).findFirst().orElse("");
      } catch (RespClient.ErrorReply e) {
        throw CliException.failure("node " + a + " is not a cluster node (start it with --cluster-enabled yes): "
            + e.getMessage(), e);
      }
      String inCluster = null;
      if (!"1".equals(info.get("cluster_known_nodes")) || !"0".equals(info.get("cluster_slots_assigned"))) {
        inCluster = "CLUSTER INFO: cluster_known_nodes:" + info.get("cluster_known_nodes") + ", cluster_slots_assigned:"
            + info.get("cluster_slots_assigned");
      }
      String[] f = myself.split(" ");
      if (f.length < 2 || !f[1].contains("@")) {
        throw CliException.failure("node " + a + " answered CLUSTER NODES without its own line: " + myself);
      }
      String address = f[1].split(",")[0];
      int at = address.indexOf('@');
      int colon = address.lastIndexOf(':', at);
      String host = address.substring(0, colon);
      int port = Integer.parseInt(address.substring(colon + 1, at));
      int bus = Integer.parseInt(address.substring(at + 1));
      return new Described(new Topology.Node(f[0], host, port, host, bus), inCluster);
    } catch (RespClient.Failure e) {
      throw CliException.failure("cannot read node " + a + ": " + e.getMessage(), e);
    } catch (IOException | RuntimeException e) {
      if (e instanceof CliException ce) {
        throw ce;
      }
      throw CliException.failure("cannot read node " + a + ": " + e.getMessage(), e);
    }
  }

  /**
   * Waits (60 s at most) until every shard member has applied its group's first entry. Until then its Raft log is
   * empty, and Ratis counts no vote from an empty log once a group has committed anything (a replica whose disk was
   * wiped must not help elect a leader that lacks acknowledged writes): a leader lost before then would leave its
   * two followers unable to elect a successor.
   */
  static void awaitFormed(Auth auth, Topology topology, List<Address> addresses, List<Topology.Node> found) {
    long deadline = System.nanoTime() + 60_000_000_000L;
    for (int i = 0; i < found.size(); i++) {
      String id = found.get(i).id();
      if (topology.shardOfNode(id) == null) {
        continue;
      }
      while (true) {
        Long index = auth.ownIndex(addresses.get(i), id);
        if (index != null && index >= 0) {
          break;
        }
        if (System.nanoTime() > deadline) {
          throw CliException.failure("node " + addresses.get(i) + " has applied none of its shard's log after 60 s"
              + " (applied index " + index + ")");
        }
        pause();
      }
    }
  }

  /** Waits (60 s at most) until every node answers {@code cluster_state:ok}: every shard elected a leader. */
  static void awaitOk(Auth auth, List<Address> addresses) {
    long deadline = System.nanoTime() + 60_000_000_000L;
    for (Address a : addresses) {
      while (true) {
        String state;
        try (RespClient c = auth.connect(a, 10_000)) {
          state = fields(c.callForText("CLUSTER", "INFO")).get("cluster_state");
        } catch (IOException e) {
          state = e.getMessage();
        }
        if ("ok".equals(state)) {
          break;
        }
        if (System.nanoTime() > deadline) {
          throw CliException.failure("node " + a + " is not ready after 60 s (cluster_state: " + state + ")");
        }
        pause();
      }
    }
  }

  static void pause() {
    try {
      Thread.sleep(100);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw CliException.failure("interrupted while waiting for the cluster");
    }
  }

  /**
   * The cluster's topology as the metadata group has committed it, asked of node {@code a} (which waits up to 20 s
   * for the group to have a leader).
   */
  static Topology topologyOf(Auth auth, Address a) {
    try (RespClient c = auth.connect(a, 30_000)) {
      return Topology.parse(c.callForText("CLUSTER", "TOPOLOGY"));
    } catch (RespClient.Failure e) {
      throw CliException.failure("cannot read the cluster's topology from " + a + ": " + e.getMessage(), e);
    } catch (IOException | IllegalArgumentException e) {
      throw CliException.failure("cannot read the cluster's topology from " + a + ": " + e.getMessage(), e);
    }
  }

  /**
   * Sends {@code CLUSTER SET-TOPOLOGY next} to {@code a}: the membership change, answered once it committed. Each
   * retry is reported on {@code err}.
   */
  static void setTopology(Auth auth, Address a, Topology next, PrintWriter err) {
    // The change is idempotent (the node plans it from the committed topology and changes only what differs), so a
    // change that did not complete (a group still electing a leader, a new member slow to catch up) is asked again.
    for (int attempt = 1; ; attempt++) {
      try (RespClient c = auth.connect(a, 180_000)) {
        c.call("CLUSTER", "SET-TOPOLOGY", next.encode());
        return;
      } catch (RespClient.ErrorReply e) {
        if (attempt >= 3 || !String.valueOf(e.getMessage()).contains("did not complete")) {
          throw CliException.failure("the membership change through " + a + " failed: " + e.getMessage(), e);
        }
        err.println("bloomery cluster: the membership change did not complete (" + e.getMessage()
            + "); asking again");
        err.flush();
      } catch (IOException e) {
        throw CliException.failure("the membership change through " + a + " failed: " + e.getMessage(), e);
      }
    }
  }

  static void printNodes(Auth auth, Address a, PrintWriter out) {
    try (RespClient c = auth.connect(a, 10_000)) {
      out.print(c.callForText("CLUSTER", "NODES"));
    } catch (IOException e) {
      throw CliException.failure("cannot read the topology back from " + a + ": " + e.getMessage(), e);
    }
    out.flush();
  }

  /**
   * Sends {@code CLUSTER LEAVE} to {@code node}, which the committed topology no longer lists, and says on {@code out}
   * whether it left. One that cannot be reached leaves by itself once it finds that out (every few seconds while it
   * hears from no metadata leader, and on its next start).
   */
  static void leave(Auth auth, Topology.Node node, PrintWriter out) {
    Address a = new Address(node.host(), node.port());
    try (RespClient c = RespClient.connect(a.host(), a.port(), 3000, 30_000, auth.secret())) {
      c.call("CLUSTER", "LEAVE");
      out.println("Node " + node.id() + " (" + a + ") left the cluster and serves no slot.");
    } catch (IOException e) {
      out.println("Node " + node.id() + " (" + a + ") is no longer counted; it did not answer LEAVE (" + e.getMessage()
          + "): it leaves by itself once it finds the cluster no longer lists it, or on its next start.");
    }
  }

  /**
   * Sends {@code CLUSTER FORGET} for each node of {@code gone} to every node of {@code next}: each drops the
   * replication slots those nodes left in its PostgreSQL stores. A node removed while down drops its own only if it
   * runs again, and until then PostgreSQL keeps WAL for each; one that left drops its own as it leaves, and then this
   * finds none. Says on {@code out} what could not be dropped, and how to drop it later.
   */
  static void forget(Auth auth, Topology next, List<Topology.Node> gone, PrintWriter out) {
    int answered = 0;
    List<String> failures = new ArrayList<>();
    for (Topology.Node n : next.nodes()) {
      Address a = new Address(n.host(), n.port());
      try (RespClient c = RespClient.connect(a.host(), a.port(), 3000, 60_000, auth.secret())) {
        for (Topology.Node g : gone) {
          try {
            c.call("CLUSTER", "FORGET", g.id());
          } catch (RespClient.Failure e) {
            failures.add("node " + n.id() + " (" + a + "): " + e.getMessage());
          }
        }
        answered++;
      } catch (IOException e) {
        // a node down now: the others drop the slots, each in the stores it declares
      }
    }
    String ids = String.join(" ", gone.stream().map(Topology.Node::id).toList());
    if (answered == 0) {
      out.println("No remaining node answered CLUSTER FORGET " + ids + ": any replication slot the removed nodes left"
          + " in PostgreSQL stays, retaining WAL, until a node drops it (redis-cli -h HOST -p PORT CLUSTER FORGET ID)"
          + " or you drop it in PostgreSQL (pg_drop_replication_slot).");
    }
    for (String f : failures) {
      out.println("Replication slots of a removed node may be left in PostgreSQL, retaining WAL: " + f
          + " (send CLUSTER FORGET again, or drop them with pg_drop_replication_slot).");
    }
  }

  @Command(name = "add-node", mixinStandardHelpOptions = true, versionProvider = BloomeryCommand.Version.class,
      header = "Add the node at NEW (started with --cluster-enabled yes, in no cluster) to the "
      + "cluster of the node at EXISTING, as a member of a shard: the shard's Raft group brings it up to its log "
      + "first, then counts it. Prints the topology. Run again after it failed (the node it was sent through died), it "
      + "finishes the change; for a node already added, it only prints the topology.")
  static final class AddNode implements Callable<Integer> {
    @ParentCommand ClusterCommand parent;

    @picocli.CommandLine.Mixin Auth auth = new Auth();

    @Option(names = "--shard", paramLabel = "NAME", description = "The shard it joins (default: the one with the "
        + "fewest members, the first of them on a tie).")
    String shard;

    @Parameters(index = "0", paramLabel = "NEW", description = "HOST:PORT of the node to add.")
    String added;

    @Parameters(index = "1", paramLabel = "EXISTING", description = "HOST:PORT of a node of the cluster.")
    String existing;

    @Override
    public Integer call() {
      Address newAddress = Address.parse(added);
      Address at = Address.parse(existing);
      Topology current = topologyOf(auth, at);
      Described described = describeAny(auth, newAddress);
      Topology.Node node = described.node();
      PrintWriter out = parent.root.out();
      Topology.Shard member = current.shardOfNode(node.id());
      if (member != null) { // added already (this command run again): the committed topology lists it
        if (shard != null && !shard.equals(member.name())) {
          throw CliException.usage("node " + newAddress + " is a member of shard " + member.name() + ", not " + shard);
        }
        awaitFormed(auth, current, List.of(newAddress), List.of(node));
        out.println("Node " + node.id() + " (" + newAddress + ") is already a member of shard " + member.name() + ":");
        printNodes(auth, at, out);
        return BloomeryCommand.EXIT_OK;
      }
      // A node in a cluster that the committed topology does not list joined for an add-node whose change stopped
      // halfway (the node it was sent through died): joining again with the same shard is a no-op on the node, and
      // the change, planned from the committed topology, does only what is left.
      String target = shard;
      if (target == null) {
        target = current.shards().stream().min(java.util.Comparator.comparingInt(s -> s.members().size()))
            .orElseThrow().name();
      }
      Topology next;
      try {
        next = current.withMember(target, node);
      } catch (IllegalArgumentException e) {
        throw CliException.usage("cannot add " + newAddress + ": " + e.getMessage(), e);
      }
      try (RespClient c = auth.connect(newAddress, 60_000)) {
        c.call("CLUSTER", "JOIN-TOPOLOGY", next.encode(), current.encode());
      } catch (IOException e) {
        throw CliException.failure("node " + newAddress + " did not join: " + e.getMessage()
            + (described.inCluster() == null ? "" : " (" + described.inCluster() + ")"), e);
      }
      setTopology(auth, at, next, parent.root.err());
      awaitFormed(auth, next, List.of(newAddress), List.of(node));
      out.println("Node " + node.id() + " (" + newAddress + ") is a member of shard " + target + ":");
      printNodes(auth, at, out);
      return BloomeryCommand.EXIT_OK;
    }
  }

  @Command(name = "del-node", mixinStandardHelpOptions = true, versionProvider = BloomeryCommand.Version.class,
      header = "Remove node NODE_ID from the cluster of the node at EXISTING (another node): "
      + "its shard's Raft group and the metadata group stop counting it, and the node, if it is up, drops its groups "
      + "and serves no slot. Prints the topology.")
  static final class DelNode implements Callable<Integer> {
    @ParentCommand ClusterCommand parent;

    @picocli.CommandLine.Mixin Auth auth = new Auth();

    @Parameters(index = "0", paramLabel = "EXISTING", description = "HOST:PORT of a node that stays in the cluster.")
    String existing;

    @Parameters(index = "1", paramLabel = "NODE_ID", description = "The id of the node to remove (CLUSTER NODES).")
    String id;

    @Override
    public Integer call() {
      Address at = Address.parse(existing);
      Topology current = topologyOf(auth, at);
      Topology.Node gone = current.node(id);
      if (gone == null) {
        throw CliException.usage("node " + id + " is not in cluster " + current.cluster());
      }
      if (gone.host().equals(at.host()) && gone.port() == at.port()) {
        throw CliException.usage("send del-node to another node than the one it removes");
      }
      Topology next;
      try {
        next = current.without(id);
      } catch (IllegalArgumentException e) {
        throw CliException.usage("cannot remove " + id + ": " + e.getMessage(), e);
      }
      setTopology(auth, at, next, parent.root.err());
      PrintWriter out = parent.root.out();
      leave(auth, gone, out);
      forget(auth, next, List.of(gone), out);
      printNodes(auth, at, out);
      return BloomeryCommand.EXIT_OK;
    }
  }

  @Command(name = "add-shard", mixinStandardHelpOptions = true, versionProvider = BloomeryCommand.Version.class,
      header = "Add a new shard to the cluster of the node at EXISTING, replicated by the "
      + "nodes at NEW... (each started with --cluster-enabled yes, in no cluster; three for a shard that survives the "
      + "loss of one). It serves no slot until bloomery cluster reshard moves some to it. Prints the topology. Run "
      + "again after it failed, it finishes the change.")
  static final class AddShard implements Callable<Integer> {
    @ParentCommand ClusterCommand parent;

    @picocli.CommandLine.Mixin Auth auth = new Auth();

    @Parameters(index = "0", paramLabel = "EXISTING", description = "HOST:PORT of a node of the cluster.")
    String existing;

    @Parameters(index = "1..*", arity = "1..*", paramLabel = "NEW", description = "HOST:PORT of each new member.")
    List<String> added;

    @Override
    public Integer call() {
      Address at = Address.parse(existing);
      List<Address> addresses = added.stream().map(Address::parse).toList();
      if (new HashSet<>(addresses).size() != addresses.size()) {
        throw CliException.usage("a node is listed twice");
      }
      Topology current = topologyOf(auth, at);
      List<Topology.Node> members = new ArrayList<>();
      List<Described> described = new ArrayList<>();
      for (Address a : addresses) {
        Described d = describeAny(auth, a);
        described.add(d);
        members.add(d.node());
      }
      PrintWriter out = parent.root.out();
      Set<Topology.Shard> listed = new HashSet<>();
      for (Topology.Node n : members) {
        listed.add(current.shardOfNode(n.id()));
      }
      if (listed.size() == 1 && !listed.contains(null)) { // added already (this command run again)
        Topology.Shard shard = listed.iterator().next();
        if (!new HashSet<>(shard.members()).equals(new HashSet<>(members.stream()
            .map(Topology.Node::id).toList()))) {
          throw CliException.usage("these nodes are members of shard " + shard.name() + " with other nodes");
        }
        awaitFormed(auth, current, addresses, members);
        out.println("Shard " + shard.name() + " of " + members.size() + " nodes is already in the cluster:");
        printNodes(auth, at, out);
        return BloomeryCommand.EXIT_OK;
      }
      if (listed.stream().anyMatch(java.util.Objects::nonNull)) {
        throw CliException.usage("some of these nodes are in the cluster already: add only new nodes");
      }
      Topology next;
      try {
        next = current.withShard(members);
      } catch (IllegalArgumentException e) {
        throw CliException.usage("cannot add the shard: " + e.getMessage(), e);
      }
      for (int i = 0; i < addresses.size(); i++) {
        try (RespClient c = auth.connect(addresses.get(i), 60_000)) {
          c.call("CLUSTER", "JOIN-TOPOLOGY", next.encode(), current.encode());
        } catch (IOException e) {
          throw CliException.failure("node " + addresses.get(i) + " did not join: " + e.getMessage()
              + (described.get(i).inCluster() == null ? "" : " (" + described.get(i).inCluster() + ")"), e);
        }
      }
      setTopology(auth, at, next, parent.root.err());
      awaitFormed(auth, next, addresses, members);
      String name = next.shards().get(next.shards().size() - 1).name();
      out.println("Shard " + name + " of " + members.size() + " nodes added; it serves no slot until you move some "
          + "to it: bloomery cluster reshard --from SHARD --to " + name + " --slots N " + at);
      printNodes(auth, at, out);
      return BloomeryCommand.EXIT_OK;
    }
  }

  @Command(name = "del-shard", mixinStandardHelpOptions = true, versionProvider = BloomeryCommand.Version.class,
      header = "Remove shard SHARD (its number as cluster status lists it, its name, or the id of one of its nodes) "
      + "and its nodes from the cluster of the node at EXISTING (a node of another shard). The shard must serve no "
      + "slot: move its slots away first with bloomery cluster reshard. Its nodes leave the metadata group one at a "
      + "time, then drop their groups and serve no slot. Prints the topology.")
  static final class DelShard implements Callable<Integer> {
    @ParentCommand ClusterCommand parent;

    @picocli.CommandLine.Mixin Auth auth = new Auth();

    @Parameters(index = "0", paramLabel = "EXISTING", description = "HOST:PORT of a node that stays in the cluster.")
    String existing;

    @Parameters(index = "1", paramLabel = "SHARD", description = "The shard to remove.")
    String shard;

    @Override
    public Integer call() {
      Address at = Address.parse(existing);
      Topology current = topologyOf(auth, at);
      Topology.Shard gone = current.shard(Reshard.shardName(current, shard));
      List<Topology.Node> members = gone.members().stream().map(current::node).toList();
      for (Topology.Node n : members) {
        if (n.host().equals(at.host()) && n.port() == at.port()) {
          throw CliException.usage("send del-shard to a node of another shard than the one it removes");
        }
      }
      Topology next;
      try {
        next = current.withoutShard(gone.name());
      } catch (IllegalArgumentException e) {
        throw CliException.usage("cannot remove shard " + gone.name() + ": " + e.getMessage(), e);
      }
      setTopology(auth, at, next, parent.root.err());
      PrintWriter out = parent.root.out();
      out.println("Shard " + gone.name() + " is removed from cluster " + current.cluster() + ".");
      for (Topology.Node n : members) {
        leave(auth, n, out);
      }
      forget(auth, next, members, out);
      printNodes(auth, at, out);
      return BloomeryCommand.EXIT_OK;
    }
  }

  @Command(name = "reshard", mixinStandardHelpOptions = true, versionProvider = BloomeryCommand.Version.class,
      header = "Move --slots N slots, with their keys, from shard --from to shard --to (a "
      + "shard's number as cluster status lists it, its name, or the id of one of its nodes): the highest slots of "
      + "--from, 64 at a time. Writes to a slot wait while its keys are copied; clients are then sent on with "
      + "MOVED. A reshard that stopped (the node running it died) is finished first when it is run again; --slots 0 "
      + "only finishes it. "
      + "Prints what moved and the topology.")
  static final class Reshard implements Callable<Integer> {
    @ParentCommand ClusterCommand parent;

    @picocli.CommandLine.Mixin Auth auth = new Auth();

    @Option(names = "--from", required = true, paramLabel = "SHARD", description = "The shard the slots leave.")
    String from;

    @Option(names = "--to", required = true, paramLabel = "SHARD", description = "The shard the slots go to.")
    String to;

    @Option(names = "--slots", required = true, paramLabel = "N", description = "How many slots to move (0 to 16384).")
    int count;

    @Parameters(arity = "1", paramLabel = "HOST:PORT", description = "Any node of the cluster.")
    String node;

    @Override
    public Integer call() {
      if (count < 0 || count > 16384) {
        throw CliException.usage("--slots must be from 0 to 16384, not " + count);
      }
      Address at = Address.parse(node);
      Topology current = topologyOf(auth, at);
      String source = shardName(current, from);
      String target = shardName(current, to);
      PrintWriter out = parent.root.out();
      try (RespClient c = auth.connect(at, 3_600_000)) {
        out.println(c.callForText("CLUSTER", "RESHARD", source, target, Integer.toString(count)));
      } catch (RespClient.ErrorReply e) {
        throw CliException.failure("the reshard through " + at + " failed: " + e.getMessage(), e);
      } catch (IOException e) {
        throw CliException.failure("the reshard through " + at + " did not answer (" + e.getMessage() + "): run it "
            + "again to finish it", e);
      }
      printNodes(auth, at, out);
      return BloomeryCommand.EXIT_OK;
    }

    /** The name of the shard {@code given} names: its name, its number in the topology, or one of its nodes' ids. */
    static String shardName(Topology t, String given) {
      if (t.shard(given) != null) {
        return given;
      }
      if (given.matches("\\d{1,4}") && Integer.parseInt(given) < t.shards().size()) {
        return t.shards().get(Integer.parseInt(given)).name();
      }
      Topology.Shard of = t.shardOfNode(given);
      if (of != null) {
        return of.name();
      }
      throw CliException.usage("no shard '" + given + "' in cluster " + t.cluster() + ": give a shard's number (0 to "
          + (t.shards().size() - 1) + "), its name (" + String.join(", ", t.shards().stream().map(Topology.Shard::name)
          .toList()) + ") or the id of one of its nodes");
    }
  }

  @Command(name = "failover", mixinStandardHelpOptions = true, versionProvider = BloomeryCommand.Version.class,
      header = "Make the node at HOST:PORT its shard's leader: a Raft leadership transfer "
      + "(CLUSTER FAILOVER sent to that node), which loses no acknowledged write. Prints the shard's leader after it.")
  static final class Failover implements Callable<Integer> {
    @ParentCommand ClusterCommand parent;

    @picocli.CommandLine.Mixin Auth auth = new Auth();

    @Parameters(arity = "1", paramLabel = "HOST:PORT", description = "A follower of the shard whose leader it becomes.")
    String node;

    @Override
    public Integer call() throws IOException {
      Address a = Address.parse(node);
      try (RespClient c = auth.connect(a, 30_000)) {
        c.call("CLUSTER", "FAILOVER");
        String myself = c.callForText("CLUSTER", "NODES").lines().filter(l -> l.contains("myself")).findFirst()
            .orElse("");
        PrintWriter out = parent.root.out();
        out.println("node " + a + " now leads its shard:");
        out.println(myself);
        out.flush();
      } catch (RespClient.Failure e) {
        throw CliException.failure("failover to " + a + " failed: " + e.getMessage(), e);
      }
      return BloomeryCommand.EXIT_OK;
    }
  }

  @Command(name = "status", mixinStandardHelpOptions = true, versionProvider = BloomeryCommand.Version.class,
      header = "Show a cluster's shards: slots, leader, followers, each member's applied log "
      + "index and how far a follower is behind its leader.")
  static final class Status implements Callable<Integer> {
    @ParentCommand ClusterCommand parent;

    @picocli.CommandLine.Mixin Auth auth = new Auth();

    @Parameters(arity = "1", paramLabel = "HOST:PORT", description = "Any node of the cluster.")
    String node;

    @Override
    public Integer call() throws IOException {
      Address first = Address.parse(node);
      PrintWriter out = parent.root.out();
      List<Object> shards;
      Map<String, String> info;
      try (RespClient c = auth.connect(first, 10_000)) {
        info = fields(c.callForText("CLUSTER", "INFO"));
        shards = (List<Object>) c.call("CLUSTER", "SHARDS");
      } catch (RespClient.Failure e) {
        throw CliException.failure("cannot read node " + first + ": " + e.getMessage(), e);
      }
      out.println("cluster_state:" + info.get("cluster_state") + " shards:" + info.get("cluster_size") + " nodes:"
          + info.get("cluster_known_nodes") + " epoch:" + info.get("cluster_current_epoch"));
      Topology.Migration migration;
      try {
        migration = topologyOf(auth, first).migration();
      } catch (CliException e) { // the metadata group has no leader right now: the shards' state is still worth showing
        migration = null;
        out.println("reshard state: unknown (" + e.getMessage() + ")");
      }
      if (migration != null) {
        out.println("reshard under way: " + migration.slotList().length + " slots from " + migration.from() + " to "
            + migration.to() + " (bloomery cluster reshard --from " + migration.from() + " --to " + migration.to()
            + " --slots 0 " + first + " finishes it)");
      }
      int n = 0;
      for (Object shard : shards) {
        Map<String, Object> s = flatMap(shard);
        List<Object> slots = (List<Object>) s.get("slots");
        StringBuilder ranges = new StringBuilder();
        for (int i = 0; i + 1 < slots.size(); i += 2) {
          ranges.append(ranges.isEmpty() ? "" : ",").append(slots.get(i)).append('-').append(slots.get(i + 1));
        }
        out.println("shard " + n++ + "  slots " + ranges);
        Long leaderIndex = null;
        for (Object member : (List<Object>) s.get("nodes")) {
          Map<String, Object> m = flatMap(member);
          Address a = new Address(text(m.get("ip")), ((Long) m.get("port")).intValue());
          String id = text(m.get("id"));
          boolean leader = text(m.get("role")).equals("master");
          Long index = auth.ownIndex(a, id);
          if (leader) {
            leaderIndex = index;
          }
          String applied = index == null ? "unreachable" : "applied " + index
              + (leader || leaderIndex == null ? "" : "  lag " + Math.max(0, leaderIndex - index));
          out.println("  " + (leader ? "leader  " : "follower") + "  " + id + "  " + a + "  " + applied);
        }
      }
      out.flush();
      return BloomeryCommand.EXIT_OK;
    }

  }

  /** {@code name:value} lines (CLUSTER INFO) as a map. */
  static Map<String, String> fields(String text) {
    Map<String, String> out = new LinkedHashMap<>();
    for (String line : text.split("\r?\n")) {
      int colon = line.indexOf(':');
      if (colon > 0) {
        out.put(line.substring(0, colon), line.substring(colon + 1).strip());
      }
    }
    return out;
  }

  /** A RESP2 map (a flat array of names and values) as a map. */
  @SuppressWarnings("unchecked")
  private static Map<String, Object> flatMap(Object reply) {
    List<Object> flat = (List<Object>) reply;
    Map<String, Object> out = new LinkedHashMap<>();
    for (int i = 0; i + 1 < flat.size(); i += 2) {
      out.put(text(flat.get(i)), flat.get(i + 1));
    }
    return out;
  }

  private static String text(Object o) {
    return o instanceof byte[] b ? new String(b, StandardCharsets.UTF_8) : String.valueOf(o);
  }
}
