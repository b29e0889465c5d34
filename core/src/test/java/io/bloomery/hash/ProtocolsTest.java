package io.bloomery.hash;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.filter.FilterKind;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ProtocolsTest {

  @Test
  void defaultIsXxh3EdhV1() {
    assertThat(Protocols.defaultProtocol().id()).isEqualTo(ProtocolId.XXH3_EDH_V1);
    assertThat(Protocols.defaultProtocol().name()).isEqualTo("xxh3-edh-v1");
  }

  @Test
  void lookUpByIdAndName() {
    for (ProtocolId id : Protocols.implemented()) {
      HashProtocol protocol = Protocols.of(id);
      assertThat(protocol.id()).isEqualTo(id);
      assertThat(Protocols.byName(id.protocolName())).isSameAs(protocol);
    }
    assertThat(Protocols.implemented())
        .contains(
            ProtocolId.XXH3_EDH_V1,
            ProtocolId.SHA256_DOC_V1,
            ProtocolId.SHA256_INDEX8,
            ProtocolId.SHA256_INDEX16,
            ProtocolId.GUAVA_MURMUR128_MITZ64);
  }

  @Test
  void unknownNamesAreRefusedListingTheKnownOnes() {
    assertThatThrownBy(() -> Protocols.byName("md5"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown hash protocol 'md5'")
        .hasMessageContaining("xxh3-edh-v1");
    assertThatThrownBy(() -> Protocols.byName(null)).isInstanceOf(NullPointerException.class);
  }

  /** Persisted identifiers are append-only: this list may only grow at the end. */
  @Test
  void protocolIdsAreFrozen() {
    Map<Integer, String> expected = new LinkedHashMap<>();
    expected.put(1, "xxh3-edh-v1");
    expected.put(2, "sha256-doc-v1");
    expected.put(3, "sha256-index8");
    expected.put(4, "sha256-index16");
    expected.put(5, "guava-murmur128-mitz64");
    expected.put(6, "parquet-xxh64");
    expected.put(7, "redisbloom-murmur64a");
    expected.put(8, "xxh3-blocked-v1");
    expected.put(9, "redisbloom-murmur2");
    expected.put(10, "xxh3-fuse-v1");
    expected.put(11, "unhashed");
    Map<Integer, String> actual = new LinkedHashMap<>();
    for (ProtocolId id : ProtocolId.values()) {
      actual.put(id.code(), id.protocolName());
      assertThat(ProtocolId.ofCode(id.code())).isSameAs(id);
      assertThat(ProtocolId.ofName(id.protocolName())).isSameAs(id);
    }
    assertOnlyAppended("protocol", expected, actual, ProtocolId.values().length);
  }

  /** Persisted identifiers are append-only: this list may only grow at the end. */
  @Test
  void filterKindsAreFrozen() {
    Map<Integer, String> expected = new LinkedHashMap<>();
    expected.put(1, "classic");
    expected.put(2, "blocked");
    expected.put(3, "split-block");
    expected.put(5, "scalable");
    expected.put(6, "counting");
    expected.put(7, "cuckoo");
    expected.put(8, "count-min");
    expected.put(9, "top-k");
    expected.put(10, "age-partitioned");
    expected.put(11, "binary-fuse");
    expected.put(12, "scalable-blocked");
    expected.put(13, "t-digest");
    Map<Integer, String> actual = new LinkedHashMap<>();
    for (FilterKind kind : FilterKind.values()) {
      actual.put(kind.code(), kind.kindName());
      assertThat(FilterKind.ofCode(kind.code())).isSameAs(kind);
      assertThat(FilterKind.ofName(kind.kindName())).isSameAs(kind);
    }
    assertOnlyAppended("kind", expected, actual, FilterKind.values().length);
    assertThat(actual).as("code 4 (register-blocked, never shipped) is retired, never reused").doesNotContainKey(4);
  }

  /** Every pinned code keeps its name; new codes may exist; no code is used twice. */
  private static void assertOnlyAppended(String what, Map<Integer, String> pinned, Map<Integer, String> actual, int constants) {
    for (Map.Entry<Integer, String> entry : pinned.entrySet()) {
      assertThat(actual).as("%s code %d renumbered or renamed", what, entry.getKey()).containsEntry(entry.getKey(), entry.getValue());
    }
    assertThat(actual.keySet()).as("%s codes are unique", what).hasSize(constants);
  }
}
