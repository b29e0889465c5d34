package io.bloomery.cluster.node;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Who a node is: its 40-hex id, made on the node's first start and kept in {@code nodes.conf} in its data directory
 * (as Redis Cluster keeps its node id), with the client and bus addresses it announced then. The Raft logs in the
 * same directory are this id's: a later start with other addresses is refused, so that a directory copied to
 * another node, or a node started with another node's directory, never speaks for a member it is not.
 *
 * @param id the node id: 40 lower-case hex digits (also its Raft peer id)
 * @param host the host clients are told to use
 * @param port the port clients are told to use
 * @param busHost the host of the cluster bus (the Raft server), as other nodes reach it
 * @param busPort the bus port
 */
public record NodeIdentity(String id, String host, int port, String busHost, int busPort) {
  /** The file, in the data directory. */
  public static final String FILE = "nodes.conf";

  /**
   * The identity stored in {@code dir}, or a new one stored there if {@code dir} has none.
   *
   * @throws IOException if the stored identity announced other addresses (naming both), or the file is damaged
   */
  public static NodeIdentity open(Path dir, String host, int port, String busHost, int busPort) throws IOException {
    Path file = dir.resolve(FILE);
    if (!Files.exists(file)) {
      Files.createDirectories(dir);
      byte[] random = new byte[20];
      new SecureRandom().nextBytes(random);
      NodeIdentity fresh = new NodeIdentity(HexFormat.of().formatHex(random), host, port, busHost, busPort);
      Path tmp = dir.resolve(FILE + ".tmp");
      Files.writeString(tmp, fresh.encode(), StandardCharsets.UTF_8);
      Files.move(tmp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
      return fresh;
    }
    NodeIdentity stored;
    try {
      stored = parse(Files.readString(file, StandardCharsets.UTF_8));
    } catch (RuntimeException e) {
      throw new IOException(file + " is not a node identity: " + e.getMessage(), e);
    }
    if (!stored.host().equals(host) || stored.port() != port || !stored.busHost().equals(busHost)
        || stored.busPort() != busPort) {
      throw new IOException("data directory " + dir + " belongs to node " + stored.id() + " announced as "
          + stored.host() + ":" + stored.port() + " with cluster bus " + stored.busHost() + ":" + stored.busPort()
          + ", but this node is configured as " + host + ":" + port + " with cluster bus " + busHost + ":" + busPort
          + ": start it with the options it had, or give this node an empty --dir");
    }
    return stored;
  }

  /** {@code id} if it is 40 lower-case hex digits. */
  static String checkId(String id) {
    if (id.length() != 40 || !id.chars().allMatch(c -> (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      throw new IllegalArgumentException("'" + id + "' is not a node id (40 hex digits)");
    }
    return id;
  }

  private String encode() {
    return "# A Bloomery cluster node's identity: its Raft logs in this directory are this node's. Do not edit.\n"
        + "id " + id + "\nannounce " + host + ":" + port + "\nbus " + busHost + ":" + busPort + "\n";
  }

  private static NodeIdentity parse(String text) {
    Map<String, String> fields = new LinkedHashMap<>();
    for (String line : text.split("\n")) {
      String l = line.strip();
      if (!l.isEmpty() && !l.startsWith("#")) {
        String[] kv = l.split(" ", 2);
        fields.put(kv[0], kv.length > 1 ? kv[1] : "");
      }
    }
    String announce = required(fields, "announce");
    String bus = required(fields, "bus");
    return new NodeIdentity(checkId(required(fields, "id")), host(announce), port(announce), host(bus), port(bus));
  }

  private static String required(Map<String, String> fields, String name) {
    String v = fields.get(name);
    if (v == null) {
      throw new IllegalArgumentException("no '" + name + "' line");
    }
    return v;
  }

  private static String host(String address) {
    return address.substring(0, address.lastIndexOf(':'));
  }

  private static int port(String address) {
    return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
  }
}
