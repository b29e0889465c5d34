package io.bloomery.server.rdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.cuckoo.CuckooFilter;
import io.bloomery.scalable.ScalableBloomFilter;
import io.bloomery.sketch.CountMinSketch;
import io.bloomery.sketch.TDigest;
import io.bloomery.sketch.TopK;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** RDB files written by Redis 8.0.2 + RedisBloom (see {@code rdb/README.md}): every key found or skipped. */
class RdbFileReaderTest {
  record Found(int db, long expireAt, Object value) {}

  static byte[] resource(String name) throws IOException {
    try (InputStream in = RdbFileReaderTest.class.getResourceAsStream("/rdb/" + name)) {
      return in.readAllBytes();
    }
  }

  static Map<String, Found> read(byte[] file, RdbFileReader.Summary[] summary) throws IOException {
    Map<String, Found> found = new LinkedHashMap<>();
    summary[0] = RdbFileReader.read(new ByteArrayInputStream(file), (db, key, expireAt, value) ->
        found.put(new String(key, StandardCharsets.UTF_8), new Found(db, expireAt, value)));
    return found;
  }

  @ParameterizedTest
  @ValueSource(strings = {"mixed.rdb", "mixed-uncompressed.rdb"})
  void everyRedisBloomKeyIsReadAndEveryOtherKeySkippedByType(String name) throws IOException {
    RdbFileReader.Summary[] summary = new RdbFileReader.Summary[1];
    Map<String, Found> found = read(resource(name), summary);

    assertThat(found.keySet()).containsExactlyInAnyOrder("bf", "bf:scaled", "cf", "cms", "topk", "td", "bf:expiring",
        "bf:db1");
    assertThat(summary[0].values()).isEqualTo(8);
    assertThat(summary[0].rdbVersion()).isEqualTo(12);
    assertThat(summary[0].skipped()).containsExactlyInAnyOrderEntriesOf(Map.of(
        "string", 5L, "list", 2L, "set", 3L, "hash", 4L, "zset", 2L, "stream", 1L));

    assertThat(found.get("bf:db1").db()).isEqualTo(1);
    assertThat(found.get("bf").db()).isZero();
    assertThat(found.get("bf:expiring").expireAt()).isEqualTo(4102444800000L);
    assertThat(found.get("bf").expireAt()).isEqualTo(-1);
    ScalableBloomFilter scaled = (ScalableBloomFilter) found.get("bf:scaled").value();
    for (int i = 0; i < 100; i++) {
      assertThat(scaled.mightContain(("item" + i).getBytes(StandardCharsets.UTF_8))).isTrue();
    }
    assertThat(((CuckooFilter) found.get("cf").value()).mightContain(bytes("a"))).isTrue();
    assertThat(((CountMinSketch) found.get("cms").value()).count("a")).isEqualTo(5);
    assertThat(((TopK) found.get("topk").value()).list().get(0).item()).isEqualTo(bytes("a"));
    TDigest td = (TDigest) found.get("td").value(); // TDIGEST.ADD td 1 2 3
    assertThat(td.insertedCount()).isEqualTo(3);
    assertThat(td.min()).isEqualTo(1);
    assertThat(td.max()).isEqualTo(3);
    assertThat(td.unmergedNodes()).isZero();
  }

  @Test
  void aChangedByteFailsTheChecksumAndATruncatedFileFailsCleanly() throws IOException {
    byte[] file = resource("mixed.rdb");
    for (int at : new int[] {200, file.length / 2, file.length - 20}) {
      byte[] bad = file.clone();
      bad[at] ^= 0x10;
      assertThatThrownBy(() -> read(bad, new RdbFileReader.Summary[1])).isInstanceOf(RdbFormatException.class);
    }
    for (int length = 0; length < file.length; length += 97) {
      byte[] cut = Arrays.copyOf(file, length);
      assertThatThrownBy(() -> read(cut, new RdbFileReader.Summary[1])).as("cut to " + length)
          .isInstanceOf(RdbFormatException.class);
    }
  }

  @Test
  void aZeroChecksumMeansNoneAndAnotherFileIsRefused() throws IOException {
    byte[] file = resource("mixed.rdb");
    byte[] unchecked = file.clone();
    Arrays.fill(unchecked, file.length - 8, file.length, (byte) 0);
    RdbFileReader.Summary[] summary = new RdbFileReader.Summary[1];
    assertThat(read(unchecked, summary)).hasSize(8);
    assertThatThrownBy(() -> read("PK\3\4 not an rdb".getBytes(StandardCharsets.US_ASCII), summary))
        .isInstanceOf(RdbFormatException.class).hasMessageContaining("not an RDB file");
    byte[] newer = file.clone();
    newer[8] = '9'; // REDIS0019
    assertThatThrownBy(() -> read(newer, summary)).hasMessageContaining("RDB version 19");
  }

  @Test
  void olderEncodingsRedis8NoLongerWritesAreSkipped() throws IOException {
    RdbOutput out = new RdbOutput();
    out.raw("REDIS0009".getBytes(StandardCharsets.US_ASCII));
    out.rawByte(254);
    out.length(0);
    for (int type : new int[] {9, 10, 12, 13}) { // zipmap, ziplist list, ziplist zset, ziplist hash: one blob each
      out.rawByte(type);
      out.string("k" + type);
      out.string(new byte[] {1, 2, 3, 4, 5, 6});
    }
    out.rawByte(14); // quicklist of ziplists
    out.string("k14");
    out.length(2);
    out.string(new byte[40]);
    out.string(new byte[] {7});
    out.rawByte(3); // zset with text scores: "1.5", +inf, nan
    out.string("k3");
    out.length(2);
    out.string("a");
    out.rawByte(3);
    out.raw("1.5".getBytes(StandardCharsets.US_ASCII));
    out.string("b");
    out.rawByte(254);
    out.rawByte(253); // EXPIRETIME in seconds for the next key
    out.raw(new byte[] {1, 0, 0, 0});
    out.rawByte(7);
    out.string("bf");
    byte[] payload = RecordedDumps.named("bf/small").dump();
    out.raw(Arrays.copyOfRange(payload, 1, payload.length - 10));
    out.rawByte(255);
    byte[] body = out.toByteArray();
    RdbOutput file = new RdbOutput();
    file.raw(body);
    file.littleEndian64(Crc64.update(0, body, 0, body.length));
    RdbFileReader.Summary[] summary = new RdbFileReader.Summary[1];
    Map<String, Found> found = read(file.toByteArray(), summary);
    assertThat(found).containsOnlyKeys("bf");
    assertThat(found.get("bf").expireAt()).isEqualTo(1000);
    assertThat(summary[0].skipped()).containsExactlyInAnyOrderEntriesOf(Map.of("hash", 2L, "list", 2L, "zset", 2L));
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
