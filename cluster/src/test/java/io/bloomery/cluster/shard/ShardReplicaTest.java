package io.bloomery.cluster.shard;

import static io.bloomery.cluster.shard.ShardClient.argv;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.server.state.Settings;
import io.bloomery.server.resp.Reply;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Three replicas of one shard in this JVM, on loopback ports: what the log carries and how replicas agree. */
@Timeout(180)
class ShardReplicaTest {
  @TempDir
  Path dir;

  private final List<ShardReplica> replicas = new ArrayList<>();
  private ShardGroup group;
  private ShardClient client;

  @AfterEach
  void stop() throws Exception {
    if (client != null) {
      client.close();
    }
    for (ShardReplica r : replicas) {
      r.close();
    }
  }

  /** Starts three replicas; replica i has bf-initial-size 1000 * i, so a key's capacity names whose default it got. */
  private void start() throws Exception {
    start(0);
  }

  private void start(long maxmemory) throws Exception {
    group = FreePorts.group("s0", 3);
    for (String id : group.peers().keySet()) {
      Settings settings = new Settings();
      settings.maxmemory(maxmemory);
      settings.bfInitialSize(1000L * Integer.parseInt(id.substring(1)));
      replicas.add(ShardReplica.start(new ShardReplica.Options(group, id, dir.resolve(id), Duration.ofMillis(500),
          ShardReplica.Options.DEFAULT_SNAPSHOT_EVERY, ShardReplica.Options.DEFAULT_LOG_SEGMENT_BYTES), settings));
    }
    client = new ShardClient(group, Duration.ofSeconds(60));
  }

  @Test
  void everyReplicaAppliesTheLeadersDefaultsAndRepliesAlike() throws Exception {
    start();
    ShardClient.Answer added = client.write(argv("BF.ADD", "urls", "https://example.com/"));
    assertThat(added.reply()).isEqualTo(new Reply.Bool(true));
    String leader = client.leader();
    long capacity = 1000L * Integer.parseInt(leader.substring(1));
    for (String id : group.peers().keySet()) {
      Reply info = client.readAt(id, added.logIndex(), argv("BF.INFO", "urls", "CAPACITY")).reply();
      assertThat(info).as("replica %s", id).isEqualTo(new Reply.Array(List.of(new Reply.Int(capacity))));
      assertThat(client.readAt(id, added.logIndex(), argv("BF.EXISTS", "urls", "https://example.com/")).reply())
          .isEqualTo(new Reply.Bool(true));
    }
  }

  @Test
  void aFullFilterRefusesTheSameAddsOnEveryReplica() throws Exception {
    start();
    assertThat(client.write(argv("BF.RESERVE", "small", "0.01", "10", "NONSCALING")).reply()).isEqualTo(Reply.OK);
    List<Reply> replies = new ArrayList<>();
    long last = 0;
    for (int i = 0; i < 40; i++) {
      ShardClient.Answer a = client.write(argv("BF.ADD", "small", "item-" + i));
      replies.add(a.reply());
      last = a.logIndex();
    }
    assertThat(replies).contains(new Reply.Error("ERR non scaling filter is full"));
    Reply card = client.read(argv("BF.CARD", "small")).reply();
    for (String id : group.peers().keySet()) {
      assertThat(client.readAt(id, last, argv("BF.CARD", "small")).reply()).as("replica %s", id).isEqualTo(card);
    }
    assertThat(card).isEqualTo(new Reply.Int(replies.stream().filter(r -> r.equals(new Reply.Bool(true))).count()));
  }

  @Test
  void countsAreExactOnEveryReplica() throws Exception {
    start();
    long last = 0;
    for (int i = 0; i < 30; i++) {
      last = client.write(argv("CF.ADD", "seen", i % 3 == 0 ? "a" : "b")).logIndex();
    }
    for (String id : group.peers().keySet()) {
      assertThat(client.readAt(id, last, argv("CF.COUNT", "seen", "a")).reply()).isEqualTo(new Reply.Int(10));
      assertThat(client.readAt(id, last, argv("CF.COUNT", "seen", "b")).reply()).isEqualTo(new Reply.Int(20));
    }
    assertThat(client.read(argv("BF.MEXISTS", "missing", "x")).reply()).isEqualTo(new Reply.Array(List.of(new Reply.Bool(false))));
  }

