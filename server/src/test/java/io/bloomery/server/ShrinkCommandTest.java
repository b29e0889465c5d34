package io.bloomery.server;

import static io.bloomery.server.FixedBloomKeyTest.client;
import static io.bloomery.server.FixedBloomKeyTest.utf8;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.BlockedBloomMath;
import io.bloomery.filter.BloomFilter;
import io.bloomery.format.FilterFormat;
import io.bloomery.hash.Protocols;
import io.bloomery.sizing.BloomMath;
import java.io.ByteArrayOutputStream;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.UnifiedJedis;

/**
 * {@code BF.SHRINK} (ours) and {@code BF.RESERVE ... FOLDABLE}: folding a fixed key in half keeps every member and
 * makes exactly core's folded filter, the target rate bounds the folds, the journal replays to the same bytes, and
 * keys that cannot fold, missing keys, other types and bad arguments get clear errors.
 */
class ShrinkCommandTest extends SharedServerTest {
  private static final int MEMBERS = 100;

  private RawClient c;
  private UnifiedJedis j;

  @BeforeEach
  void connect() {
    c = new RawClient(server.port());
    j = client(server.port());
    assertThat(c.call("FLUSHALL")).isEqualTo("+OK\r\n");
  }

  @AfterEach
  void disconnect() {
    c.close();
    j.close();
  }

  @Test
  void shrinkFoldsAClassicKeyToCoresFoldedFilterWithoutLosingAMember() {
    assertThat(c.call("BF.RESERVE", "k", "0.01", "1000", "NONSCALING", "LAYOUT", "CLASSIC", "FOLDABLE"))
        .isEqualTo("+OK\r\n");
    long bits = BloomMath.foldableBits(BloomMath.optimalBits(1000, 0.01));
    BloomFilter expected = BloomFilter.create(Protocols.defaultProtocol(), new byte[0], bits,
        BloomMath.optimalHashes(1000, bits));
    addMembers("k", expected::add);
    String reply = c.call("BF.SHRINK", "k");
    long folds = Long.parseLong(reply.substring(1, reply.length() - 2));
    // 100 of 1000 items: the filter folds at least twice before passing its 1% design rate
    assertThat(folds).isGreaterThanOrEqualTo(2);
    for (int f = 0; f < folds; f++) {
      expected = expected.fold();
    }
    assertThat(expected.estimatedFpp()).isLessThanOrEqualTo(BloomMath.designRate(bits, expected.hashCount()));
    assertThat(expected.fold().estimatedFpp()).isGreaterThan(BloomMath.designRate(bits, expected.hashCount()));
    assertEveryMember("k");
    assertThat(dump(j, "k")).isEqualTo(FilterFormat.toBytes(expected));
    assertThat(c.call("BF.DEBUG", "k")).contains("bits:" + (bits >>> folds) + " ");
  }

  @Test
  void shrinkFoldsABlockedKeyAndTheTargetBoundsTheFolds() {
    assertThat(c.call("BF.RESERVE", "b", "0.001", "10000", "NONSCALING", "LAYOUT", "BLOCKED", "FOLDABLE"))
        .isEqualTo("+OK\r\n");
    long blocks = BlockedBloomMath.foldableBlocks(BlockedBloomMath.blockedBlocks(10000, 0.001));
    BlockedBloomFilter expected = BlockedBloomFilter.create(new byte[0], blocks,
        BlockedBloomMath.optimalBlockedHashes(10000, blocks));
    addMembers("b", expected::add);
    // a target below the current rate allows no fold, and nothing changes
    assertThat(c.call("BF.SHRINK", "b", "TARGETFPR", "1e-300")).isEqualTo(":0\r\n");
    assertThat(dump(j, "b")).isEqualTo(FilterFormat.toBytes(expected));
    assertThat(c.call("BF.SHRINK", "b", "TARGETFPR", "0.01", "FOLDS", "2")).isEqualTo(":2\r\n");
    expected = expected.fold().fold();
    assertEveryMember("b");
    assertThat(dump(j, "b")).isEqualTo(FilterFormat.toBytes(expected));
  }

