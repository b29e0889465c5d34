package io.bloomery.cli;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.commands.ProtocolCommand;
import redis.clients.jedis.resps.ClusterShardInfo;
import redis.clients.jedis.resps.ClusterShardNodeInfo;
import redis.clients.jedis.util.SafeEncoder;

/**
 * Cluster nodes as real processes ({@code bloomery serve --cluster-enabled yes}) on loopback, each on its own
 * directory under one folder, for the cluster ITs: started, made a cluster with {@code bloomery cluster create},
 * killed with SIGKILL and started again on their directories.
 */
final class ClusterNodes implements AutoCloseable {
  private final Path dir;
  /** Arguments every node's {@code bloomery serve} gets after the cluster's own (e.g. {@code --store NAME=URL}). */
  private final List<String> extraServeArgs;
  private final Map<Integer, Process> nodes = new LinkedHashMap<>();
  private final Map<Integer, Integer> busPorts = new LinkedHashMap<>();
  /** The node started with {@code --bind 0.0.0.0}, or -1. */
  private int wildcardNode = -1;

  ClusterNodes(Path dir) {
    this(dir, List.of());
  }

  /** Nodes each started with {@code extraServeArgs} appended to its {@code bloomery serve} command line. */
  ClusterNodes(Path dir, List<String> extraServeArgs) {
    this.dir = dir;
    this.extraServeArgs = List.copyOf(extraServeArgs);
  }

