package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.server.rdb.RecordedDumps;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * DUMP and RESTORE over a socket against the payloads and replies recorded from Redis 8.0.2 + RedisBloom b28c294
 * ({@code rdb/redisbloom-dumps.txt}): Bloomery restores Redis's payloads and then answers every recorded query with
 * Redis's bytes, and dumps the same bytes for the same commands; RESTORE's errors are Redis's, in Redis's order.
 */
class DumpRestoreTest extends SharedServerTest {
  private RawClient c;

  static List<RecordedDumps.Case> cases() {
    return RecordedDumps.cases();
  }

  @BeforeEach
  void connect() {
    c = new RawClient(server.port());
    assertThat(c.call("FLUSHALL")).isEqualTo("+OK\r\n");
  }

  @AfterEach
  void disconnect() {
    c.close();
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String text(byte[] reply) {
    return new String(reply, StandardCharsets.ISO_8859_1);
  }

  private String restore(String key, String ttl, byte[] payload, String... options) {
    List<byte[]> args = new ArrayList<>(List.of(bytes("RESTORE"), bytes(key), bytes(ttl), payload));
    for (String o : options) {
      args.add(bytes(o));
    }
    return c.call(args);
  }

  private byte[] dump(String key) {
    String reply = c.call("DUMP", key);
    assertThat(reply).startsWith("$");
    int header = reply.indexOf("\r\n");
    return reply.substring(header + 2, reply.length() - 2).getBytes(StandardCharsets.ISO_8859_1);
  }

  @ParameterizedTest
  @MethodSource("cases")
  void redisPayloadsRestoreAndAnswerAsRedisDid(RecordedDumps.Case recorded) {
    assertThat(restore("k", "0", recorded.dump())).isEqualTo("+OK\r\n");
    for (RecordedDumps.Query q : recorded.queries()) {
      assertThat(c.call(q.args())).as(recorded.name() + ": " + new String(q.args().get(0), StandardCharsets.UTF_8))
          .isEqualTo(text(q.reply()));
    }
  }

  @ParameterizedTest
  @MethodSource("cases")
  void theSameCommandsDumpTheSameBytes(RecordedDumps.Case recorded) {
    for (List<byte[]> command : recorded.commands()) {
      assertThat(c.call(command)).doesNotStartWith("-");
    }
    byte[] ours = dump("k");
    if (recorded.deterministic()) {
      assertThat(HexFormat.of().formatHex(ours)).isEqualTo(HexFormat.of().formatHex(recorded.dump()));
    }
    assertThat(c.call("DEL", "k")).isEqualTo(":1\r\n");
    assertThat(restore("k", "0", ours)).isEqualTo("+OK\r\n");
    for (RecordedDumps.Query q : recorded.queries()) {
      assertThat(c.call(q.args())).isEqualTo(text(q.reply()));
    }
  }

  @Test
  void restoreAnswersRedisErrorsInRedisOrder() {
    byte[] payload = RecordedDumps.named("cms/dim").dump();
    byte[] corrupt = payload.clone();
    corrupt[3] ^= 1;
    assertThat(c.call("DUMP", "missing")).isEqualTo("$-1\r\n");
    assertThat(restore("k", "0", payload)).isEqualTo("+OK\r\n");
    assertThat(restore("k", "0", payload)).isEqualTo("-BUSYKEY Target key name already exists.\r\n");
    assertThat(restore("k", "x", payload)).as("the key is checked before the TTL")
        .isEqualTo("-BUSYKEY Target key name already exists.\r\n");
    assertThat(restore("k", "0", payload, "BOGUS")).as("options come first").isEqualTo("-ERR syntax error\r\n");
    assertThat(restore("k2", "x", corrupt)).isEqualTo("-ERR value is not an integer or out of range\r\n");
    assertThat(restore("k2", "-1", corrupt)).isEqualTo("-ERR Invalid TTL value, must be >= 0\r\n");
    assertThat(restore("k2", "0", corrupt)).isEqualTo("-ERR DUMP payload version or checksum are wrong\r\n");
    assertThat(restore("k2", "0", new byte[] {1, 2, 3})).isEqualTo(
        "-ERR DUMP payload version or checksum are wrong\r\n");
    assertThat(restore("k2", "0", payload, "IDLETIME", "-1")).isEqualTo(
        "-ERR Invalid IDLETIME value, must be >= 0\r\n");
    assertThat(restore("k2", "0", payload, "FREQ", "256")).isEqualTo(
        "-ERR Invalid FREQ value, must be >= 0 and <= 255\r\n");
    assertThat(restore("k2", "0", payload, "FREQ", "1", "IDLETIME", "1")).isEqualTo("-ERR syntax error\r\n");
    assertThat(restore("k2", "0", payload, "IDLETIME")).isEqualTo("-ERR syntax error\r\n");
    assertThat(c.call("EXISTS", "k2")).isEqualTo(":0\r\n");
    assertThat(restore("k2", "0", payload, "IDLETIME", "10")).isEqualTo("+OK\r\n");
    assertThat(restore("k2", "0", payload, "FREQ", "5", "REPLACE")).isEqualTo("+OK\r\n");
  }

  @Test
  void aPayloadWithAValidFooterAndABadObjectIsBadData() {
    byte[] payload = RecordedDumps.named("cms/dim").dump();
    // a string value (type 0) with a correct footer: Redis can restore it, Bloomery holds no strings
    assertThat(restore("s", "0", withFooter(HexFormat.of().parseHex("000568656c6c6f")))).isEqualTo(
        "-ERR Bad data format\r\n");
    byte[] object = java.util.Arrays.copyOf(payload, payload.length - 10);
    assertThat(object[11]).as("CMS width 20 after the type, the module id and the UINT opcode").isEqualTo((byte) 20);
    object[11] = 21; // the counters no longer fill width x depth
    assertThat(restore("k", "0", withFooter(object))).isEqualTo("-ERR Bad data format\r\n");
  }

  /** {@code object} with Redis's footer: RDB version 12 and the CRC-64 of everything before it. */
  static byte[] withFooter(byte[] object) {
    byte[] body = java.util.Arrays.copyOf(object, object.length + 10);
    body[object.length] = 12;
    long crc = 0;
    for (int i = 0; i < object.length + 2; i++) {
      crc ^= body[i] & 0xFF;
      for (int bit = 0; bit < 8; bit++) {
        crc = (crc & 1) != 0 ? (crc >>> 1) ^ 0x95AC9329AC4BC9B5L : crc >>> 1;
      }
    }
    for (int i = 0; i < 8; i++) {
      body[object.length + 2 + i] = (byte) (crc >>> (8 * i));
    }
    return body;
  }

  @Test
  void aRestoredKeyIsJournaledAndReplayedWithItsExpiry(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
    byte[] payload = RecordedDumps.named("bf/scaled").dump();
    long at = System.currentTimeMillis() + 500_000;
    BloomeryServer first = TestServer.start("--appendonly", "yes", "--appendfsync", "always", "--dir", dir.toString());
    try (RawClient client = new RawClient(first.port())) {
      assertThat(client.call(List.of(bytes("RESTORE"), bytes("kept"), bytes(Long.toString(at)), payload,
          bytes("ABSTTL")))).isEqualTo("+OK\r\n");
      assertThat(client.call(List.of(bytes("RESTORE"), bytes("plain"), bytes("0"), payload))).isEqualTo("+OK\r\n");
      assertThat(client.call(List.of(bytes("RESTORE"), bytes("plain"), bytes("0"),
          RecordedDumps.named("cms/dim").dump(), bytes("REPLACE")))).isEqualTo("+OK\r\n");
    } finally {
      first.close(false); // no snapshot: the restart replays the journal
    }
    BloomeryServer second = TestServer.start("--appendonly", "yes", "--dir", dir.toString());
    try (RawClient client = new RawClient(second.port())) {
      assertThat(client.call("BF.EXISTS", "kept", "item42")).isEqualTo(":1\r\n");
      assertThat(Long.parseLong(client.call("PTTL", "kept").substring(1).trim())).isBetween(400_000L, 500_000L);
      assertThat(client.call("TYPE", "plain")).isEqualTo("+CMSk-TYPE\r\n");
      assertThat(client.call("CMS.QUERY", "plain", "c")).isEqualTo("*1\r\n:100\r\n");
    } finally {
      second.close();
    }
  }

  @Test
  void ttlsAreRelativeOrAbsoluteAndAPastOneCreatesNothing() {
    byte[] payload = RecordedDumps.named("bf/default-add").dump();
    assertThat(restore("rel", "100000", payload)).isEqualTo("+OK\r\n");
    long pttl = Long.parseLong(c.call("PTTL", "rel").substring(1).trim());
    assertThat(pttl).isBetween(90_000L, 100_000L);
    long at = System.currentTimeMillis() + 200_000;
    assertThat(restore("abs", Long.toString(at), payload, "ABSTTL")).isEqualTo("+OK\r\n");
    assertThat(Long.parseLong(c.call("PTTL", "abs").substring(1).trim())).isBetween(190_000L, 200_000L);
    assertThat(restore("past", "1", payload, "ABSTTL")).isEqualTo("+OK\r\n");
    assertThat(c.call("EXISTS", "past")).isEqualTo(":0\r\n");
    assertThat(restore("rel", "1", payload, "ABSTTL", "REPLACE")).as("replacing with a past expiry deletes")
        .isEqualTo("+OK\r\n");
    assertThat(c.call("EXISTS", "rel")).isEqualTo(":0\r\n");
  }
}
