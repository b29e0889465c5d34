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
