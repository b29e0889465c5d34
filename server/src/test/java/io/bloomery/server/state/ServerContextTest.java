package io.bloomery.server.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.server.keyspace.Keyspace;
import io.bloomery.server.persistence.PersistenceControl;
import java.io.IOException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A context is complete as built: the one recovery replays into and the one that serves clients, made by one
 * builder, share the server's state but each keeps what it was built with; a SHUTDOWN request waits for the server
 * to follow it.
 */
class ServerContextTest {

  private static final PersistenceControl SAVES = new PersistenceControl() {
    @Override public void save() {}
    @Override public boolean backgroundSave() { return true; }
    @Override public boolean backgroundRewrite() { return true; }
    @Override public long lastSaveUnixSeconds() { return 42; }
    @Override public Map<String, String> infoFields() { return Map.of("loading", "0"); }
  };

  @Test
  void contextsOfOneBuilderShareTheServersStateAndKeepWhatTheyWereBuiltWith() throws IOException {
    Keyspace keyspace = new Keyspace(System::currentTimeMillis);
    Settings settings = new Settings();
    ServerContext.Builder builder = ServerContext.builder(keyspace, settings).transport("epoll", 3)
        .fileLoads(null, false, 60_000);
    ServerContext recovering = builder.build();
    ServerContext serving = builder.persistence(SAVES).build();
    try {
      assertThat(serving.keyspace()).isSameAs(recovering.keyspace()).isSameAs(keyspace);
      assertThat(serving.settings()).isSameAs(settings);
      assertThat(serving.stats()).isSameAs(recovering.stats());
      assertThat(serving.fileLoads()).isSameAs(recovering.fileLoads());
      assertThat(serving.queryMemory()).isSameAs(recovering.queryMemory());
      assertThat(serving.runId()).isEqualTo(recovering.runId()).hasSize(40);
      assertThat(serving.startMillis()).isEqualTo(recovering.startMillis());
      assertThat(recovering.persistence()).isSameAs(PersistenceControl.DISABLED);
      assertThat(serving.persistence()).isSameAs(SAVES);
      assertThat(serving.transport()).isEqualTo("epoll");
      assertThat(serving.ioThreads()).isEqualTo(3);
      ClientState client = serving.connect("127.0.0.1:1", "127.0.0.1:2");
      assertThat(serving.clients()).containsExactly(client);
      assertThat(recovering.clients()).isEmpty();
    } finally {
      serving.closeFileLoads();
    }
  }

  @Test
  void theTcpPortIsTheSettingsPort() {
    Settings settings = new Settings();
    ServerContext context = new ServerContext(new Keyspace(System::currentTimeMillis), settings);
    settings.port(41_234);
    assertThat(context.tcpPort()).isEqualTo(41_234);
  }

  @Test
  void theFirstShutdownRequestDecidesAndWaitsForTheServerToFollowIt() {
    ServerContext context = new ServerContext(new Keyspace(System::currentTimeMillis), new Settings());
    assertThat(context.shutdownRequested().toCompletableFuture()).isNotDone();
    context.shutdown(false);
    context.shutdown(true);
    assertThat(context.shutdownRequested().toCompletableFuture()).isCompletedWithValue(false);
  }
}
