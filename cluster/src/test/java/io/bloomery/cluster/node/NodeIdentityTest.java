package io.bloomery.cluster.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NodeIdentityTest {
  @TempDir Path dir;

  @Test
  void aNodeKeepsTheIdMadeOnItsFirstStart() throws IOException {
    NodeIdentity first = NodeIdentity.open(dir, "127.0.0.1", 7000, "127.0.0.1", 17000);
    assertThat(first.id()).matches("[0-9a-f]{40}");
    assertThat(NodeIdentity.open(dir, "127.0.0.1", 7000, "127.0.0.1", 17000)).isEqualTo(first);
    assertThat(NodeIdentity.open(dir.resolve("other"), "127.0.0.1", 7000, "127.0.0.1", 17000).id())
        .isNotEqualTo(first.id());
  }

  @Test
  void aDirectoryOfAnotherAddressIsRefusedNamingBoth() throws IOException {
    NodeIdentity first = NodeIdentity.open(dir, "127.0.0.1", 7000, "127.0.0.1", 17000);
    assertThatThrownBy(() -> NodeIdentity.open(dir, "127.0.0.1", 7001, "127.0.0.1", 17001))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("belongs to node " + first.id() + " announced as 127.0.0.1:7000 with cluster bus "
            + "127.0.0.1:17000, but this node is configured as 127.0.0.1:7001 with cluster bus 127.0.0.1:17001");
  }

  @Test
  void aDamagedIdentityIsRefused() throws IOException {
    Files.writeString(dir.resolve(NodeIdentity.FILE), "id nothex\n");
    assertThatThrownBy(() -> NodeIdentity.open(dir, "127.0.0.1", 7000, "127.0.0.1", 17000))
        .isInstanceOf(IOException.class).hasMessageContaining("is not a node identity");
  }
}
