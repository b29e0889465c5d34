package io.bloomery.server.command;

import io.bloomery.filter.FilterFullException;
import io.bloomery.server.keyspace.Key;
import io.bloomery.server.keyspace.Keyspace;
import io.bloomery.server.keyspace.Watches;
import io.bloomery.server.persistence.CommandReplayer;
import io.bloomery.server.resp.Reply;
import io.bloomery.server.state.ClientState;
import io.bloomery.server.state.Monitors;
import io.bloomery.server.state.ServerContext;
import io.bloomery.server.state.acl.AclCommands;
import io.bloomery.server.state.acl.AclUser;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs commands: looks the name up, checks arity, authentication, transactions and memory in Redis's order
 * (unknown command, arity, NOAUTH, OOM), runs the handler and turns failures into error replies. Also the
 * {@link CommandReplayer} that recovery uses.
 */
public final class Dispatcher implements CommandReplayer {
  private static final Logger LOG = LoggerFactory.getLogger(Dispatcher.class);

  /**
   * A command's reply and when it may be sent (after its journal records are durable). A command that waits on an
   * external store (GUARD.*) has no reply yet: {@code deferred} completes with it, off the event loop, and the
   * connection writes it in order when it does.
   */
  public record Outcome(Reply reply, CompletionStage<Void> durable, CompletionStage<Reply> deferred,
      java.util.function.Consumer<Boolean> written) {
    public Outcome(Reply reply, CompletionStage<Void> durable) {
      this(reply, durable, null, null);
    }

    /** Tells the command whether its deferred reply reached the socket (see {@link Invocation#defer}). */
    public void written(boolean ok) {
      if (written != null) {
        written.accept(ok);
      }
    }
  }

  private static final long ADMIN = AclCommands.categoryBit("admin");
  private static final CompletionStage<Void> DONE = CompletableFuture.completedFuture(null);
  private static final Set<String> TRANSACTION_CONTROL = Set.of("exec", "discard", "multi", "quit", "reset", "watch");

  private final CommandTable table = new CommandTable();
  private final ServerContext server;
  private final ClientState recoveryClient;
  private volatile CommandRouter router;

  /**
   * A dispatcher over {@code server} answering the commands {@code families} register, in that order, then MULTI,
   * EXEC and DISCARD (which the dispatcher runs itself).
   */
  public Dispatcher(ServerContext server, List<CommandFamily> families) {
    this.server = server;
    this.recoveryClient = new ClientState(0, "recovery", "recovery", System.currentTimeMillis(), true);
    for (CommandFamily family : families) {
      family.register(table);
    }
    table.add("multi", 1, CommandSpec.flags(CommandSpec.Flag.FAST, CommandSpec.Flag.NOMULTI), 0, 0, 0,
        "transactions", "Starts a transaction.", this::multi);
    table.add("exec", 1, CommandSpec.flags(CommandSpec.Flag.NOMULTI), 0, 0, 0,
        "transactions", "Executes all commands in a transaction.", inv -> {
          throw new IllegalStateException("EXEC is handled by the dispatcher");
        });
    table.add("discard", 1, CommandSpec.flags(CommandSpec.Flag.FAST, CommandSpec.Flag.NOMULTI), 0, 0, 0,
        "transactions", "Discards a transaction.", this::discard);
    table.add("watch", -2, CommandSpec.flags(CommandSpec.Flag.FAST, CommandSpec.Flag.NOMULTI), 1, -1, 1,
        "transactions", "Monitors changes to keys to determine the execution of a transaction.", this::watch);
    table.add("unwatch", 1, CommandSpec.flags(CommandSpec.Flag.FAST), 0, 0, 0,
        "transactions", "Forgets about watched keys of a transaction.", inv -> {
          inv.client().unwatchAll();
          return Reply.OK;
        });
    AclCommands aclCommands = new AclCommands();
    for (CommandSpec s : table.all()) {
      aclCommands.add(s.name(), s.has(CommandSpec.Flag.WRITE), s.has(CommandSpec.Flag.READONLY),
          s.has(CommandSpec.Flag.FAST), s.has(CommandSpec.Flag.NOAUTH), s.group());
    }
    server.acl().install(aclCommands.complete());
  }

  /** Hands commands to {@code router} first (a cluster node's routing); set once, before the server serves. */
  public void router(CommandRouter value) {
    this.router = value;
  }

