package io.bloomery.server.command;

import java.util.ArrayList;
import java.util.List;

/**
 * One connection's state: id, protocol version, authentication, name, library info, and a transaction being
 * queued. Touched only by the connection's own thread, except the fields CLIENT LIST / KILL read (volatile).
 */
public final class ClientState {
  private final long id;
  private final String address;
  private final String localAddress;
  private final long createdMillis;
  private volatile int protocol = 2;
  private volatile boolean authenticated;
  private volatile String name = "";
  private volatile String libName = "";
  private volatile String libVersion = "";
  private volatile String lastCommand = "NULL";
  private volatile long lastInteractionMillis;
  private volatile Runnable killer = () -> {};
  private boolean closeAfterReply;
  private List<List<byte[]>> queued;
  private boolean transactionFailed;
  private io.bloomery.server.keyspace.Keyspace.Lease lease;

  public ClientState(long id, String address, String localAddress, long nowMillis, boolean authenticated) {
    this.id = id;
    this.address = address;
    this.localAddress = localAddress;
    this.createdMillis = nowMillis;
    this.lastInteractionMillis = nowMillis;
    this.authenticated = authenticated;
  }

  /**
   * The connection's key-lock lease ({@link io.bloomery.server.keyspace.Keyspace.Lease}), or {@code null} where
   * commands take their locks one by one (recovery, in-process callers).
   */
  public io.bloomery.server.keyspace.Keyspace.Lease lease() {
    return lease;
  }

  public void lease(io.bloomery.server.keyspace.Keyspace.Lease value) {
    this.lease = value;
  }

  /** Lets go of the lease's locks, if it holds any. */
  public void releaseLease() {
    if (lease != null) {
      lease.release();
    }
  }

  public long id() {
    return id;
  }

  public String address() {
    return address;
  }

  public String localAddress() {
    return localAddress;
  }

  public long createdMillis() {
    return createdMillis;
  }

  public int protocol() {
    return protocol;
  }

  public void protocol(int version) {
    this.protocol = version;
  }

  public boolean authenticated() {
    return authenticated;
  }

  public void authenticated(boolean value) {
    this.authenticated = value;
  }

  public String name() {
    return name;
  }

  public void name(String value) {
    this.name = value;
  }

  public String libName() {
    return libName;
  }

  public void libName(String value) {
    this.libName = value;
  }

  public String libVersion() {
    return libVersion;
  }

  public void libVersion(String value) {
    this.libVersion = value;
  }

  public String lastCommand() {
    return lastCommand;
  }

  public long lastInteractionMillis() {
    return lastInteractionMillis;
  }

  void touched(String command, long nowMillis) {
    this.lastCommand = command;
    this.lastInteractionMillis = nowMillis;
  }

  /** Closes the connection from another thread (CLIENT KILL). */
  public void kill() {
    killer.run();
  }

  public void killer(Runnable action) {
    this.killer = action;
  }

  /** Set by QUIT: the connection closes once this reply is written. */
  public boolean closeAfterReply() {
    return closeAfterReply;
  }

  void closeAfterReply(boolean value) {
    this.closeAfterReply = value;
  }

  boolean inTransaction() {
    return queued != null;
  }

  void beginTransaction() {
    queued = new ArrayList<>();
    transactionFailed = false;
  }

  void queue(List<byte[]> argv) {
    queued.add(argv);
  }

  void failTransaction() {
    transactionFailed = true;
  }

  boolean transactionFailed() {
    return transactionFailed;
  }

  List<List<byte[]>> endTransaction() {
    List<List<byte[]>> q = queued;
    queued = null;
    return q;
  }

  /** RESET: back to a fresh connection's state (protocol 2, no name, no transaction, authentication kept off). */
  void reset(boolean authenticatedWithoutPassword) {
    protocol = 2;
    name = "";
    queued = null;
    transactionFailed = false;
    authenticated = authenticatedWithoutPassword;
  }
}