  /**
   * Starts {@code count} nodes on free client and bus ports and waits until each accepts connections; the one at
   * {@code wildcardIndex} (-1: none) binds {@code 0.0.0.0} and announces {@code 127.0.0.1}. Returns their client
   * ports in order.
   */
  List<Integer> start(int count, int wildcardIndex) throws Exception {
    List<Integer> ports = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      ports.add(freePort());
      busPorts.put(ports.get(i), freePort());
    }
    if (wildcardIndex >= 0) {
      wildcardNode = ports.get(wildcardIndex);
    }
    for (int port : ports) {
      launch(port);
    }
    for (int i = 0; i < ports.size(); i++) {
      ports.set(i, readyOrMoved(ports.get(i)));
    }
    return ports;
  }

  /**
   * Waits until the new node of {@code port} is ready; if it could not bind its ports (another process took one
   * between {@link #freePort} and the node's bind: an outgoing connection's ephemeral port), starts it again on new
   * ones, up to three times. Returns its client port.
   */
  private int readyOrMoved(int port) throws Exception {
    for (int attempt = 0; ; attempt++) {
      try {
        awaitReady(port);
        return port;
      } catch (AssertionError e) {
        String log = Files.readString(log(port));
        boolean bind = log.contains("Failed to start Grpc server") || log.contains("Address already in use");
        if (!bind || attempt >= 3 || nodes.get(port).isAlive()) {
          throw e;
        }
        System.out.printf("ClusterNodes: node %d could not bind its ports; starting it on new ones%n", port);
        boolean wildcard = port == wildcardNode;
        nodes.remove(port);
        busPorts.remove(port);
        port = freePort();
        busPorts.put(port, freePort());
        if (wildcard) {
          wildcardNode = port;
        }
        launch(port);
      }
    }
  }

  int busPort(int port) {
    return busPorts.get(port);
  }

  Path directory(int port) {
    return dir.resolve("node-" + port);
  }

  /** Starts the node of {@code port} on its directory; its output goes to a log of this start's own. */
  void launch(int port) throws IOException {
    Path log = log(port);
    if (Files.exists(log)) {
      Files.move(log, log.resolveSibling(log.getFileName() + ".before-" + System.nanoTime()));
    }
    List<String> command = DedupChild.command("serve", "--cluster-enabled", "yes", "--port", Integer.toString(port),
        "--cluster-port", Integer.toString(busPorts.get(port)), "--http-port", "0",
        "--dir", directory(port).toString());
    if (port == wildcardNode) { // on every interface, announcing the loopback address to clients and nodes
      command.addAll(List.of("--bind", "0.0.0.0", "--cluster-announce-ip", "127.0.0.1"));
    }
    command.addAll(extraServeArgs);
    Process p = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
    nodes.put(port, p);
  }

  private Path log(int port) {
    return dir.resolve("node-" + port + ".log");
  }

  /** The last lines of the log of the node of {@code port}'s current start, for a failure's message. */
  String tail(int port) {
    try {
      List<String> lines = Files.readAllLines(log(port));
      return "--- the last lines of " + log(port) + ":\n"
          + String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size())) + "\n";
    } catch (IOException e) {
      return "--- no log of node " + port + ": " + e + "\n";
    }
  }

  void awaitReady(int port) throws Exception {
    Path log = log(port);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!Files.readString(log).contains(":" + port + "\n")) { // Ready to accept connections tcp on HOST:PORT
      if (!nodes.get(port).isAlive() || System.nanoTime() > deadline) {
        throw new AssertionError("node " + port + " did not start:\n" + Files.readString(log));
      }
      Thread.sleep(100);
    }
  }

  /** Kills the node of {@code port} with SIGKILL ({@link Process#destroyForcibly} on Linux) and waits for it. */
  void kill(int port) throws InterruptedException {
    Process p = nodes.remove(port);
    p.destroyForcibly();
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      throw new AssertionError("node " + port + " did not end 30 s after SIGKILL");
    }
  }

  /**
   * Waits (60 s at most) until the node of {@code port} has applied as much of its shard's log as the node of {@code
   * leader} had applied when this began, each as the node reports it itself ({@code CLUSTER SHARDS}).
   */
  void awaitCaughtUp(int port, int leader) throws InterruptedException {
    long target = appliedIndex(leader);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    long applied;
    while ((applied = appliedIndex(port)) < target) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("node " + port + " applied index " + applied + " of its shard after 60 s; the "
            + "leader " + leader + " had applied " + target + "\n" + tail(port) + tail(leader));
      }
      Thread.sleep(200);
    }
  }

  /** The node's own applied log index of its shard, as its {@code CLUSTER SHARDS} says; -1 while it cannot tell. */
  static long appliedIndex(int port) {
    try (Jedis jedis = new Jedis("127.0.0.1", port)) {
      String id = jedis.clusterMyId();
      for (ClusterShardInfo shard : jedis.clusterShards()) {
        for (ClusterShardNodeInfo node : shard.getNodes()) {
          if (node.getId().equals(id) && node.getReplicationOffset() != null) {
            return node.getReplicationOffset();
          }
        }
      }
      return -1;
    } catch (RuntimeException e) {
      return -1;
    }
  }

  /**
   * The client port of the leader of the shard that serves {@code slot}, as CLUSTER NODES on {@code port} says,
   * asked again for up to 20 s while the node is unreachable or names no leader for the slot (an election, a node
   * that left its cluster or was emptied: such a node would never name one).
   */
  static int leaderPort(int port, int slot) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    RuntimeException last = null;
    while (true) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("node " + port + " named no leader for slot " + slot + " in 20 s", last);
      }
      try {
        int leader = leaderNamedBy(port, slot);
        if (leader >= 0) {
          return leader;
        }
      } catch (RuntimeException e) {
        last = e;
      }
      Thread.sleep(100);
    }
  }

  /**
   * The client port of the leader of the shard that serves {@code slot}, as CLUSTER NODES on {@code port} says
   * now; -1 if it names none.
   *
   * @throws RuntimeException if the node cannot be asked (unreachable, or refusing)
   */
  static int leaderNamedBy(int port, int slot) {
    try (Jedis jedis = new Jedis("127.0.0.1", port)) {
      for (String line : jedis.clusterNodes().split("\n")) {
        String[] f = line.split(" ");
        for (int i = 8; f[2].contains("master") && i < f.length && !f[i].startsWith("["); i++) {
          String[] range = f[i].split("-");
          if (slot >= Integer.parseInt(range[0]) && slot <= Integer.parseInt(range[range.length - 1])) {
            return Integer.parseInt(f[1].substring(f[1].indexOf(':') + 1, f[1].indexOf('@')));
          }
        }
      }
      return -1;
    }
  }

  /**
   * A port nothing listens on now. Bound without {@code SO_REUSEADDR}, so that the kernel does not hand out a port
   * that connections of an earlier node still hold in TIME_WAIT, which a node's Raft server (gRPC) may not bind.
   */
  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket()) {
      s.setReuseAddress(false);
      s.bind(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1);
      return s.getLocalPort();
    }
  }

  static ProtocolCommand command(String name) {
    byte[] raw = SafeEncoder.encode(name);
    return () -> raw;
  }

  /** {@code 127.0.0.1:PORT} of each port. */
  static String[] addresses(List<Integer> ports) {
    return ports.stream().map(p -> "127.0.0.1:" + p).toArray(String[]::new);
  }

  record Run(int status, String out, String err) {}

  /** {@code bloomery ARGS...} in a child JVM (two minutes at most). */
  Run cli(String... args) throws Exception {
    Path out = Files.createTempFile(dir, "out", ".txt");
    Path err = Files.createTempFile(dir, "err", ".txt");
    Process p = new ProcessBuilder(DedupChild.command(args)).redirectOutput(out.toFile()).redirectError(err.toFile())
        .start();
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("bloomery " + String.join(" ", args) + " did not end");
    }
    return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
  }

  /** {@code bloomery cluster create --replication-factor FACTOR ADDRESSES...}. */
  Run create(int factor, String... addresses) throws Exception {
    List<String> args = new ArrayList<>(List.of("cluster", "create", "--replication-factor", Integer.toString(factor)));
    args.addAll(List.of(addresses));
    return cli(args.toArray(String[]::new));
  }

  /** Kills every node still running (SIGKILL) and waits for each. */
  @Override
  public void close() throws InterruptedException {
    for (Process p : nodes.values()) {
      p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
    nodes.clear();
  }
}
