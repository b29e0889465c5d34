package io.bloomery.server.state;

import io.bloomery.server.keyspace.Keyspace;
import io.bloomery.server.keyspace.Watches;
import io.bloomery.server.state.acl.AclUser;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;

/**
 * One connection's state: id, protocol version, authentication, name, library info, and a transaction being
 * queued. Touched only by the connection's own thread, except the fields CLIENT LIST / KILL read (volatile, or, for
 * the two written per command, opaque: a volatile store per command is a full fence on the event loop's hot path).
 */
public final class ClientState {
  private static final VarHandle LAST_COMMAND;
  private static final VarHandle LAST_INTERACTION;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      LAST_COMMAND = lookup.findVarHandle(ClientState.class, "lastCommand", String.class);
      LAST_INTERACTION = lookup.findVarHandle(ClientState.class, "lastInteractionNanos", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final long id;
  private final String address;
  private final String localAddress;
  private final long createdMillis;
  private final long createdNanos;
  private volatile int protocol = 2;
  private volatile boolean authenticated;
  /** The ACL user the connection runs as; {@code null}: unrestricted (recovery, in-process callers). */
  private volatile AclUser user;
  private volatile String name = "";
  private volatile String libName = "";
  private volatile String libVersion = "";
  /** Written opaque by the connection's thread, read by CLIENT LIST on any. */
  @SuppressWarnings("unused") // through LAST_COMMAND
  private String lastCommand = "NULL";
  /** {@link System#nanoTime()} of the last command; opaque like {@link #lastCommand}. */
  @SuppressWarnings("unused") // through LAST_INTERACTION
  private long lastInteractionNanos;
  /**
   * While a read's commands run back to back ({@link #chaining}), the end of the previous one, which is the next
   * one's start: one clock read per command instead of two. 0: none.
   */
  private long chainedNanos;
  private boolean chaining;
  private volatile Runnable killer = () -> {};
  private volatile Monitors.Sink monitorSink;
  /** Whether it is in MONITOR mode (set by {@link Monitors}; CLIENT LIST's flag {@code O}). */
  volatile boolean monitoring;
  /** CLIENT NO-TOUCH: the connection's commands leave the keys' idle times alone; its own thread only. */
  private boolean noTouch;
  private boolean closeAfterReply;
  /** Wrong passwords since the connection last authenticated; the connection's thread only. */
  private int authFailures;
  private List<List<byte[]>> queued;
  private boolean transactionFailed;
  private boolean replicaReads;
  private boolean asking;
  private Keyspace.Lease lease;
  private Watches.Watcher watcher;
  private RoutedWatch routedWatch;

  public ClientState(long id, String address, String localAddress, long nowMillis, boolean authenticated) {
    this.id = id;
    this.address = address;
    this.localAddress = localAddress;
    this.createdMillis = nowMillis;
    this.createdNanos = System.nanoTime();
    this.lastInteractionNanos = createdNanos;
    this.authenticated = authenticated;
  }

  /**
   * The connection's key-lock lease ({@link Keyspace.Lease}), or {@code null} where
   * commands take their locks one by one (recovery, in-process callers).
   */
  public Keyspace.Lease lease() {
    return lease;
  }

  public void lease(Keyspace.Lease value) {
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

  /** The ACL user the connection runs as; {@code null}: unrestricted (recovery, in-process callers). */
  public AclUser user() {
    return user;
  }

  public void user(AclUser value) {
    this.user = value;
  }

  /** The ACL user's name, {@code default} when unrestricted. */
  public String userName() {
    AclUser u = user;
    return u == null ? "default" : u.name();
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
    return (String) LAST_COMMAND.getOpaque(this);
  }

  /** Unix ms of the last command, on the wall clock of the connection's creation plus the monotonic time since. */
  public long lastInteractionMillis() {
    return createdMillis + ((long) LAST_INTERACTION.getOpaque(this) - createdNanos) / 1_000_000;
  }

  /** A command named {@code command} starts at {@code nanos} ({@link System#nanoTime()}). */
  public void touched(String command, long nanos) {
    LAST_COMMAND.setOpaque(this, command);
    LAST_INTERACTION.setOpaque(this, nanos);
  }

  /**
   * Whether the commands run next follow each other without a wait (those of one read): then each starts where
   * the previous one ended, by the clock read at its end. Off, the next command reads the clock afresh.
   */
  public void chaining(boolean on) {
    chaining = on;
    if (!on) {
      chainedNanos = 0;
    }
  }

  /** When the command about to run starts: the previous one's end while chaining, else now. */
  public long commandStartNanos() {
    long chained = chainedNanos;
    return chained != 0 ? chained : System.nanoTime();
  }

  /** A command ended at {@code nanos}. */
  public void commandEnded(long nanos) {
    if (chaining) {
      chainedNanos = nanos;
    }
  }

  /** Closes the connection from another thread (CLIENT KILL). */
  public void kill() {
    killer.run();
  }

  public void killer(Runnable action) {
    this.killer = action;
  }

  /** Whether CLIENT NO-TOUCH is on: the connection's commands do not count as accesses of the keys they read. */
  public boolean noTouch() {
    return noTouch;
  }

  public void noTouch(boolean on) {
    this.noTouch = on;
  }

  /** Where this connection takes MONITOR lines; {@code null} where it cannot monitor (recovery, in-process). */
  public Monitors.Sink monitorSink() {
    return monitorSink;
  }

  public void monitorSink(Monitors.Sink sink) {
    this.monitorSink = sink;
  }

  /** Set by QUIT: the connection closes once this reply is written. */
  public boolean closeAfterReply() {
    return closeAfterReply;
  }

  public void closeAfterReply(boolean value) {
    this.closeAfterReply = value;
  }

  public boolean inTransaction() {
    return queued != null;
  }

  public void beginTransaction() {
    queued = new ArrayList<>();
    transactionFailed = false;
  }

  public void queue(List<byte[]> argv) {
    queued.add(argv);
  }

  public void failTransaction() {
    transactionFailed = true;
  }

  public boolean transactionFailed() {
    return transactionFailed;
  }

  public List<List<byte[]>> endTransaction() {
    List<List<byte[]>> q = queued;
    queued = null;
    return q;
  }

  /** The connection's WATCHed keys in {@code watches}, made on first use. */
  public Watches.Watcher watcher(Watches watches) {
    if (watcher == null) {
      watcher = watches.newWatcher();
    }
    return watcher;
  }

  /** UNWATCH: forgets every watched key (EXEC, DISCARD, RESET and a closed connection do too). */
  public void unwatchAll() {
    if (watcher != null) {
      watcher.unwatchAll();
    }
    RoutedWatch w = routedWatch;
    routedWatch = null;
    if (w != null) {
      w.watcher().unwatchAll();
    }
  }

  /**
   * Keys a cluster node's router watches for this connection, in another keyspace than the server's (a shard
   * replica's): the watcher, and what the router must find unchanged at EXEC for the watch to hold ({@code
   * context}: the replica and its leader's term). Forgotten by {@link #unwatchAll}.
   */
  public record RoutedWatch(Watches.Watcher watcher, Object context) {}

  /** The router's watch of this connection, or {@code null}. */
  public RoutedWatch routedWatch() {
    return routedWatch;
  }

  public void routedWatch(RoutedWatch value) {
    routedWatch = value;
  }

  /** A wrong password: returns how many this connection has given since it last authenticated (RESET keeps it). */
  public int authFailed() {
    return ++authFailures;
  }

  /** The connection authenticated: its wrong passwords are forgotten. */
  public void authSucceeded() {
    authFailures = 0;
  }

  /** Whether READONLY let this connection read on a cluster node that is not its slot's leader (until READWRITE). */
  public boolean replicaReads() {
    return replicaReads;
  }

  public void replicaReads(boolean value) {
    replicaReads = value;
  }

  /** ASKING: the connection's next command may run on the node a slot is being moved to (Redis Cluster's ASK). */
  public void asking() {
    asking = true;
  }

  /** Whether ASKING came just before this command; the flag is cleared, as it lasts for one command. */
  public boolean takeAsking() {
    boolean was = asking;
    asking = false;
    return was;
  }

  /**
   * RESET: back to a fresh connection's state (the default user, protocol 2, no name, no transaction, no watched
   * keys, NO-TOUCH off, authentication kept off unless the default user needs no password).
   */
  public void reset(AclUser defaultUser, boolean authenticatedWithoutPassword) {
    user = defaultUser;
    protocol = 2;
    name = "";
    noTouch = false;
    queued = null;
    transactionFailed = false;
    replicaReads = false;
    unwatchAll();
    authenticated = authenticatedWithoutPassword;
  }

  /** One CLIENT LIST line, in Redis 7's field order (memory fields that have no meaning here are 0). */
  public String info() {
    ClientState c = this; // the fields read here are the ones CLIENT LIST may read from another thread
    long now = System.currentTimeMillis();
    return "id=" + c.id() + " addr=" + c.address() + " laddr=" + c.localAddress() + " fd=-1 name=" + c.name()
        + " age=" + (now - c.createdMillis()) / 1000 + " idle=" + (now - c.lastInteractionMillis()) / 1000
        + " flags=" + (c.monitoring ? "O" : c.inTransaction() ? "x" : "N") + " db=0 sub=0 psub=0 ssub=0 multi="
        + (c.inTransaction() ? "0" : "-1") + " watch=0 qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0"
        + " oll=0 omem=0 tot-mem=0 events=r cmd=" + c.lastCommand() + " user=" + c.userName() + " redir=-1 resp="
        + c.protocol() + " lib-name=" + c.libName() + " lib-ver=" + c.libVersion();
  }
}
