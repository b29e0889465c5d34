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