  @Test
  void replayingTheJournalGivesTheSameBytes(@TempDir Path dir) throws Exception {
    String[] args = {"--port", "0", "--http-port", "0", "--dir", dir.toString(), "--appendfsync", "always"};
    byte[] shrunk;
    try (BloomeryServer s = BloomeryServer.start(ServerConfig.parse(Map.of(), args)); UnifiedJedis p = client(s.port());
        RawClient raw = new RawClient(s.port())) {
      raw.call("BF.RESERVE", "k", "0.01", "1000", "NONSCALING", "LAYOUT", "CLASSIC", "FOLDABLE");
      for (int i = 0; i < MEMBERS; i++) {
        raw.call("BF.ADD", "k", "m" + i);
      }
      byte[] before = dump(p, "k");
      assertThat(raw.call("BF.SHRINK", "k")).matches(":[1-9]\\d*\r\n");
      shrunk = dump(p, "k");
      assertThat(shrunk.length).isLessThan(before.length);
    }
    try (BloomeryServer s = BloomeryServer.start(ServerConfig.parse(Map.of(), args)); UnifiedJedis p = client(s.port())) {
      assertThat(dump(p, "k")).isEqualTo(shrunk);
    }
  }

  @Test
  void refusesWhatCannotFoldAndBadArguments() {
    assertThat(c.call("BF.SHRINK", "missing")).isEqualTo("-ERR not found\r\n");
    c.call("CMS.INITBYDIM", "cms", "10", "5");
    assertThat(c.call("BF.SHRINK", "cms")).startsWith("-WRONGTYPE");
    c.call("BF.ADD", "scalable", "x");
    assertThat(c.call("BF.SHRINK", "scalable")).startsWith("-ERR filter cannot be folded: a bloom Bloom key");
    c.call("BF.RESERVE", "odd", "0.01", "1000", "NONSCALING", "LAYOUT", "CLASSIC");
    assertThat(c.call("BF.SHRINK", "odd")).startsWith("-ERR filter cannot be folded: a classic filter of 9586 bits");
    assertThat(c.call("BF.RESERVE", "f", "0.01", "1000", "FOLDABLE"))
        .isEqualTo("-ERR FOLDABLE needs NONSCALING LAYOUT CLASSIC or BLOCKED\r\n");
    c.call("BF.RESERVE", "k", "0.01", "1000", "NONSCALING", "LAYOUT", "CLASSIC", "FOLDABLE");
    assertThat(c.call("BF.SHRINK", "k", "TARGETFPR", "abc")).isEqualTo("-ERR bad error rate\r\n");
    assertThat(c.call("BF.SHRINK", "k", "TARGETFPR", "1")).startsWith("-ERR error rate must be in the range");
    assertThat(c.call("BF.SHRINK", "k", "TARGETFPR")).isEqualTo("-ERR syntax error\r\n");
    assertThat(c.call("BF.SHRINK", "k", "SIZE", "3")).isEqualTo("-ERR syntax error\r\n");
    assertThat(c.call("BF.SHRINK", "k", "FOLDS", "-1")).isEqualTo("-ERR value is not an integer or out of range\r\n");
    assertThat(c.call("BF.SHRINK")).startsWith("-ERR wrong number of arguments");
    assertThat(c.call("BF.SHRINK", "k", "FOLDS", "0")).isEqualTo(":0\r\n");
  }

  private void addMembers(String key, java.util.function.Consumer<byte[]> local) {
    for (int i = 0; i < MEMBERS; i++) {
      assertThat(c.call("BF.ADD", key, "m" + i)).isEqualTo(":1\r\n");
      local.accept(utf8("m" + i));
    }
  }

  private void assertEveryMember(String key) {
    for (int i = 0; i < MEMBERS; i++) {
      assertThat(c.call("BF.EXISTS", key, "m" + i)).as("m%d", i).isEqualTo(":1\r\n");
    }
  }

  /** The key's Bloomery file, from SCANDUMP's chunks. */
  private static byte[] dump(UnifiedJedis p, String key) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    long it = 0;
    while (true) {
      Map.Entry<Long, byte[]> chunk = p.bfScanDump(key, it);
      if (chunk.getKey() == 0) {
        return out.toByteArray();
      }
      out.writeBytes(chunk.getValue());
      it = chunk.getKey();
    }
  }
}
