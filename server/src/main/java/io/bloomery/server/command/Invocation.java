package io.bloomery.server.command;

import io.bloomery.server.keyspace.Key;
import io.bloomery.server.keyspace.Keyspace;
import io.bloomery.server.resp.Reply;
import io.bloomery.server.state.ClientState;
import io.bloomery.server.state.GuardedKeys;
import io.bloomery.server.state.ServerContext;
import io.bloomery.server.state.Settings;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * One command being executed: its arguments, the client, the server, and the writes it opened (whose journal
 * records the reply waits for).
 */
public final class Invocation {
  private final ClientState client;
  private final List<byte[]> argv;
  private final ServerContext server;
  private final Keyspace.Write outer;
  private final boolean replaying;
  private boolean leasable;
  private Keyspace.Write leased;
  private final List<Keyspace.Write> writes = new ArrayList<>(1);
  private CompletionStage<Reply> deferred;
  private java.util.function.Consumer<Boolean> written;

  Invocation(ClientState client, List<byte[]> argv, ServerContext server, Keyspace.Write outer, boolean replaying) {
    this.client = client;
    this.argv = argv;
    this.server = server;
    this.outer = outer;
    this.replaying = replaying;
  }

  public ClientState client() {
    return client;
  }

  public ServerContext server() {
    return server;
  }

  public Keyspace keyspace() {
    return server.keyspace();
  }

  public Settings settings() {
    return server.settings();
  }

  /** Counts a keyspace lookup that found {@code value} ({@code null}: a miss) for INFO stats. */
  public void countLookup(Object value) {
    if (value == null) {
      server.stats().keyspaceMisses.increment();
    } else {
      server.stats().keyspaceHits.increment();
    }
  }

  /** Lets this command's first one-key write use the connection's lease (the dispatcher decides). */
  void leasable(boolean value) {
    this.leasable = value;
  }

  /** Whether this is recovery re-executing the journal (nothing is journaled again). */
  public boolean replaying() {
    return replaying;
  }

  public List<byte[]> argv() {
    return argv;
  }

  public int argc() {
    return argv.size();
  }

  public byte[] arg(int i) {
    return argv.get(i);
  }

  public String text(int i) {
    return Args.text(argv.get(i));
  }

  public Key key(int i) {
    return Key.of(argv.get(i));
  }

  /** argv[0] exactly as the client typed it (RedisModule_WrongArity quotes it so). */
  public String typedName() {
    return Args.text(argv.get(0));
  }

  /** The arity error for this command (Redis 8 quotes the registered lower-case name, also for module checks). */
  public CommandException wrongArity() {
    return new CommandException(Errors.arity(Args.lower(argv.get(0))));
  }

  /**
   * Opens a write on {@code keys} (inside EXEC: re-enters the transaction's write, which already holds them). Close
   * it with try-with-resources; the reply waits for its journal records.
   */
  public Keyspace.Write write(Collection<Key> keys) {
    Keyspace.Write w;
    if (outer != null) {
      for (Key k : keys) {
        if (!outer.holds(k)) {
          throw new IllegalStateException("transaction does not hold key " + k);
        }
      }
      w = outer.reenter();
    } else if (leasable && writes.isEmpty() && keys.size() == 1 && client.lease() != null) {
      w = keyspace().write(keys.iterator().next(), client.lease());
      leased = w;
    } else {
      if (leased == null || leased.closed()) {
        client.releaseLease(); // never hold a lease while waiting for another key's lock
      }
      w = keyspace().write(keys);
    }
    GuardedKeys guards = server == null || replaying ? null : server.guards();
    if (guards != null) { // checked under the keys' write lock, as GUARD.RESERVE claims a name under it
      for (Key k : keys) {
        if (guards.isGuarded(k)) {
          w.close();
          throw new CommandException(GuardedKeys.WRONGTYPE);
        }
      }
    }
    writes.add(w);
    return w;
  }

  public Keyspace.Write write(Key key) {
    return write(List.of(key));
  }

  /** Opens a write over the whole keyspace (FLUSHALL); inside EXEC the transaction already holds it. */
  public Keyspace.Write writeAll() {
    if (outer == null) {
      client.releaseLease();
    }
    Keyspace.Write w = outer != null ? outer.reenter() : keyspace().writeAll();
    writes.add(w);
    return w;
  }

  /** Journals this command's argv verbatim through {@code w} (not during replay). */
  public void journalVerbatim(Keyspace.Write w) {
    journal(w, argv);
  }

  /** Journals {@code record} through {@code w} (not during replay). */
  public void journal(Keyspace.Write w, List<byte[]> record) {
    if (!replaying) {
      w.journal(record);
    }
  }

  /**
   * Answers later: the handler returns {@code null} and the connection writes {@code reply}'s value when it
   * completes (in order with the connection's other replies). For commands that wait on an external store, so that
   * no event-loop thread blocks; not allowed inside MULTI (such commands are NOMULTI) nor during replay.
   */
  public Reply defer(CompletionStage<Reply> reply) {
    if (!mayDefer()) {
      throw new IllegalStateException("a deferred reply inside a transaction or replay");
    }
    this.deferred = reply;
    return null;
  }

  /**
   * {@link #defer(CompletionStage)}, and {@code written} is told whether the reply then reached the connection's
   * socket ({@code false}: the connection was closed first): an external store clears its "not yet acknowledged"
   * mark only then.
   */
  public Reply defer(CompletionStage<Reply> reply, java.util.function.Consumer<Boolean> written) {
    Reply r = defer(reply);
    this.written = written;
    return r;
  }

  /** Whether {@link #defer} is allowed: not inside MULTI/EXEC, not in journal replay. */
  public boolean mayDefer() {
    return outer == null && !replaying;
  }

  CompletionStage<Reply> deferred() {
    return deferred;
  }

  java.util.function.Consumer<Boolean> written() {
    return written;
  }

  /** Completes when every journal record this command made is durable. */
  CompletionStage<Void> journaled() {
    if (writes.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    CompletionStage<Void> all = writes.get(0).journaled();
    for (int i = 1; i < writes.size(); i++) {
      all = all.thenCombine(writes.get(i).journaled(), (a, b) -> null);
    }
    return all;
  }

  /** A nested invocation for one command of a transaction, inside the transaction's write. */
  Invocation nested(List<byte[]> nestedArgv, Keyspace.Write transactionWrite) {
    return new Invocation(client, nestedArgv, server, transactionWrite, replaying);
  }
}
