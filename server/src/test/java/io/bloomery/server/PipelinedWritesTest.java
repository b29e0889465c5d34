package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Many connections pipelining writes of one key (which run under each connection's key-lock lease) interleaved
 * with transactions, other keys and reads: every reply arrives in order, every write is applied exactly once.
 */
class PipelinedWritesTest {

  @Test
  void pipelinedWritesOfOneKeyFromManyClientsAreAllAppliedInOrder() throws Exception {
    int clients = 4;
    int perClient = 3_000;
    try (BloomeryServer server = TestServer.start(); RawClient setup = new RawClient(server.port())) {
      assertThat(setup.call("BF.RESERVE", "k", "0.0000001", "1000000")).isEqualTo("+OK\r\n");
      List<List<String>> results = RawClient.concurrently(server.port(), clients, (id, client) -> {
        ByteArrayOutputStream pipeline = new ByteArrayOutputStream();
        for (int i = 0; i < perClient; i++) {
          pipeline.write(RawClient.encode("BF.ADD", "k", "c" + id + "-" + i));
          if (i % 500 == 0) {
            pipeline.write(RawClient.encode("MULTI"));
            pipeline.write(RawClient.encode("BF.ADD", "k", "t" + id + "-" + i));
            pipeline.write(RawClient.encode("BF.ADD", "other" + id, "x" + i));
            pipeline.write(RawClient.encode("EXEC"));
          }
          if (i % 700 == 0) {
            pipeline.write(RawClient.encode("BF.EXISTS", "k", "c" + id + "-" + i));
            pipeline.write(RawClient.encode("CMS.INCRBY", "cms", "c" + id, "1"));
          }
        }
        client.send(pipeline.toByteArray());
        List<String> replies = new ArrayList<>();
        for (int i = 0; i < perClient; i++) {
          replies.add(client.reply());
          if (i % 500 == 0) {
            replies.add(client.reply() + client.reply() + client.reply() + client.reply());
          }
          if (i % 700 == 0) {
            replies.add(client.reply() + client.reply());
          }
        }
        return replies;
      }, () -> setup.call("CMS.INITBYDIM", "cms", "100", "4"));
      for (int c = 0; c < clients; c++) {
        List<String> replies = results.get(c);
        int r = 0;
        for (int i = 0; i < perClient; i++) {
          assertThat(replies.get(r++)).as("client %d add %d", c, i).isEqualTo(":1\r\n");
          if (i % 500 == 0) {
            assertThat(replies.get(r++)).isEqualTo("+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n:1\r\n:1\r\n");
          }
          if (i % 700 == 0) {
            assertThat(replies.get(r++)).startsWith(":1\r\n");
          }
        }
      }
      int transactional = (perClient + 499) / 500;
      assertThat(setup.call("BF.CARD", "k")).isEqualTo(":" + clients * (perClient + transactional) + "\r\n");
      assertThat(setup.call("DBSIZE")).isEqualTo(":" + (clients + 2) + "\r\n");
    }
  }
}