  public CommandTable table() {
    return table;
  }

  public ServerContext server() {
    return server;
  }

  /**
   * Whether {@code argv} may run while earlier commands of {@code client} still wait for their replies: on a cluster
   * node, what the router pipelines ({@link CommandRouter#pipelines}); on a single node, a keyed write that runs here
   * to its end (not a transaction's, not {@code GUARD.*}, whose reply waits for an external store). Such a write
   * behind one whose reply waits for its journal record's fsync runs at once: its record follows the earlier one in
   * the journal, and its reply still goes out after the earlier reply, once its own record is forced. Anything else
   * (a read, {@code HELLO}, {@code CLIENT}, {@code MULTI}, ...) waits until every earlier reply went out.
   */
  public boolean pipelines(ClientState client, List<byte[]> argv) {
    if (client.inTransaction()) {
      return false;
    }
    CommandSpec spec = table.get(argv.get(0));
    if (spec == null || !spec.arityOk(argv.size())) {
      return false;
    }
    CommandRouter routing = router;
    if (routing != null) {
      return routing.pipelines(spec, argv);
    }
    return spec.has(CommandSpec.Flag.WRITE) && !spec.has(CommandSpec.Flag.NOMULTI) && !"guard".equals(spec.group())
        && !spec.name().equals("bf.loadchunk") && !keysOf(spec, argv).isEmpty();
  }

  /** Whether a router decides where commands run (a cluster node). */
  public boolean routed() {
    return router != null;
  }

  /** Executes one command from a client. */
  public Outcome execute(ClientState client, List<byte[]> argv) {
    CommandSpec spec = table.get(argv.get(0));
    String name = spec == null ? "unknown" : spec.name();
    long start = client.commandStartNanos();
    client.touched(name, start);
    if (client.inTransaction() && (spec == null || !TRANSACTION_CONTROL.contains(name))) {
      return new Outcome(queue(client, spec, argv), DONE);
    }
    boolean leasable = spec != null && spec.leasable();
    if (!leasable) {
      client.releaseLease(); // only one-key writes run under it
    }
    CommandRouter routing = router;
    if (spec == null) {
      if (routing != null && client.authenticated()) {
        CompletionStage<Reply> own = routing.route(client, null, argv);
        if (own != null) {
          return routed(own, null, new Invocation(client, argv, server, null, false), start);
        }
      }
      return error(Errors.unknownCommand(argv), "unknown", 0);
    }
    if (!spec.arityOk(argv.size())) {
      return error(Errors.arity(spec.name()), spec.name(), 0);
    }
    if (!client.authenticated() && !spec.has(CommandSpec.Flag.NOAUTH)) {
      return error(Errors.NOAUTH, spec.name(), 0);
    }
    String denied = denied(client, spec, argv, "toplevel");
    if (denied != null) {
      if (name.equals("exec")) { // Redis discards the transaction of a refused EXEC, naming why
        if (client.inTransaction()) {
          client.endTransaction();
        }
        client.unwatchAll();
        return error("EXECABORT Transaction discarded because of: " + denied, name, 0);
      }
      return error(denied, spec.name(), 0);
    }
    Invocation inv = new Invocation(client, argv, server, null, false);
    if (routing != null) {
      CompletionStage<Reply> routed = routing.route(client, spec, argv);
      if (routed != null) {
        return routed(routed, spec, inv, start);
      }
    }
    if (name.equals("exec")) {
      Outcome outcome = exec(client);
      monitor(spec, client, argv); // after the commands it ran, as Redis shows them
      return outcome;
    }
    inv.leasable(leasable);
    return run(spec, inv, start);
  }

