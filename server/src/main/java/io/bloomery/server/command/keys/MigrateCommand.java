package io.bloomery.server.command.keys;

import static io.bloomery.server.command.CommandSpec.Flag.MOVABLEKEYS;
import static io.bloomery.server.command.CommandSpec.Flag.NOMULTI;
import static io.bloomery.server.command.CommandSpec.Flag.WRITE;
import static io.bloomery.server.command.CommandSpec.flags;

import io.bloomery.server.command.Args;
import io.bloomery.server.command.CommandException;
import io.bloomery.server.command.CommandTable;
import io.bloomery.server.command.Errors;
import io.bloomery.server.command.Invocation;
import io.bloomery.server.keyspace.Key;
import io.bloomery.server.keyspace.Keyspace;
import io.bloomery.server.keyspace.Watches;
import io.bloomery.server.rdb.DumpPayload;
import io.bloomery.server.resp.Reply;
import io.bloomery.server.state.acl.AclUser;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@code MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH pw | AUTH2 user pw] [KEYS key ...]}
 * as Redis 8 answers it: the keys are dumped ({@link DumpPayload}) on the client's event loop, then a virtual thread
 * connects to the target, pipelines {@code AUTH}, {@code SELECT} and one {@code RESTORE key ttl payload [REPLACE]}
 * per key, reads their replies, and deletes (unless {@code COPY}) every key the target acknowledged, journaled as
 * one {@code DEL}. The client's reply is deferred until then, so no event loop waits for the network; the client's
 * own later commands wait behind it, as Redis blocks the client.
 *
 * <p>Errors, retries and timeouts follow Redis's {@code migrateCommand}: {@code +NOKEY} when no key exists;
 * {@code IOERR error or timeout connecting to the client} when the target cannot be reached in {@code timeout} ms
 * (0 or less: 1000); {@code IOERR error or timeout writing|reading to target instance} on a socket failure, after one
 * retry on a fresh connection unless it timed out or a key was already acknowledged; the first error line the target
 * answers as {@code ERR Target instance replied with error: <its text>}; any other line counts as an
 * acknowledgement. Redis's connection cache is not kept: each MIGRATE connects afresh and sends {@code SELECT}.
 *
 * <p>Redis runs MIGRATE atomically; here other clients run while the keys are in transit, so a key that changes
 * locally in the meantime is kept (the target holds its value as it was dumped) and the reply says so. MIGRATE is
 * refused inside MULTI, which cannot wait for the network without blocking its event loop.
 */
public final class MigrateCommand {
  static final String KEYS_WITH_KEY = "ERR When using MIGRATE KEYS option, the key argument must be set to the "
      + "empty string";
  static final String CONNECT_FAILED = "IOERR error or timeout connecting to the client";
  static final String TARGET_ERROR = "ERR Target instance replied with error: ";
  /** The longest reply line Redis reads from the target (its buffer is 1024 bytes with the terminator). */
  static final int MAX_LINE = 1023;
  /** Bytes written to the target per write, each within the timeout, as Redis does. */
  private static final int CHUNK = 64 * 1024;

