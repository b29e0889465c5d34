package io.bloomery.cluster.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class TopologyTest {
  private static List<Topology.Node> nodes(int n) {
    List<Topology.Node> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(new Topology.Node(String.format("%040x", i + 1), "127.0.0.1", 7000 + i, "127.0.0.1", 17000 + i));
    }
    return out;
  }

  @Test
  void sixNodesMakeTwoShardsOfThreeThatSplitTheSlotsEvenly() {
    Topology t = Topology.plan("a".repeat(40), nodes(6), 3);
    assertThat(t.shards()).hasSize(2);
    assertThat(t.shards().get(0).slots()).containsExactly(new Topology.SlotRange(0, 8191));
    assertThat(t.shards().get(1).slots()).containsExactly(new Topology.SlotRange(8192, 16383));
    assertThat(t.shards().get(1).members()).containsExactly(String.format("%040x", 4), String.format("%040x", 5),
        String.format("%040x", 6));
    assertThat(t.shardOf(8191).name()).isEqualTo("s0");
    assertThat(t.shardOf(8192).name()).isEqualTo("s1");
    assertThat(t.shardOfNode(String.format("%040x", 5)).name()).isEqualTo("s1");
    assertThat(Topology.parse(t.encode())).isEqualTo(t);
    assertThat(t.group(t.shards().get(0)).peers()).hasSize(3);
  }

  @Test
  void membershipChangesKeepTheSlotsAndRefuseWhatWouldBreakAShard() {
    Topology t = Topology.plan("a".repeat(40), nodes(6), 3);
    Topology.Node extra = new Topology.Node("f".repeat(40), "127.0.0.1", 7100, "127.0.0.1", 17100);
    Topology added = t.withMember("s1", extra);
    assertThat(added.shard("s1").members()).hasSize(4).endsWith(extra.id());
    assertThat(added.sameSlots(t)).isTrue();
    assertThat(Topology.parse(added.encode())).isEqualTo(added);
    assertThat(added.without(extra.id())).isEqualTo(t);
    assertThatThrownBy(() -> t.withMember("s7", extra)).hasMessage("no shard s7 (shards: s0, s1)");
    assertThatThrownBy(() -> added.withMember("s0", extra)).hasMessageContaining("is listed twice");
    Topology.Node sameAddress = new Topology.Node("e".repeat(40), "127.0.0.1", 7000, "127.0.0.1", 17999);
    assertThatThrownBy(() -> t.withMember("s0", sameAddress)).hasMessage("address 127.0.0.1:7000 is listed twice");
    assertThatThrownBy(() -> t.without("e".repeat(40))).hasMessageContaining("is not in cluster");
    Topology one = Topology.plan("b".repeat(40), nodes(1), 1);
    assertThatThrownBy(() -> one.without(String.format("%040x", 1)))
        .hasMessageContaining("is the last member of shard s0");
    assertThat(t.sameSlots(Topology.plan("a".repeat(40), nodes(6), 2))).isFalse();
    assertThat(t.sameSlots(Topology.plan("c".repeat(40), nodes(6), 3))).isFalse();
  }

  @Test
  void aMigrationMovesTheSourcesHighestSlotsAndRoundTripsAsText() {
    Topology t = Topology.plan("a".repeat(40), nodes(6), 3);
    Topology moving = t.withMigration("s0", "s1", 100);
    assertThat(moving.migration()).isEqualTo(new Topology.Migration("s0", "s1",
        List.of(new Topology.SlotRange(8092, 8191))));
    assertThat(moving.shardOf(8100).name()).as("the source serves them until the move completes").isEqualTo("s0");
    assertThat(moving.migration().covers(8092)).isTrue();
    assertThat(moving.migration().covers(8091)).isFalse();
    assertThat(Topology.parse(moving.encode())).isEqualTo(moving);
    assertThat(moving.sameSlots(t)).isFalse();
    Topology done = moving.migrated();
    assertThat(done.migration()).isNull();
    assertThat(done.shard("s0").slots()).containsExactly(new Topology.SlotRange(0, 8091));
    assertThat(done.shard("s1").slots()).containsExactly(new Topology.SlotRange(8092, 16383));
    assertThat(done.shardOf(8092).name()).isEqualTo("s1");

    // every slot of a shard can leave it; the shard then serves none, and can take slots back
    Topology empty = done.withMigration("s0", "s1", 8092).migrated();
    assertThat(empty.shard("s0").slots()).isEmpty();
    assertThat(empty.shard("s1").slotCount()).isEqualTo(16384);
    assertThat(Topology.parse(empty.encode())).isEqualTo(empty);
    Topology back = empty.withMigration("s1", "s0", 2).migrated();
    assertThat(back.shard("s0").slots()).containsExactly(new Topology.SlotRange(16382, 16383));
    assertThat(back.shard("s1").slots()).containsExactly(new Topology.SlotRange(0, 16381));

    assertThatThrownBy(() -> moving.withMigration("s1", "s0", 1)).hasMessageContaining("already migrating");
    assertThatThrownBy(() -> t.withMigration("s0", "s0", 1)).hasMessageContaining("from one shard to another");
    assertThatThrownBy(() -> t.withMigration("s0", "s9", 1)).hasMessage("no shard s9 (shards: s0, s1)");
    assertThatThrownBy(() -> t.withMigration("s0", "s1", 8193)).hasMessageContaining("serves 8192 slots");
    assertThatThrownBy(() -> t.withMigration("s0", "s1", 0)).hasMessageContaining("serves 8192 slots");
    assertThatThrownBy(t::migrated).hasMessage("no slots are migrating");

    // a reshard records its steps one at a time: the slots of each step change shard, the rest keep migrating
    Topology step = moving.migrated(new int[] {8191, 8190});
    assertThat(step.shardOf(8191).name()).isEqualTo("s1");
    assertThat(step.shardOf(8189).name()).isEqualTo("s0");
    assertThat(step.migration().slots()).containsExactly(new Topology.SlotRange(8092, 8189));
    assertThat(moving.migratedIn(step)).containsExactly(8190, 8191);
    assertThat(step.migrated()).isEqualTo(done);
    assertThat(moving.migrated(moving.migration().slotList())).isEqualTo(done);
    assertThat(Topology.parse(step.encode())).isEqualTo(step);
    assertThatThrownBy(() -> step.migrated(new int[] {8191})).hasMessage("slot 8191 is not migrating");
    assertThat(t.migratedIn(step)).isEmpty();
  }

  @Test
  void aShardThatServesNoSlotLeavesWithItsMembersAndOnlyThen() {
    Topology t = Topology.plan("a".repeat(40), nodes(3), 3);
    List<Topology.Node> more = nodes(6).subList(3, 6);
    Topology grown = t.withShard(more);
    assertThat(grown.withoutShard("s1")).isEqualTo(t);
    assertThat(grown.sameSlots(t)).as("removing a shard that serves no slot is a membership change").isTrue();
    Topology moved = grown.withMigration("s0", "s1", 10).migrated();
    assertThatThrownBy(() -> moved.withoutShard("s1")).hasMessage("shard s1 serves 10 slots: move them to another "
        + "shard first (bloomery cluster reshard --from s1 --to SHARD --slots 10 HOST:PORT)");
    assertThat(moved.withMigration("s1", "s0", 10).migrated().sameSlots(moved)).isFalse();
    Topology drained = moved.withMigration("s1", "s0", 10).migrated();
    assertThat(drained.withoutShard("s1").shards()).extracting(Topology.Shard::name).containsExactly("s0");
    assertThat(drained.withoutShard("s1").nodes()).hasSize(3);
    assertThat(drained.withoutShard("s1").sameSlots(drained)).isTrue();
    assertThat(drained.sameSlots(drained.withoutShard("s1"))).isTrue();
    Topology migrating = grown.withMigration("s0", "s1", 10);
    assertThatThrownBy(() -> migrating.withoutShard("s1")).hasMessageContaining("finish that reshard first");
    assertThatThrownBy(() -> t.withoutShard("s0")).hasMessageContaining("serves 16384 slots");
    assertThatThrownBy(() -> grown.withoutShard("s7")).hasMessageContaining("no shard s7");
    Topology emptyFirst = grown.withMigration("s0", "s1", 16384).migrated();
    assertThat(emptyFirst.withoutShard("s0").shards()).extracting(Topology.Shard::name).containsExactly("s1");
  }

  @Test
  void aTopologyTextWithABadMigrationIsRefusedNamingTheLine() {
    String base = Topology.plan("a".repeat(40), nodes(6), 3).encode();
    assertThatThrownBy(() -> Topology.parse(base + "migrating s1 s0 0-10\n"))
        .hasMessageContaining("slot 0 is migrating from s1, which does not serve it");
    assertThatThrownBy(() -> Topology.parse(base + "migrating s0 s7 0-10\n"))
        .hasMessageContaining("names an unknown shard");
    assertThatThrownBy(() -> Topology.parse(base + "migrating s0 s1 0-10\nmigrating s0 s1 11-12\n"))
        .hasMessageContaining("a second migration");
    assertThatThrownBy(() -> Topology.parse(base + "migrating s0 s1\n")).hasMessageContaining("slot ranges");
    assertThatThrownBy(() -> Topology.parse(base + "migrating s0 s1 5\n")).hasMessageContaining("is not a slot range");
    assertThatThrownBy(() -> Topology.parse(base + "migrating s0 s1 10-5\n")).hasMessageContaining("not within");
    assertThatThrownBy(() -> Topology.parse(base + "migrating s0 s1 -\n")).hasMessageContaining("at least one slot");
    assertThatThrownBy(() -> Topology.parse(base.replace("shard s1", "shard s0")))
        .hasMessageContaining("shard s0 is listed twice");
  }

  @Test
  void threeShardsCoverEverySlotOnce() {
    Topology t = Topology.plan("b".repeat(40), nodes(9), 3);
    assertThat(t.shards().stream().mapToInt(Topology.Shard::slotCount).sum()).isEqualTo(16384);
  }

  @Test
  void badInputIsRefusedNamingWhatIsWrong() {
    assertThatThrownBy(() -> Topology.plan("a".repeat(40), nodes(4), 3))
        .hasMessage("4 nodes do not make shards of 3 members: give a multiple of 3 nodes");
    List<Topology.Node> twice = new ArrayList<>(nodes(2));
    twice.add(twice.get(0));
    assertThatThrownBy(() -> Topology.plan("a".repeat(40), twice, 3)).hasMessageContaining("is listed twice");
    String text = Topology.plan("a".repeat(40), nodes(3), 3).encode();
    assertThatThrownBy(() -> Topology.parse(text.replace("0-16383", "0-100")))
        .hasMessage("slot 101 belongs to no shard");
    assertThatThrownBy(() -> Topology.parse(text.replace("0-16383", "0-16384")))
        .hasMessageContaining("is not within 0-16383");
    assertThatThrownBy(() -> Topology.parse(text.replace("cluster " + "a".repeat(40), "cluster xyz")))
        .hasMessageContaining("'xyz' is not a node id (40 hex digits)");
    assertThatThrownBy(() -> Topology.parse("node x")).hasMessageContaining("topology line 'node x'");
  }
}
