package io.bloomery.cluster.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The metadata group's snapshot text: what it holds round trips, and a damaged file is refused, not half read. */
class MetaStateMachineTest {

  private static Topology sixNodes() {
    List<Topology.Node> nodes = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      nodes.add(new Topology.Node(String.format("%040x", i + 1), "127.0.0.1", 7000 + i, "127.0.0.1", 17000 + i));
    }
    return Topology.plan("a".repeat(40), nodes, 3);
  }

  /**
   * A reshard's steps apply only from the topology they were planned from, and only as a start of a migration of the
   * source's highest slots or the completion of some or all of the one under way; a migration is kept in the
   * snapshot.
   */
  @Test
  void aReshardStepAppliesOnlyFromItsTopologyAndOnlyAsAStartOrAnEnd() {
    MetaStateMachine meta = new MetaStateMachine();
    Topology t = sixNodes();
    assertThat(meta.apply(MetaStateMachine.slotsEntry(t, t.withMigration("s0", "s1", 10)).getContent()
        .toStringUtf8())).startsWith("ERR the topology changed");
    assertThat(meta.apply(MetaStateMachine.topologyEntry(t).getContent().toStringUtf8())).isEqualTo("OK");
    Topology moving = t.withMigration("s0", "s1", 10);
    Topology lowSlots = new Topology(t.cluster(), t.nodes(), t.shards(), new Topology.Migration("s0", "s1",
        List.of(new Topology.SlotRange(0, 9))));
    assertThat(meta.apply(text(MetaStateMachine.slotsEntry(t, lowSlots)))).startsWith("ERR a reshard step");
    assertThat(meta.apply(text(MetaStateMachine.slotsEntry(t, t.withMigration("s0", "s1", 10).migrated()))))
        .as("a move recorded done before it started").startsWith("ERR a reshard step");
    assertThat(meta.apply(text(MetaStateMachine.slotsEntry(t, moving)))).isEqualTo("OK");
    assertThat(meta.topology()).isEqualTo(moving);
    assertThat(meta.apply(text(MetaStateMachine.slotsEntry(t, moving)))).as("planned from a topology now gone")
        .startsWith("ERR the topology changed");
    assertThat(meta.apply(text(MetaStateMachine.membershipEntry(moving, moving.without(String.format("%040x", 6))))))
        .as("a membership change keeps the migration").isEqualTo("OK");
    Topology now = meta.topology();
    assertThat(now.migration()).isEqualTo(moving.migration());
    Map<String, MetaStateMachine.Leader> read = new HashMap<>();
    assertThat(MetaStateMachine.decodeState(MetaStateMachine.encodeState(now, Map.of()), read)).isEqualTo(now);
    // a step records some of the migration's slots as the target's; the rest still migrate
    int[] firstStep = {8182, 8183, 8184, 8185};
    Topology stepped = now.migrated(firstStep);
    Topology.Shard s0 = stepped.shard("s0");
    Topology.Shard s1 = stepped.shard("s1");
    Topology grabsMore = new Topology(stepped.cluster(), stepped.nodes(), List.of(
        new Topology.Shard("s0", List.of(new Topology.SlotRange(1, 8181), new Topology.SlotRange(8186, 8191)),
            s0.members()),
        new Topology.Shard("s1", List.of(new Topology.SlotRange(0, 0), new Topology.SlotRange(8182, 8185),
            new Topology.SlotRange(8192, 16383)), s1.members())), stepped.migration());
    assertThat(meta.apply(text(MetaStateMachine.slotsEntry(now, grabsMore)))).as("a slot that was not migrating")
        .startsWith("ERR a reshard step");
    assertThat(meta.apply(text(MetaStateMachine.slotsEntry(now, stepped)))).isEqualTo("OK");
    assertThat(meta.topology().shardOf(8183).name()).isEqualTo("s1");
    assertThat(meta.topology().shardOf(8186).name()).isEqualTo("s0");
    assertThat(meta.topology().migration().slotList()).containsExactly(8186, 8187, 8188, 8189, 8190, 8191);
    now = meta.topology();
    assertThat(meta.apply(text(MetaStateMachine.slotsEntry(now, now.migrated())))).isEqualTo("OK");
    assertThat(meta.topology().shardOf(8191).name()).isEqualTo("s1");
    assertThat(meta.topology().migration()).isNull();
  }

  private static String text(org.apache.ratis.protocol.Message m) {
    return m.getContent().toStringUtf8();
  }

  @Test
  void theTopologyAndEveryShardsLeaderRoundTrip() {
    Topology t = sixNodes();
    Map<String, MetaStateMachine.Leader> leaders = Map.of("s0", new MetaStateMachine.Leader("1".repeat(40), 7),
        "s1", new MetaStateMachine.Leader("4".repeat(40), 12));
    Map<String, MetaStateMachine.Leader> read = new HashMap<>();
    assertThat(MetaStateMachine.decodeState(MetaStateMachine.encodeState(t, leaders), read)).isEqualTo(t);
    assertThat(read).isEqualTo(leaders);

    read.clear();
    assertThat(MetaStateMachine.decodeState(MetaStateMachine.encodeState(null, Map.of()), read)).isNull();
    assertThat(read).isEmpty();
  }

  @Test
  void aDamagedSnapshotIsRefusedWithWhatIsWrong() {
    String good = MetaStateMachine.encodeState(sixNodes(), Map.of("s0", new MetaStateMachine.Leader("b", 3)));
    Map<String, MetaStateMachine.Leader> read = new HashMap<>();
    assertThatThrownBy(() -> MetaStateMachine.decodeState("", read)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not a metadata snapshot");
    assertThatThrownBy(() -> MetaStateMachine.decodeState("bloomery-meta 2\nnone\n", read))
        .hasMessageContaining("not a metadata snapshot");
    assertThatThrownBy(() -> MetaStateMachine.decodeState("bloomery-meta 1\nleader s0 x b\nnone\n", read))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bad term");
    assertThatThrownBy(() -> MetaStateMachine.decodeState("bloomery-meta 1\nleader s0 3\nnone\n", read))
        .hasMessageContaining("unexpected line");
    assertThatThrownBy(() -> MetaStateMachine.decodeState("bloomery-meta 1\nleader s0 3 b", read))
        .as("cut before its topology").hasMessageContaining("unexpected line");
    assertThatThrownBy(() -> MetaStateMachine.decodeState("bloomery-meta 1\ntopology", read))
        .hasMessageContaining("the topology is missing");
    assertThatThrownBy(() -> MetaStateMachine.decodeState(good.substring(0, good.length() / 2), read))
        .as("cut inside its topology").isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> MetaStateMachine.decodeState("bloomery-meta 1\nnone\ntrailing", read))
        .hasMessageContaining("unexpected line");
  }
}