  /** Runs a command that started at {@code start} ({@link System#nanoTime()}). */
  private Outcome run(CommandSpec spec, Invocation inv, long start) {
    if (spec.has(CommandSpec.Flag.DENYOOM) && overMemory()) {
      server.stats().oomRejections.increment();
      return error(Errors.OOM, spec.name(), start);
    }
    String refused = spec.has(CommandSpec.Flag.WRITE) ? journalRefusal() : null;
    if (refused != null) {
      return error(Errors.journalRefused(refused), spec.name(), start);
    }
    Reply reply;
    try {
      reply = inv.client().noTouch() ? server.keyspace().withoutTouching(() -> spec.handler().run(inv))
          : spec.handler().run(inv);
    } catch (CommandException e) {
      reply = Reply.error(e.reply());
    } catch (FilterFullException e) {
      reply = Reply.error(RedisBloomErrors.bloomFull(e));
    } catch (OutOfMemoryError e) {
      server.stats().oomRejections.increment();
      reply = Reply.error(Errors.OOM);
    } catch (RuntimeException e) {
      LOG.error("command {} failed", spec.name(), e);
      reply = Reply.error("ERR internal error: " + e.getClass().getSimpleName());
    }
    server.stats().commandsProcessed.increment();
    if (!inv.replaying()) {
      monitor(spec, inv.client(), inv.argv());
    }
    CompletionStage<Reply> deferred = inv.deferred();
    if (deferred != null && reply == null) {
      return new Outcome(null, DONE, deferred.thenApply(r -> {
        counted(spec, inv, r, start);
        return r;
      }), inv.written());
    }
    inv.client().commandEnded(counted(spec, inv, reply, start));
    return new Outcome(reply, inv.journaled());
  }

  /**
   * The outcome of a command the router answered: at once when its reply is at hand, else deferred (the connection
   * writes it in order when it comes). Counted under its name ({@code spec} null: under the router's own name).
   */
  private Outcome routed(CompletionStage<Reply> stage, CommandSpec spec, Invocation inv, long start) {
    server.stats().commandsProcessed.increment();
    if (stage instanceof CompletableFuture<Reply> done && done.isDone() && !done.isCompletedExceptionally()) {
      Reply reply = done.join();
      inv.client().commandEnded(counted(spec, inv, reply, start));
      return new Outcome(reply, DONE);
    }
    return new Outcome(null, DONE, stage.thenApply(r -> {
      counted(spec, inv, r, start);
      return r;
    }), null);
  }

  /**
   * Counts a command that answered {@code reply}, and gives its duration to SLOWLOG and LATENCY (each a threshold
   * test unless it was slow); returns the clock at its end.
   */
  private long counted(CommandSpec spec, Invocation inv, Reply reply, long start) {
    boolean isError = reply instanceof Reply.Error;
    if (isError) {
      server.stats().errorReplies.increment();
    }
    long end = System.nanoTime();
    String name = spec != null ? spec.name()
        : new String(inv.argv().get(0), StandardCharsets.UTF_8).toLowerCase(java.util.Locale.ROOT);
    server.stats().commands.executed(name, end - start, isError);
    long micros = (end - start) / 1000;
    server.stats().slowLog.observe(server.settings(), micros, inv.argv(), inv.client());
    server.stats().latency.observe(server.settings(),
        spec != null && spec.has(CommandSpec.Flag.FAST) ? "fast-command" : "command", micros / 1000);
    return end;
  }

  /**
   * Shows a command that ran to the MONITOR connections, unless it is administrative (Redis's {@code @admin}
   * commands and subcommands, MONITOR itself among them, are never shown).
   */
  private void monitor(CommandSpec spec, ClientState client, List<byte[]> argv) {
    Monitors monitors = server.monitors();
    if (!monitors.active()) {
      return;
    }
    AclCommands commands = server.acl().commands();
    int id = commands.id(spec.name());
    if (id >= 0 && argv.size() > 1) {
      id = commands.subcommand(id, argv.get(1));
    }
    if (id >= 0 && (commands.categories(id) & ADMIN) != 0) {
      return;
    }
    monitors.feed(client, argv);
  }

  private Outcome error(String text, String command, long start) {
    server.stats().errorReplies.increment();
    server.stats().commands.rejected(command, start == 0 ? 0 : System.nanoTime() - start);
    return new Outcome(Reply.error(text), DONE);
  }

  /** Why the journal refuses write commands now, or {@code null}. */
  private String journalRefusal() {
    return server.keyspace().journal().refusal();
  }

  /** Whether the filters' own bytes are above {@code maxmemory} (0: no limit). */
  boolean overMemory() {
    long max = server.settings().maxmemory();
    return max > 0 && server.usedMemory() > max;
  }

  // -------------------------------------------------------------------------------------------- transactions

