package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Bloomery's own commands: BF.MERGE, the counting filter (CBF.*) and the age-partitioned filter (AGE.*). */
class ExtensionCommandsTest extends SharedServerTest {

  @Test
  void mergeUnionsIdenticalFiltersAndRefusesOthers() {
    try (RawClient c = new RawClient(server.port())) {
      c.call("BF.RESERVE", "m1", "0.01", "1000");
      c.call("BF.RESERVE", "m2", "0.01", "1000");
      c.call("BF.RESERVE", "other", "0.01", "500");
      c.call("BF.MADD", "m1", "a", "b");
      c.call("BF.MADD", "m2", "c");
      assertThat(c.call("BF.MERGE", "m1", "m2")).isEqualTo("+OK\r\n");
      assertThat(c.call("BF.MEXISTS", "m1", "a", "b", "c", "zz")).isEqualTo("*4\r\n:1\r\n:1\r\n:1\r\n:0\r\n");
      assertThat(c.call("BF.MERGE", "fresh", "m1", "m2")).isEqualTo("+OK\r\n");
      assertThat(c.call("BF.EXISTS", "fresh", "c")).isEqualTo(":1\r\n");
      assertThat(c.call("BF.MERGE", "m1", "other")).startsWith("-ERR filters differ");
      assertThat(c.call("BF.MERGE", "m1", "missing")).isEqualTo("-ERR not found\r\n");
      c.call("CF.ADD", "cf", "x");
      assertThat(c.call("BF.MERGE", "m1", "cf"))
          .isEqualTo("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    }
  }

  @Test
  void countingFilterDeletes() {
    try (RawClient c = new RawClient(server.port())) {
      assertThat(c.call("CBF.RESERVE", "cbf", "0.01", "1000", "COUNTERBITS", "8")).isEqualTo("+OK\r\n");
      assertThat(c.call("CBF.ADD", "cbf", "a")).isEqualTo(":1\r\n");
      assertThat(c.call("CBF.ADD", "cbf", "b", "c")).isEqualTo("*2\r\n:1\r\n:1\r\n");
      assertThat(c.call("CBF.EXISTS", "cbf", "a")).isEqualTo(":1\r\n");
      assertThat(c.call("CBF.DEL", "cbf", "a")).isEqualTo(":1\r\n");
      assertThat(c.call("CBF.EXISTS", "cbf", "a", "b")).isEqualTo("*2\r\n:0\r\n:1\r\n");
      assertThat(c.call("CBF.INFO", "cbf")).contains("Counter bits").contains("Number of items inserted");
      assertThat(c.call("TYPE", "cbf")).isEqualTo("+BLcounting\r\n");
      assertThat(c.call("CBF.RESERVE", "cbf", "0.01", "1000")).isEqualTo("-ERR item exists\r\n");
      assertThat(c.call("CBF.RESERVE", "bad", "2", "1000")).isEqualTo("-ERR error rate must be in the range (0, 1)\r\n");
      assertThat(c.call("CBF.ADD", "missing", "a")).isEqualTo("-ERR not found\r\n");
    }
  }

  @Test
  void ageFilterAnswersWithinItsWindow() {
    try (RawClient c = new RawClient(server.port())) {
      assertThat(c.call("AGE.RESERVE", "seen", "0.01", "10000", "86400", "GENERATIONS", "4")).isEqualTo("+OK\r\n");
      assertThat(c.call("AGE.ADD", "seen", "https://example.com/")).isEqualTo(":1\r\n");
      assertThat(c.call("AGE.EXISTS", "seen", "https://example.com/", "https://example.org/"))
          .isEqualTo("*2\r\n:1\r\n:0\r\n");
      assertThat(c.call("AGE.INFO", "seen")).contains("Window seconds").contains(":86400\r\n");
      assertThat(c.call("TYPE", "seen")).isEqualTo("+BLagepart\r\n");
      assertThat(c.call("AGE.EXISTS", "missing", "x")).isEqualTo(":0\r\n");
      assertThat(c.call("AGE.RESERVE", "x", "0.01", "10", "0")).startsWith("-ERR window");
    }
  }

  @Test
  void ageAddIsJournaledWithItsTimeSoReplayLandsInTheSameGeneration() {
    BloomeryServer replica = TestServer.start();
    try (RawClient c = new RawClient(server.port())) {
      c.call("AGE.RESERVE", "j", "0.01", "100", "3600");
      java.util.List<java.util.List<byte[]>> records = new java.util.ArrayList<>();
      server.context().keyspace().journal(argv -> {
        records.add(argv);
        return java.util.concurrent.CompletableFuture.completedFuture(null);
      });
      try {
        c.call("AGE.ADD", "j", "item");
      } finally {
        server.context().keyspace().journal(io.bloomery.server.persistence.CommandJournal.NONE);
      }
      assertThat(records).hasSize(1);
      assertThat(new String(records.get(0).get(0))).isEqualTo("AGE.ADDAT");
      replica.dispatcher().replay(java.util.List.of("AGE.RESERVE".getBytes(), "j".getBytes(), "0.01".getBytes(),
          "100".getBytes(), "3600".getBytes()));
      replica.dispatcher().replay(records.get(0));
      try (RawClient r = new RawClient(replica.port())) {
        assertThat(r.call("AGE.EXISTS", "j", "item")).isEqualTo(":1\r\n");
      }
    } finally {
      replica.close();
    }
  }
}