  /**
   * A read at a log index the replica has not committed yet waits for it rather than failing, and then sees every
   * write up to that index. (Ratis appends entries of its own between writes, so the index is compared with the ones
   * the writes were acknowledged at, not counted.)
   */
  @Test
  void aReadAtAnIndexNotCommittedYetWaitsForIt() throws Exception {
    start();
    long last = client.write(argv("BF.ADD", "later", "item-0")).logIndex();
    long minIndex = last + 3;
    String follower = group.peers().keySet().stream().filter(id -> !id.equals(client.leader())).findFirst()
        .orElseThrow();
    try (ShardClient reader = new ShardClient(group, Duration.ofSeconds(60))) {
      CompletableFuture<Reply> read = CompletableFuture.supplyAsync(() -> {
        try {
          return reader.readAt(follower, minIndex, argv("BF.CARD", "later")).reply();
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
      Thread.sleep(300); // lets the read reach the follower first; the assertions below hold either way
      long upToMinIndex = 1;
      for (int i = 1; last < minIndex; i++) {
        last = client.write(argv("BF.ADD", "later", "item-" + i)).logIndex();
        if (last <= minIndex) {
          upToMinIndex++;
        }
      }
      Reply card = read.get(60, TimeUnit.SECONDS);
      assertThat(card).isInstanceOf(Reply.Int.class);
      assertThat(((Reply.Int) card).value()).as("items on %s when it answered a read at index %d", follower, minIndex)
          .isGreaterThanOrEqualTo(upToMinIndex);
    }
  }

  @Test
  void theLogCarriesOnlyWritesAndQueriesOnlyReads() throws Exception {
    start();
    assertThatThrownBy(() -> client.write(argv("BF.EXISTS", "k", "x")))
        .hasMessageContaining("a shard's log does not carry BF.EXISTS");
    assertThatThrownBy(() -> client.write(argv("MULTI"))).hasMessageContaining("does not carry MULTI");
    assertThatThrownBy(() -> client.write(argv("GUARD.RESERVE", "g", "store", "table", "col")))
        .hasMessageContaining("does not carry GUARD.RESERVE");
    assertThatThrownBy(() -> client.write(argv("NOSUCHCOMMAND"))).hasMessageContaining("does not carry NOSUCHCOMMAND");
    assertThat(client.read(argv("BF.ADD", "k", "x")).reply())
        .isEqualTo(new Reply.Error("ERR BF.ADD is not a read-only command"));
    assertThat(client.read(argv("EXISTS", "k")).reply()).isEqualTo(new Reply.Int(0));
  }

  @Test
  void aCommandErrorIsTheReplyNotAFailure() throws Exception {
    start();
    client.write(argv("CF.RESERVE", "cuckoo", "100"));
    assertThat(client.write(argv("BF.ADD", "cuckoo", "x")).reply())
        .isEqualTo(new Reply.Error("WRONGTYPE Operation against a key holding the wrong kind of value"));
    assertThat(client.write(argv("BF.ADD", "only-key")).reply()).isInstanceOf(Reply.Error.class);
  }

  /**
   * A reshard's entries: a frozen slot's writes are refused (reads served, other slots untouched) until it is
   * dropped or thawed; a dropped slot's keys are gone on every replica and every command of it is refused; the state
   * survives a snapshot; an imported slot takes commands again. Malformed entries are refused before the log.
   */
  @Test
  void aReshardFreezesDropsAndImportsSlotsAlikeOnEveryReplicaAndInItsSnapshot() throws Exception {
    start();
    int moving = io.bloomery.cluster.slot.HashSlot.of("a".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    int staying = io.bloomery.cluster.slot.HashSlot.of("b".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    String slot = Integer.toString(moving);
    client.write(argv("BF.ADD", "a", "x"));
    client.write(argv("BF.ADD", "b", "x"));

    Reply frozen = client.write(argv(ShardStateMachine.FREEZE, slot)).reply();
    assertThat(frozen).isInstanceOf(Reply.Array.class);
    assertThat(((Reply.Array) frozen).elements()).singleElement()
        .satisfies(k -> assertThat(((Reply.Bulk) k).bytes()).asString().isEqualTo("a"));
    assertThat(client.write(argv("BF.ADD", "a", "y")).reply()).isEqualTo(new Reply.Error(ShardStateMachine.FROZEN));
    assertThat(client.read(argv("BF.EXISTS", "a", "x")).reply()).isEqualTo(new Reply.Bool(true));
    assertThat(client.write(argv("BF.ADD", "b", "y")).reply()).isEqualTo(new Reply.Bool(true));
    assertThat(client.write(argv(ShardStateMachine.DROP, Integer.toString(staying))).reply())
        .isEqualTo(new Reply.Error("ERR slot " + staying + " is not frozen: freeze it and copy its keys first"));

    ShardClient.Answer dropped = client.write(argv(ShardStateMachine.DROP, slot));
    assertThat(dropped.reply()).isEqualTo(new Reply.Int(1));
    for (String id : group.peers().keySet()) {
      assertThat(client.readAt(id, dropped.logIndex(), argv("BF.EXISTS", "a", "x")).reply()).as("replica %s", id)
          .isEqualTo(new Reply.Error(ShardStateMachine.GONE));
      assertThat(client.readAt(id, dropped.logIndex(), argv("DBSIZE")).reply()).isEqualTo(new Reply.Int(1));
    }
    assertThat(client.write(argv("BF.ADD", "a", "z")).reply()).isEqualTo(new Reply.Error(ShardStateMachine.GONE));
    assertThat(client.write(argv(ShardStateMachine.FREEZE, slot)).reply()).as("a gone slot has no keys to copy")
        .isEqualTo(new Reply.Array(List.of()));
    assertThat(client.write(argv(ShardStateMachine.DROP, slot)).reply()).isEqualTo(new Reply.Int(0));
    assertThat(client.write(argv(ShardStateMachine.THAW, slot)).reply()).isEqualTo(Reply.OK);
    assertThat(client.write(argv("BF.ADD", "a", "z")).reply()).as("a thawed gone slot stays gone")
        .isEqualTo(new Reply.Error(ShardStateMachine.GONE));

    client.write(argv(ShardStateMachine.FREEZE, Integer.toString(staying)));
    client.write(argv(ShardStateMachine.THAW, Integer.toString(staying)));
    assertThat(client.write(argv("BF.ADD", "b", "z")).reply()).isEqualTo(new Reply.Bool(true));
    ShardClient.Answer refrozen = client.write(argv(ShardStateMachine.FREEZE, Integer.toString(staying)));

    for (ShardStateMachine loaded : snapshotsAfter(refrozen, "copy")) {
      assertThat(loaded.gone(moving)).isTrue();
      assertThat(loaded.frozen(moving)).isFalse();
      assertThat(loaded.frozen(staying)).isTrue();
      assertThat(loaded.gone(staying)).isFalse();
      assertThat(loaded.keyspace().size()).isEqualTo(1);
    }

    assertThat(client.write(argv(ShardStateMachine.IMPORT, slot)).reply()).isEqualTo(Reply.OK);
    assertThat(client.write(argv("BF.ADD", "a", "again")).reply()).isEqualTo(new Reply.Bool(true));
    assertThat(client.read(argv("BF.EXISTS", "a", "x")).reply()).as("the keys it had left with the slot")
        .isEqualTo(new Reply.Bool(false));

    client.write(argv("CF.ADD", "c", "x"));
    client.write(argv("PEXPIREAT", "c", "4102444800000"));
    Reply all = client.read(argv(ShardStateMachine.EXPORT, "100000000", "b", "no-such-key", "c")).reply();
    List<Reply> entries = ((Reply.Array) all).elements();
    assertThat(entries).hasSize(3);
    assertThat(((Reply.Array) entries.get(0)).elements().get(0)).isEqualTo(new Reply.Int(-1));
    byte[] dumped = ((Reply.Bulk) ((Reply.Array) entries.get(0)).elements().get(1)).bytes();
    assertThat(dumped).isEqualTo(((Reply.Bulk) client.read(argv("DUMP", "b")).reply()).bytes());
    assertThat(entries.get(1)).isEqualTo(new Reply.Array(List.of(new Reply.Int(-2), Reply.NIL)));
    List<Reply> inline = ((Reply.Array) client.read(argv(ShardStateMachine.EXPORT_INLINE, "100000000", "b",
        "no-such-key")).reply()).elements();
    assertThat(((Reply.Bulk) ((Reply.Array) inline.get(0)).elements().get(1)).bytes())
        .as("a payload of at most 4 MiB is answered inline").isEqualTo(dumped);
    assertThat(inline.get(1)).isEqualTo(entries.get(1));
    assertThat(((Reply.Array) entries.get(2)).elements().get(0)).isEqualTo(new Reply.Int(4102444800000L));
    assertThat(((Reply.Array) client.read(argv(ShardStateMachine.EXPORT, "1", "b", "c")).reply()).elements())
        .as("the budget is passed after the first key: it is answered alone").hasSize(1);
    java.io.ByteArrayOutputStream parts = new java.io.ByteArrayOutputStream();
    for (int offset = 0; offset < dumped.length; offset += 100) {
      List<Reply> part = ((Reply.Array) client.read(argv(ShardStateMachine.EXPORT_PART, "b",
          Integer.toString(offset), "100")).reply()).elements();
      assertThat(part.subList(0, 2)).isEqualTo(List.of(new Reply.Int(-1), new Reply.Int(dumped.length)));
      parts.writeBytes(((Reply.Bulk) part.get(2)).bytes());
    }
    assertThat(parts.toByteArray()).as("the parts make the payload").isEqualTo(dumped);
    List<Reply> past = ((Reply.Array) client.read(argv(ShardStateMachine.EXPORT_PART, "b",
        Integer.toString(dumped.length), "100")).reply()).elements();
    assertThat(past.subList(0, 2)).isEqualTo(List.of(new Reply.Int(-1), new Reply.Int(dumped.length)));
    assertThat(((Reply.Bulk) past.get(2)).bytes()).as("past the end").isEmpty();
    assertThat(client.read(argv(ShardStateMachine.EXPORT_PART, "no-such-key", "0", "100")).reply())
        .isEqualTo(Reply.arrayOf(new Reply.Int(-2), new Reply.Int(0), Reply.NIL));
    assertThat(((Reply.Array) client.read(argv(ShardStateMachine.EXPORT_PART, "c", "0", "0")).reply()).elements()
        .get(0)).isEqualTo(new Reply.Int(4102444800000L));
    for (String[] hostile : new String[][] {{"-1", "100"}, {"0", "-1"}, {"0", "x"}, {"0.5", "1"},
        {"0", Long.toString(ShardStateMachine.EXPORT_PART_MAX + 1L)}, {"99999999999999999999", "1"}}) {
      assertThat(client.read(argv(ShardStateMachine.EXPORT_PART, "b", hostile[0], hostile[1])).reply())
          .as("offset %s, length %s", hostile[0], hostile[1]).isInstanceOf(Reply.Error.class).asString()
          .contains("OFFSET is an integer from 0, LENGTH one from 0 to " + ShardStateMachine.EXPORT_PART_MAX);
    }

    assertThatThrownBy(() -> client.write(argv(ShardStateMachine.FREEZE, "16384"))).hasMessageContaining("is not a slot");
    assertThatThrownBy(() -> client.write(argv(ShardStateMachine.DROP, "-1"))).hasMessageContaining("is not a slot");
    assertThatThrownBy(() -> client.write(argv(ShardStateMachine.IMPORT))).hasMessageContaining("does not carry");
  }

  /**
   * A key too large for one log entry arrives in parts, each its own entry: the last restores it alike on every
   * replica, and the parts received before a snapshot are in it (a replica started from it takes the next part).
   */
  @Test
  void aKeyCopiedInPartsIsRestoredAlikeOnEveryReplicaAndAcrossASnapshot() throws Exception {
    start();
    client.write(argv("BF.RESERVE", "src", "0.001", "20000"));
    List<String> items = new ArrayList<>();
    for (int i = 0; i < 2000; i++) {
      items.add("item-" + i);
    }
    List<String> madd = new ArrayList<>(List.of("BF.MADD", "src"));
    madd.addAll(items);
    client.write(argv(madd.toArray(String[]::new)));
    byte[] payload = ((Reply.Bulk) client.read(argv("DUMP", "src")).reply()).bytes();
    int cut1 = payload.length / 3;
    int cut2 = 2 * payload.length / 3;
    String total = Integer.toString(payload.length);
    assertThat(client.write(stage("dst", "-1", total, 0, java.util.Arrays.copyOfRange(payload, 0, cut1))).reply())
        .isEqualTo(Reply.OK);
    ShardClient.Answer second = client.write(stage("dst", "-1", total, cut1,
        java.util.Arrays.copyOfRange(payload, cut1, cut2)));
    assertThat(second.reply()).isEqualTo(Reply.OK);
    byte[] last = java.util.Arrays.copyOfRange(payload, cut2, payload.length);
    assertThat(client.read(argv("EXISTS", "dst")).reply()).as("not a key before its last part")
        .isEqualTo(new Reply.Int(0));

    for (ShardStateMachine loaded : snapshotsAfter(second, "staged")) {
      assertThat(loaded.keyspace().size()).as("the staged parts are not a key").isEqualTo(1);
      assertThat(loaded.applyAt(System.currentTimeMillis(), stage("dst", "-1", total, cut2, last)))
          .isEqualTo(Reply.OK);
      assertThat(((Reply.Bulk) loaded.applyAt(System.currentTimeMillis(), argv("DUMP", "dst"))).bytes())
          .isEqualTo(payload);
    }

    ShardClient.Answer restored = client.write(stage("dst", "-1", total, cut2, last));
    assertThat(restored.reply()).isEqualTo(Reply.OK);
    for (String id : group.peers().keySet()) {
      assertThat(((Reply.Bulk) client.readAt(id, restored.logIndex(), argv("DUMP", "dst")).reply()).bytes())
          .as("replica %s", id).isEqualTo(payload);
      assertThat(client.readAt(id, restored.logIndex(), argv("BF.EXISTS", "dst", "item-1999")).reply())
          .isEqualTo(new Reply.Bool(true));
    }

    // a part that does not follow is refused and the copy forgotten; so is one that passes the total
    assertThat(client.write(stage("other", "-1", total, cut1, last)).reply().toString()).contains("does not follow");
    client.write(stage("other", "-1", total, 0, java.util.Arrays.copyOfRange(payload, 0, cut1)));
    assertThat(client.write(stage("other", "-1", total, cut1, payload)).reply().toString())
        .contains("passes the payload");
    assertThat(client.write(stage("other", "-1", total, cut1, last)).reply().toString()).contains("does not follow");
    // importing the slot again starts over: a copy sent before it is forgotten
    client.write(stage("other", "-1", total, 0, java.util.Arrays.copyOfRange(payload, 0, cut1)));
    int slot = io.bloomery.cluster.slot.HashSlot.of("other".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    client.write(argv(ShardStateMachine.IMPORT, Integer.toString(slot)));
    assertThat(client.write(stage("other", "-1", total, cut1, java.util.Arrays.copyOfRange(payload, cut1, cut2)))
        .reply().toString()).contains("does not follow");
    assertThatThrownBy(() -> client.write(argv(ShardStateMachine.STAGE, "other", "-1", "x", "0", "p")))
        .hasMessageContaining("'x' is not an integer");
    assertThatThrownBy(() -> client.write(argv(ShardStateMachine.STAGE, "other", "-1")))
        .hasMessageContaining("KEY EXPIREAT TOTAL OFFSET BYTES");
    assertThat(client.write(argv(ShardStateMachine.STAGE, "other", "-1", "0", "0", "")).reply().toString())
        .contains("a staged payload of 0 bytes");
  }

  /**
   * {@code cluster.guard}: every replica declares and drops the same guarded keys, refuses a taken name the same
   * way, refuses other writes to a guarded name, keeps the declarations in its snapshot; a reshard moves a guarded
   * key as a declaration: read on the source, adopted (idempotently) on the target, dropped with its slot.
   */
  @Test
  void guardedKeysAreDeclaredAlikeOnEveryReplica() throws Exception {
    start();
    assertThat(client.write(argv("BF.ADD", "plain", "x")).reply()).isEqualTo(new Reply.Bool(true));
    assertThat(client.write(argv(ShardStateMachine.GUARD, "RESERVE", "plain", "main", "0.01", "1000")).reply())
        .isEqualTo(new Reply.Error("ERR item exists (a key of another type has this name)"));
    assertThat(client.write(argv(ShardStateMachine.GUARD, "RESERVE", "seen", "main", "0.01", "1000")).reply())
        .isEqualTo(Reply.OK);
    assertThat(client.write(argv(ShardStateMachine.GUARD, "RESERVE", "seen", "main", "0.02", "10")).reply())
        .isEqualTo(new Reply.Error("ERR item exists"));
    assertThat(client.write(argv("BF.ADD", "seen", "x")).reply())
        .isEqualTo(new Reply.Error(io.bloomery.server.state.GuardedKeys.WRONGTYPE));
    ShardClient.Answer last = client.write(argv("BF.ADD", "plain", "y"));
    assertThat(client.write(argv("BF.ADD", "plain", "z")).reply()).isEqualTo(new Reply.Bool(true));
    for (String id : group.peers().keySet()) {
      assertThat(client.readAt(id, last.logIndex(), argv("DBSIZE")).reply()).as("replica %s counts it", id)
          .isEqualTo(new Reply.Int(2));
      assertThat(replicas.get(List.copyOf(group.peers().keySet()).indexOf(id)).stateMachine().guarded()
          .get(io.bloomery.server.keyspace.Key.of("seen".getBytes(StandardCharsets.UTF_8))))
          .isEqualTo(new GuardDeclarations.Declaration("main", 0.01, 1000));
    }
    for (ShardStateMachine loaded : snapshotsAfter(last, "guarded")) {
      assertThat(loaded.guarded().names()).extracting(Object::toString).containsExactly("seen");
      assertThat(loaded.applyAt(System.currentTimeMillis(), argv("DEL", "seen")))
          .isEqualTo(new Reply.Error(io.bloomery.server.state.GuardedKeys.WRONGTYPE));
    }
    assertThat(client.write(argv(ShardStateMachine.GUARD, "REBUILD", "seen")).reply()).isEqualTo(Reply.OK);
    assertThat(client.write(argv(ShardStateMachine.GUARD, "REBUILD", "plain")).reply())
        .as("a key that is not guarded").isInstanceOf(Reply.Error.class);
    assertThat(client.write(argv(ShardStateMachine.GUARD, "DROP", "seen")).reply()).isEqualTo(Reply.OK);
    assertThat(client.write(argv(ShardStateMachine.GUARD, "DROP", "seen")).reply()).isInstanceOf(Reply.Error.class);
    assertThat(client.write(argv("BF.ADD", "seen", "x")).reply()).as("the name is free again")
        .isEqualTo(new Reply.Bool(true));
    assertThatThrownBy(() -> client.write(argv(ShardStateMachine.GUARD, "RESERVE", "k", "main", "2", "10")))
        .hasMessageContaining("out of range");
    assertThatThrownBy(() -> client.write(argv(ShardStateMachine.GUARD, "FORGET", "k")))
        .hasMessageContaining("cluster.guard RESERVE|ADOPT KEY STORE ERROR_RATE CAPACITY, cluster.guard DROP KEY or"
            + " cluster.guard REBUILD KEY");

    // a reshard of a guarded key's slot: its declaration is read, the slot frozen (no declaration changes), dropped
    assertThat(client.write(argv(ShardStateMachine.GUARD, "RESERVE", "moved", "main", "0.01", "1000")).reply())
        .isEqualTo(Reply.OK);
    String slot = Integer.toString(io.bloomery.cluster.slot.HashSlot.of("moved".getBytes(StandardCharsets.UTF_8)));
    assertThat(client.read(argv(ShardStateMachine.GUARDED, slot)).reply()).usingRecursiveComparison()
        .isEqualTo(Reply.arrayOf(Reply.arrayOf(
        Reply.bulk("moved"), Reply.bulk("main"), Reply.bulk("0.01"), Reply.bulk("1000"))));
    assertThat(client.read(argv(ShardStateMachine.GUARD_READY, "moved")).reply()).usingRecursiveComparison()
        .isEqualTo(Reply.bulk("ready"));
    assertThat(client.write(argv(ShardStateMachine.FREEZE, slot)).reply()).isEqualTo(Reply.arrayOf());
    assertThat(client.write(argv(ShardStateMachine.GUARD, "RESERVE", "{moved}2", "main", "0.01", "1000")).reply())
        .as("no declaration changes in a frozen slot").isEqualTo(new Reply.Error(ShardStateMachine.FROZEN));
    assertThat(client.write(argv(ShardStateMachine.DROP, slot)).reply()).isEqualTo(new Reply.Int(1));
    ShardClient.Answer dropped = client.write(argv(ShardStateMachine.GUARD, "REBUILD", "moved"));
    assertThat(dropped.reply()).isEqualTo(new Reply.Error(ShardStateMachine.GONE));
    for (String id : group.peers().keySet()) {
      client.readAt(id, dropped.logIndex(), argv("DBSIZE"));
      assertThat(replicas.get(List.copyOf(group.peers().keySet()).indexOf(id)).stateMachine().guarded().names())
          .as("replica %s dropped the guarded key with its slot", id).isEmpty();
    }
    // the same shard as the target of a later move: the key is adopted, again alike, never with another sizing
    assertThat(client.write(argv(ShardStateMachine.IMPORT, slot)).reply()).isEqualTo(Reply.OK);
    assertThat(client.write(argv(ShardStateMachine.GUARD, "ADOPT", "moved", "main", "0.01", "1000")).reply())
        .isEqualTo(Reply.OK);
    assertThat(client.write(argv(ShardStateMachine.GUARD, "ADOPT", "moved", "main", "0.01", "1000")).reply())
        .as("a reshard run again adopts it again").isEqualTo(Reply.OK);
    assertThat(client.write(argv(ShardStateMachine.GUARD, "RESERVE", "moved", "main", "0.01", "1000")).reply())
        .isEqualTo(new Reply.Error("ERR item exists"));
    assertThat(client.write(argv(ShardStateMachine.GUARD, "ADOPT", "moved", "other", "0.01", "1000")).reply()
        .toString()).contains("ERR item exists (guarded with another store or sizing");
  }


  /**
   * A client's write too large for one entry arrives in parts: nothing of it applies before its last part, which
   * applies its commands alike on every replica (also on one started from a snapshot taken between parts); a write
   * whose parts stop coming is forgotten once the entries' clock passes its window.
   */
  @Test
  void aClientsWriteInPartsAppliesAtItsLastPartAlikeOnEveryReplicaAndAcrossASnapshot() throws Exception {
    start();
    byte[] request = ShardCommand.encodeBatch(List.of(argv("BF.MADD", "w", "a", "b"), argv("BF.ADD", "w", "c")));
    int cut1 = request.length / 3;
    int cut2 = 2 * request.length / 3;
    String total = Integer.toString(request.length);
    String now = Long.toString(System.currentTimeMillis());
    assertThat(client.write(part("n1-7", now, total, 0, java.util.Arrays.copyOfRange(request, 0, cut1))).reply())
        .isEqualTo(Reply.OK);
    ShardClient.Answer second = client.write(part("n1-7", now, total, cut1,
        java.util.Arrays.copyOfRange(request, cut1, cut2)));
    assertThat(second.reply()).isEqualTo(Reply.OK);
    assertThat(client.read(argv("EXISTS", "w")).reply()).as("nothing applied before the last part")
        .isEqualTo(new Reply.Int(0));
    byte[] last = java.util.Arrays.copyOfRange(request, cut2, request.length);
    Reply applied = new Reply.Array(List.of(new Reply.Array(List.of(new Reply.Bool(true), new Reply.Bool(true))),
        new Reply.Bool(true)));
    for (ShardStateMachine loaded : snapshotsAfter(second, "parts")) {
      assertThat(loaded.keyspace().size()).isZero();
      assertThat(loaded.applyAt(System.currentTimeMillis(), part("n1-7", now, total, cut2, last))).isEqualTo(applied);
    }
    ShardClient.Answer done = client.write(part("n1-7", now, total, cut2, last));
    assertThat(done.reply()).isEqualTo(applied);
    for (String id : group.peers().keySet()) {
      assertThat(client.readAt(id, done.logIndex(), argv("BF.MEXISTS", "w", "a", "b", "c", "d")).reply())
          .as("replica %s", id).isEqualTo(new Reply.Array(List.of(new Reply.Bool(true), new Reply.Bool(true),
              new Reply.Bool(true), new Reply.Bool(false))));
    }

    // a write whose parts stopped coming is forgotten once the entries' clock passes its window
    String old = Long.toString(System.currentTimeMillis() - ShardStateMachine.PART_WINDOW_MILLIS - 60_000);
    assertThat(client.write(part("n1-8", old, total, 0, java.util.Arrays.copyOfRange(request, 0, cut1))).reply())
        .isEqualTo(Reply.OK);
    assertThat(client.write(part("n1-8", old, total, cut1, java.util.Arrays.copyOfRange(request, cut1, request.length)))
        .reply().toString()).contains("does not follow any part").contains("nothing of the write was applied");
    // parts that do not make a request apply nothing
    assertThat(client.write(part("n1-9", now, "3", 0, "abc".getBytes(java.nio.charset.StandardCharsets.UTF_8)))
        .reply().toString()).contains("the parts do not make a request");
    assertThatThrownBy(() -> client.write(argv(ShardStateMachine.PART, "n1-9", now)))
        .hasMessageContaining("ID STARTED TOTAL OFFSET BYTES");
    assertThat(client.read(argv("DBSIZE")).reply()).isEqualTo(new Reply.Int(1));
  }

  /** Each replica's snapshot, written once it applied {@code last}'s entry, loaded into a state machine of its own. */
  private List<ShardStateMachine> snapshotsAfter(ShardClient.Answer last, String name) throws Exception {
    for (String id : group.peers().keySet()) {
      client.readAt(id, last.logIndex(), argv("DBSIZE"));
    }
    List<ShardStateMachine> out = new ArrayList<>();
    for (ShardReplica replica : replicas) {
      Path file = dir.resolve(name + "-" + replicas.indexOf(replica) + ".snap");
      replica.stateMachine().writeSnapshot(file);
      ShardStateMachine loaded = new ShardStateMachine(new Settings());
      loaded.loadSnapshot(file);
      out.add(loaded);
    }
    return out;
  }

  private static List<byte[]> part(String id, String started, String total, int offset, byte[] bytes) {
    return List.of(key(ShardStateMachine.PART), key(id), key(started), key(total), key(Integer.toString(offset)),
        bytes);
  }

  private static List<byte[]> stage(String key, String expireAt, String total, int offset, byte[] part) {
    return List.of(key(ShardStateMachine.STAGE), key(key), key(expireAt), key(total), key(Integer.toString(offset)),
        part);
  }

  private static byte[] key(String s) {
    return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }

  /**
   * A reshard's batch of copies (RESTOREs only) is refused with OOM while the shard's keys hold more than the
   * leader's maxmemory, as each RESTORE alone is; a batch of a client's writes is not checked here (its node checked
   * each command before batching it).
   */
  @Test
  void aBatchOfRestoresIsRefusedOverMaxmemoryAsEachAloneWouldBe() throws Exception {
    start(1);
    client.write(argv("BF.ADD", "a", "x")); // 0 bytes used before it: accepted; now over the limit
    byte[] payload = ((Reply.Bulk) client.read(argv("DUMP", "a")).reply()).bytes();
    List<byte[]> restore = List.of("RESTORE".getBytes(), "b".getBytes(), "0".getBytes(), payload);
    assertThatThrownBy(() -> client.writeBatch(List.of(restore, restore))).hasMessageContaining("OOM");
    assertThatThrownBy(() -> client.write(restore)).hasMessageContaining("OOM");
    assertThat(client.writeBatch(List.of(argv("DEL", "a"), restore)).reply())
        .isEqualTo(new Reply.Array(List.of(new Reply.Int(1), Reply.OK)));
  }
}