  private Reply queue(ClientState client, CommandSpec spec, List<byte[]> argv) {
    if (spec == null) {
      client.failTransaction();
      return Reply.error(Errors.unknownCommand(argv));
    }
    if (!spec.arityOk(argv.size())) {
      client.failTransaction();
      return Reply.error(Errors.arity(spec.name()));
    }
    if (!client.authenticated() && !spec.has(CommandSpec.Flag.NOAUTH)) {
      client.failTransaction();
      return Reply.error(Errors.NOAUTH);
    }
    String denied = denied(client, spec, argv, "multi");
    if (denied != null) {
      client.failTransaction();
      return Reply.error(denied);
    }
    if (spec.has(CommandSpec.Flag.NOMULTI)) {
      client.failTransaction();
      return Reply.error("ERR Command not allowed inside a transaction");
    }
    client.queue(argv);
    return Reply.QUEUED;
  }

  private Reply multi(Invocation inv) {
    if (inv.client().inTransaction()) {
      return Reply.error(Errors.MULTI_NESTED);
    }
    inv.client().beginTransaction();
    return Reply.OK;
  }

  private Reply discard(Invocation inv) {
    if (!inv.client().inTransaction()) {
      return Reply.error(Errors.DISCARD_WITHOUT_MULTI);
    }
    inv.client().endTransaction();
    inv.client().unwatchAll();
    return Reply.OK;
  }

  /** WATCH: a later EXEC aborts if one of the keys changes first ({@link Watches}). */
  private Reply watch(Invocation inv) {
    if (inv.client().inTransaction()) {
      return Reply.error(Errors.WATCH_IN_MULTI);
    }
    Watches.Watcher watcher = inv.client().watcher(server.keyspace().watches());
    for (int i = 1; i < inv.argc(); i++) {
      watcher.watch(inv.key(i));
    }
    return Reply.OK;
  }

  /**
   * EXEC: runs the queued commands one after another inside one write that holds every key they name (or the
   * whole keyspace if one of them needs it), so no other writer and no snapshot cut lands in the middle. If a
   * watched key changed or expired since WATCH (checked once that write holds its keys), nothing runs and the reply
   * is a null array.
   */
  private Outcome exec(ClientState client) {
    if (!client.inTransaction()) {
      return error(Errors.EXEC_WITHOUT_MULTI, "exec", 0);
    }
    boolean failed = client.transactionFailed();
    List<List<byte[]>> queued = client.endTransaction();
    if (failed) {
      client.unwatchAll();
      return error(Errors.EXECABORT, "exec", 0);
    }
    CommandRouter routing = router;
    if (routing != null) {
      Outcome routed = routedExec(routing, client, queued);
      if (routed != null) {
        return routed;
      }
    }
    boolean global = false;
    boolean writes = false;
    Set<Key> keys = new LinkedHashSet<>();
    for (List<byte[]> argv : queued) {
      CommandSpec spec = table.get(new String(argv.get(0), StandardCharsets.UTF_8));
      global |= spec.has(CommandSpec.Flag.GLOBAL);
      writes |= spec.has(CommandSpec.Flag.WRITE);
      keys.addAll(keysOf(spec, argv));
    }
    String refused = writes ? journalRefusal() : null;
    if (refused != null) { // none of it runs, as Redis discards a transaction with a write it must refuse
      client.unwatchAll();
      return error("EXECABORT Transaction discarded because of: " + Errors.journalRefused(refused), "exec", 0);
    }
    Keyspace ks = server.keyspace();
    Keyspace.Write write = global ? ks.writeAll() : ks.write(keys);
    Watches.Watcher watcher = client.watcher(ks.watches());
    boolean changed = watcher.touchedOrExpired();
    client.unwatchAll();
    if (changed) {
      write.close();
      server.stats().commandsProcessed.increment();
      return new Outcome(Reply.NIL_ARRAY, DONE);
    }
    List<Reply> replies = new ArrayList<>(queued.size());
    try {
      for (List<byte[]> argv : queued) {
        CommandSpec spec = table.get(new String(argv.get(0), StandardCharsets.UTF_8));
        String denied = denied(client, spec, argv, "multi"); // the user's rules may have changed since MULTI
        if (denied != null) {
          replies.add(Reply.error(denied));
          continue;
        }
        Invocation inv = new Invocation(client, argv, server, write, false);
        replies.add(run(spec, inv, System.nanoTime()).reply());
      }
    } finally {
      write.close();
    }
    server.stats().commandsProcessed.increment();
    return new Outcome(Reply.array(replies), write.journaled());
  }