  private static final ScheduledExecutorService DEADLINES = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "migrate-deadlines");
    t.setDaemon(true);
    return t;
  });

  private MigrateCommand() {}

  /** Adds MIGRATE to {@code t}. */
  public static void register(CommandTable t) {
    t.add("migrate", -6, flags(WRITE, NOMULTI, MOVABLEKEYS), 3, 3, 1, "keyspace",
        "Atomically transfers a key from one Redis instance to another.", MigrateCommand::migrate);
  }

  /** One key on its way: its name, payload, TTL in ms (0: none) and the watcher that tells whether it changed. */
  private record Moving(Key key, byte[] payload, long ttl, Watches.Watcher watcher) {}

  /** What the target said: the reply for the client and the keys it acknowledged. */
  private record Outcome(Reply reply, List<Moving> acknowledged) {}

  private static Reply migrate(Invocation inv) {
    boolean copy = false;
    boolean replace = false;
    byte[] username = null;
    byte[] password = null;
    int firstKey = 3;
    int numKeys = 1;
    for (int j = 6; j < inv.argc(); j++) {
      int more = inv.argc() - 1 - j;
      if (Args.is(inv.arg(j), "COPY")) {
        copy = true;
      } else if (Args.is(inv.arg(j), "REPLACE")) {
        replace = true;
      } else if (Args.is(inv.arg(j), "AUTH")) {
        if (more < 1) {
          throw new CommandException(Errors.SYNTAX);
        }
        password = inv.arg(++j);
      } else if (Args.is(inv.arg(j), "AUTH2")) {
        if (more < 2) {
          throw new CommandException(Errors.SYNTAX);
        }
        username = inv.arg(++j);
        password = inv.arg(++j);
      } else if (Args.is(inv.arg(j), "KEYS")) {
        if (inv.arg(3).length != 0) {
          throw new CommandException(KEYS_WITH_KEY);
        }
        firstKey = j + 1;
        numKeys = inv.argc() - j - 1;
        break;
      } else {
        throw new CommandException(Errors.SYNTAX);
      }
    }
    checkKeyPermissions(inv, firstKey, firstKey == 3 ? 3 : -1);
    Long timeoutArg = Args.parseLong(inv.arg(5));
    Long dbid = Args.parseLong(inv.arg(4));
    if (timeoutArg == null || dbid == null) {
      throw new CommandException(Errors.NOT_INTEGER);
    }
    long timeout = timeoutArg <= 0 ? 1000 : timeoutArg;
    List<Moving> moving = new ArrayList<>();
    long now = inv.keyspace().now();
    for (int j = 0; j < numKeys; j++) {
      Key key = inv.key(firstKey + j);
      if (inv.server().guards().isGuarded(key)) {
        throw new CommandException(DumpCommands.GUARDED);
      }
      Watches.Watcher watcher = inv.keyspace().watches().newWatcher();
      watcher.watch(key); // before the dump: a change after it marks the watcher
      byte[] payload = dump(inv, key);
      long expireAt = inv.keyspace().expireAt(key);
      long ttl = 0;
      if (payload != null && expireAt >= 0) {
        ttl = Math.max(1, expireAt - now);
        if (expireAt < now) {
          payload = null;
        }
      }
      if (payload == null) {
        watcher.unwatchAll();
        continue;
      }
      moving.add(new Moving(key, payload, ttl, watcher));
    }
    if (moving.isEmpty()) {
      return new Reply.Simple("NOKEY");
    }
    byte[] request = request(username, password, dbid, moving, replace);
    String host = Args.text(inv.arg(1));
    int port = atoi(inv.arg(2));
    boolean keep = copy;
    boolean auth = password != null;
    Keyspace keyspace = inv.keyspace();
    CompletableFuture<Reply> reply = new CompletableFuture<>();
    Thread.ofVirtual().name("migrate " + host + ":" + port).start(() -> {
      try {
        Outcome outcome = transfer(host, port, timeout, request, auth, moving);
        reply.complete(keep ? outcome.reply() : deleteAcknowledged(keyspace, outcome));
      } catch (RuntimeException | Error e) {
        reply.completeExceptionally(e);
      } finally {
        moving.forEach(m -> m.watcher().unwatchAll());
      }
    });
    return inv.defer(reply);
  }

  /** The key's payload, counting the lookup as Redis's {@code lookupKeyRead} does; {@code null} when missing. */
  private static byte[] dump(Invocation inv, Key key) {
    try {
      byte[] payload = inv.keyspace().readLocked(key, v -> v == null ? null : DumpPayload.dump(v));
      inv.countLookup(payload);
      return payload;
    } catch (IllegalArgumentException e) {
      throw new CommandException("ERR " + e.getMessage());
    }
  }

  /**
   * The ACL key check of the keys it moves, {@code firstKey} to {@code lastKey} (-1: the last argument): the key
   * argument, or those after {@code KEYS} (MIGRATE is {@code movablekeys}, the dispatcher checks no key of it).
   */
  private static void checkKeyPermissions(Invocation inv, int firstKey, int lastKey) {
    AclUser user = inv.client().user();
    if (user == null || user.unrestricted() || firstKey >= inv.argc()) {
      return;
    }
    String denied = inv.server().acl().check(user, "migrate", inv.argv(), firstKey, lastKey, 1, "toplevel",
        inv.client()::info);
    if (denied != null) {
      throw new CommandException(denied);
    }
  }

  /** C's {@code atoi}: the leading decimal digits (after an optional sign), 0 when there are none. */
  static int atoi(byte[] s) {
    int i = 0;
    while (i < s.length && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r'))) {
      i++;
    }
    boolean negative = i < s.length && s[i] == '-';
    if (i < s.length && (s[i] == '-' || s[i] == '+')) {
      i++;
    }
    long n = 0;
    while (i < s.length && s[i] >= '0' && s[i] <= '9' && n <= Integer.MAX_VALUE) {
      n = n * 10 + (s[i++] - '0');
    }
    return (int) (negative ? -n : n);
  }

  /** The pipelined commands: AUTH if asked, SELECT, then one RESTORE per key. */
  private static byte[] request(byte[] username, byte[] password, long dbid, List<Moving> moving, boolean replace) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    if (password != null) {
      List<byte[]> auth = new ArrayList<>(List.of(Args.bytes("AUTH")));
      if (username != null) {
        auth.add(username);
      }
      auth.add(password);
      command(out, auth);
    }
    command(out, List.of(Args.bytes("SELECT"), Args.bytes(Long.toString(dbid))));
    for (Moving m : moving) {
      List<byte[]> restore = new ArrayList<>(List.of(Args.bytes("RESTORE"), m.key().bytes(),
          Args.bytes(Long.toString(m.ttl())), m.payload()));
      if (replace) {
        restore.add(Args.bytes("REPLACE"));
      }
      command(out, restore);
    }
    return out.toByteArray();
  }

  private static void command(ByteArrayOutputStream out, List<byte[]> argv) {
    out.writeBytes(("*" + argv.size() + "\r\n").getBytes(StandardCharsets.US_ASCII));
    for (byte[] a : argv) {
      out.writeBytes(("$" + a.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
      out.writeBytes(a);
      out.writeBytes(new byte[] {'\r', '\n'});
    }
  }

  /** A socket failure: whether it was a timeout (then Redis does not retry) and whether it happened writing. */
  private static final class SocketFailure extends Exception {
    final boolean timedOut;

    SocketFailure(boolean timedOut) {
      super(null, null, false, false);
      this.timedOut = timedOut;
    }
  }

  /** Sends the request and reads the replies, with Redis's one retry on a fresh connection. */
  private static Outcome transfer(String host, int port, long timeout, byte[] request, boolean auth,
      List<Moving> moving) {
    boolean mayRetry = true;
    while (true) {
      Socket socket;
      try {
        socket = connect(host, port, timeout);
      } catch (SocketFailure e) {
        return new Outcome(Reply.error(CONNECT_FAILED), List.of());
      } catch (IOException e) { // refused or reset: Redis's non-blocking connect reports it at the first write
        if (mayRetry) {
          mayRetry = false;
          continue;
        }
        return new Outcome(ioError(true), List.of());
      }
      try (socket) {
        try {
          write(socket, request, timeout);
        } catch (SocketFailure e) {
          if (!e.timedOut && mayRetry) {
            mayRetry = false;
            continue;
          }
          return new Outcome(ioError(true), List.of());
        }
        InputStream in = socket.getInputStream();
        String authReply = null;
        String selectReply;
        try {
          if (auth) {
            authReply = readLine(socket, in, timeout);
          }
          selectReply = readLine(socket, in, timeout);
        } catch (SocketFailure e) {
          if (!e.timedOut && mayRetry) {
            mayRetry = false;
            continue;
          }
          return new Outcome(ioError(false), List.of());
        }
        List<Moving> acknowledged = new ArrayList<>();
        String targetError = null;
        SocketFailure failure = null;
        int j = 0;
        for (; j < moving.size(); j++) {
          String line;
          try {
            line = readLine(socket, in, timeout);
          } catch (SocketFailure e) {
            failure = e;
            break;
          }
          if ((authReply != null && authReply.startsWith("-")) || selectReply.startsWith("-")
              || line.startsWith("-")) {
            if (targetError == null) {
              String err = authReply != null && authReply.startsWith("-") ? authReply
                  : selectReply.startsWith("-") ? selectReply : line;
              targetError = err.substring(1);
            }
          } else {
            acknowledged.add(moving.get(j));
          }
        }
        if (targetError == null && failure != null && j == 0 && mayRetry && !failure.timedOut) {
          mayRetry = false;
          continue;
        }
        if (targetError != null) {
          return new Outcome(Reply.error(TARGET_ERROR + targetError), acknowledged);
        }
        if (failure != null) {
          return new Outcome(ioError(false), acknowledged);
        }
        return new Outcome(Reply.OK, acknowledged);
      } catch (IOException e) { // closing the socket failed: nothing more to say than what was read
        throw new java.io.UncheckedIOException(e);
      }
    }
  }

  private static Reply ioError(boolean writing) {
    return Reply.error("IOERR error or timeout " + (writing ? "writing" : "reading") + " to target instance");
  }

  /**
   * Connects within {@code timeout} ms.
   *
   * @throws SocketFailure when the name does not resolve or the connection does not complete in time
   * @throws IOException when the target refuses or resets the connection
   */
  private static Socket connect(String host, int port, long timeout) throws SocketFailure, IOException {
    Socket socket = new Socket();
    try {
      InetSocketAddress address = new InetSocketAddress(host, port);
      if (address.isUnresolved() || port < 0 || port > 65535) {
        throw new SocketFailure(false);
      }
      socket.connect(address, (int) Math.min(Integer.MAX_VALUE, timeout));
      socket.setTcpNoDelay(true);
      return socket;
    } catch (SocketTimeoutException | UnknownHostException | IllegalArgumentException e) {
      socket.close();
      throw new SocketFailure(e instanceof SocketTimeoutException);
    } catch (IOException | SocketFailure e) {
      socket.close();
      throw e;
    }
  }

  /** Runs {@code step} on {@code socket}, closing the socket if it takes longer than {@code timeout} ms. */
  private interface Step<T> {
    T run() throws IOException, SocketFailure;
  }

  private static <T> T withDeadline(Socket socket, long timeout, Step<T> step) throws SocketFailure {
    boolean[] expired = new boolean[1];
    ScheduledFuture<?> deadline = DEADLINES.schedule(() -> {
      synchronized (expired) {
        expired[0] = true;
      }
      try {
        socket.close();
      } catch (IOException ignored) {
        // the blocked call fails either way
      }
    }, timeout, TimeUnit.MILLISECONDS);
    try {
      return step.run();
    } catch (IOException e) {
      synchronized (expired) {
        throw new SocketFailure(expired[0] || e instanceof SocketTimeoutException);
      }
    } finally {
      deadline.cancel(false);
    }
  }

  private static void write(Socket socket, byte[] request, long timeout) throws SocketFailure {
    for (int pos = 0; pos < request.length; pos += CHUNK) {
      int start = pos;
      withDeadline(socket, timeout, () -> {
        OutputStream out = socket.getOutputStream();
        out.write(request, start, Math.min(CHUNK, request.length - start));
        out.flush();
        return null;
      });
    }
  }

  /**
   * One reply line without its terminator, as Redis's {@code connSyncReadLine} reads it within {@code timeout} ms:
   * at most {@link #MAX_LINE} bytes are kept; an empty line or the end of the stream is a failure.
   */
  private static String readLine(Socket socket, InputStream in, long timeout) throws SocketFailure {
    return withDeadline(socket, timeout, () -> {
      ByteArrayOutputStream line = new ByteArrayOutputStream();
      while (true) {
        int b = in.read();
        if (b < 0) {
          throw new SocketFailure(false);
        }
        if (b == '\n') {
          break;
        }
        if (line.size() < MAX_LINE) {
          line.write(b);
        }
      }
      byte[] bytes = line.toByteArray();
      int len = bytes.length > 0 && bytes[bytes.length - 1] == '\r' ? bytes.length - 1 : bytes.length;
      if (len == 0) {
        throw new SocketFailure(false);
      }
      return new String(bytes, 0, len, StandardCharsets.ISO_8859_1);
    });
  }

  /**
   * Deletes the acknowledged keys that did not change since they were dumped, journaled as one {@code DEL}, and
   * returns the reply once that record is durable. A key that changed in transit is kept, and the reply says so
   * unless the target already answered an error.
   */
  private static Reply deleteAcknowledged(Keyspace keyspace, Outcome outcome) {
    if (outcome.acknowledged().isEmpty()) {
      return outcome.reply();
    }
    List<Key> keys = new ArrayList<>();
    for (Moving m : outcome.acknowledged()) {
      keys.add(m.key());
    }
    List<Key> changed = new ArrayList<>();
    Keyspace.Write w = keyspace.write(keys);
    try {
      List<byte[]> record = new ArrayList<>(List.of(Args.bytes("DEL")));
      for (Moving m : outcome.acknowledged()) {
        if (m.watcher().touchedOrExpired()) {
          changed.add(m.key());
        } else if (w.remove(m.key()) != null) {
          record.add(m.key().bytes());
        }
      }
      if (record.size() > 1) {
        w.journal(record);
      }
    } finally {
      w.close();
    }
    w.journaled().toCompletableFuture().join();
    if (!changed.isEmpty() && outcome.reply() == Reply.OK) {
      return Reply.error("ERR MIGRATE kept " + changed.size() + " key(s) that changed locally while in transit: "
          + "the target holds the value as it was dumped");
    }
    return outcome.reply();
  }
}
