package io.bloomery.cluster.node;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.apache.ratis.protocol.RaftPeer;
import org.junit.jupiter.api.Test;

/**
 * The metadata group changes members one node at a time: {@link RaftNode#nextStep} removes those that leave first,
 * then adds those that join, then moves addresses, and says when nothing is left to change.
 */
class MembershipStepsTest {
  private static RaftPeer peer(String id, int port) {
    return RaftPeer.newBuilder().setId(id).setAddress("127.0.0.1:" + port).build();
  }

  /** Every step from {@code members} to {@code wanted}, each applied as planned. */
  private static List<List<String>> steps(Collection<RaftPeer> members, List<RaftPeer> wanted) {
    List<List<String>> steps = new ArrayList<>();
    List<RaftPeer> step;
    Collection<RaftPeer> now = members;
    while ((step = RaftNode.nextStep(now, wanted)) != null) {
      steps.add(step.stream().map(p -> p.getId() + "@" + p.getAddress().split(":")[1]).toList());
      now = step;
      assertThat(steps).as("steps so far").hasSizeLessThan(10);
    }
    return steps;
  }

  @Test
  void aShardsWorthOfNodesLeavesThenJoinsOneAtATime() {
    List<RaftPeer> members = List.of(peer("a", 1), peer("b", 2), peer("c", 3));
    List<RaftPeer> wanted = List.of(peer("a", 1), peer("d", 4), peer("e", 5));
    assertThat(steps(members, wanted)).containsExactly(
        List.of("a@1", "c@3"),
        List.of("a@1"),
        List.of("a@1", "d@4"),
        List.of("a@1", "d@4", "e@5"));
  }

  @Test
  void aMemberAtAnotherAddressIsMovedInOneStep() {
    List<RaftPeer> members = List.of(peer("a", 1), peer("b", 2));
    assertThat(steps(members, List.of(peer("a", 1), peer("b", 7)))).containsExactly(List.of("a@1", "b@7"));
  }

  @Test
  void theWantedMembersNeedNoStep() {
    List<RaftPeer> members = List.of(peer("a", 1), peer("b", 2));
    assertThat(RaftNode.nextStep(members, List.of(peer("b", 2), peer("a", 1)))).isNull();
  }
}