  /**
   * {@code EXEC} on a cluster node: the router runs the queued commands the client's ACL user may still run (its
   * rules may have changed since {@code MULTI}), and a denied one answers its {@code -NOPERM} in its place, as a
   * single node answers it. {@code null} if the router leaves the transaction to this server.
   */
  private Outcome routedExec(CommandRouter routing, ClientState client, List<List<byte[]>> queued) {
    List<Reply> denials = new ArrayList<>(queued.size());
    List<CommandSpec> specs = new ArrayList<>(queued.size());
    List<List<byte[]>> allowed = new ArrayList<>(queued.size());
    for (List<byte[]> argv : queued) {
      CommandSpec spec = table.get(argv.get(0));
      String denied = denied(client, spec, argv, "multi");
      denials.add(denied == null ? null : Reply.error(denied));
      if (denied == null) {
        specs.add(spec);
        allowed.add(argv);
      }
    }
    CompletionStage<Reply> stage = routing.transaction(client, specs, allowed); // it takes the watch it checks
    client.unwatchAll();
    if (stage == null) {
      return null;
    }
    CommandSpec exec = table.get("exec");
    Invocation inv = new Invocation(client, List.of("EXEC".getBytes(StandardCharsets.UTF_8)), server, null, false);
    return routed(stage.thenApply(reply -> {
      if (!(reply instanceof Reply.Array ran) || ran.elements().size() != allowed.size()) {
        return reply; // the transaction as a whole failed, or was redirected
      }
      List<Reply> replies = new ArrayList<>(queued.size());
      int next = 0;
      for (Reply denial : denials) {
        replies.add(denial != null ? denial : ran.elements().get(next++));
      }
      return Reply.array(replies);
    }), exec, inv, System.nanoTime());
  }

  /**
   * The {@code -NOPERM} text when the client's ACL user may not run {@code spec} with {@code argv} (the denial is in
   * the ACL log, under {@code context}), else {@code null}. Reads one field for an unrestricted user.
   */
  private String denied(ClientState client, CommandSpec spec, List<byte[]> argv, String context) {
    AclUser user = client.user();
    if (user == null || user.unrestricted()) {
      return null;
    }
    int firstKey = spec.has(CommandSpec.Flag.MOVABLEKEYS) ? 0 : spec.firstKey(); // the handler checks its keys
    return server.acl().check(user, spec.name(), argv, firstKey, spec.lastKey(), spec.keyStep(), context,
        client::info);
  }

  /** The keys a command names, by its key positions. */
  public static List<Key> keysOf(CommandSpec spec, List<byte[]> argv) {
    List<Key> keys = new ArrayList<>();
    if (spec.firstKey() <= 0) {
      return keys;
    }
    int last = spec.lastKey() < 0 ? argv.size() + spec.lastKey() : Math.min(spec.lastKey(), argv.size() - 1);
    int step = Math.max(1, spec.keyStep());
    for (int i = spec.firstKey(); i <= last; i += step) {
      keys.add(Key.of(argv.get(i)));
    }
    return keys;
  }

  // -------------------------------------------------------------------------------------------- recovery

  /**
   * Applies one journaled command without journaling it again; expiry stays suspended until the server starts
   * listening, so records replay against the keyspace as it was when they were written.
   *
   * @throws IllegalStateException if the command is unknown or answers an error
   */
  @Override
  public void replay(List<byte[]> argv) {
    server.keyspace().suspendExpiry(true);
    if (argv.isEmpty()) {
      throw new IllegalStateException("empty journal record");
    }
    CommandSpec spec = table.get(new String(argv.get(0), StandardCharsets.UTF_8));
    if (spec == null || !spec.arityOk(argv.size())) {
      throw new IllegalStateException("journal record is not a valid command: "
          + new String(argv.get(0), StandardCharsets.UTF_8));
    }
    Reply reply;
    try {
      reply = spec.handler().run(new Invocation(recoveryClient, argv, server, null, true));
    } catch (CommandException e) {
      reply = Reply.error(e.reply());
    } catch (FilterFullException e) {
      reply = Reply.error(RedisBloomErrors.bloomFull(e));
    }
    if (reply instanceof Reply.Error e) {
      throw new IllegalStateException("journal record " + spec.name() + " failed on replay: " + e.text());
    }
  }
}
