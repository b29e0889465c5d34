package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.RedisProtocol;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.bloom.BFInsertParams;
import redis.clients.jedis.bloom.BFReserveParams;
import redis.clients.jedis.exceptions.JedisDataException;

/** Jedis 8 over RESP2 and RESP3 against a real server on a real socket, through Jedis's own Bloom API. */
class JedisSmokeTest extends SharedServerTest {

  static UnifiedJedis jedis(BloomeryServer server, RedisProtocol protocol) {
    return RedisClient.builder().hostAndPort(new HostAndPort("127.0.0.1", server.port()))
        .clientConfig(DefaultJedisClientConfig.builder().protocol(protocol).build()).build();
  }

  private static UnifiedJedis jedis(RedisProtocol protocol) {
    return jedis(server, protocol);
  }

  @ParameterizedTest
  @EnumSource(RedisProtocol.class)
  void bloomCommandsThroughJedis(RedisProtocol protocol) {
    try (UnifiedJedis j = jedis(protocol)) {
      String key = "smoke-" + protocol;
      j.del(key);
      assertThat(j.ping()).isEqualTo("PONG");
      assertThat(j.bfReserve(key, 0.01, 1000)).isEqualTo("OK");
      assertThat(j.bfAdd(key, "a")).isTrue();
      assertThat(j.bfAdd(key, "a")).isFalse();
      assertThat(j.bfMAdd(key, "b", "c", "a")).containsExactly(true, true, false);
      assertThat(j.bfExists(key, "b")).isTrue();
      assertThat(j.bfExists(key, "zzz")).isFalse();
      assertThat(j.bfMExists(key, "a", "zzz")).containsExactly(true, false);
      assertThat(j.bfCard(key)).isEqualTo(3);
      Map<String, Object> info = j.bfInfo(key);
      assertThat(info).containsEntry("Capacity", 1000L).containsEntry("Number of items inserted", 3L)
          .containsEntry("Number of filters", 1L).containsEntry("Expansion rate", 2L);
      assertThat(j.bfCard("missing-" + protocol)).isZero();
      assertThat(j.bfExists("missing-" + protocol, "x")).isFalse();
      assertThatThrownBy(() -> j.bfInfo("missing-" + protocol)).isInstanceOf(JedisDataException.class)
          .hasMessage("ERR not found");
      assertThatThrownBy(() -> j.bfReserve(key, 0.01, 10)).hasMessage("ERR item exists");
    }
  }

  @ParameterizedTest
  @EnumSource(RedisProtocol.class)
  void nonScalingFilterTruncatesAfterFull(RedisProtocol protocol) {
    try (UnifiedJedis j = jedis(protocol)) {
      String key = "ns-" + protocol;
      j.del(key);
      assertThat(j.bfReserve(key, 0.01, 2, BFReserveParams.reserveParams().nonScaling())).isEqualTo("OK");
      List<Boolean> r = j.bfInsert(key, BFInsertParams.insertParams().noCreate(), "a", "b", "c", "d");
      assertThat(r).containsExactly(true, true, null);
      assertThatThrownBy(() -> j.bfAdd(key, "e")).hasMessage("ERR non scaling filter is full");
      Map<String, Object> info = j.bfInfo(key);
      assertThat(info.get("Expansion rate")).isNull();
    }
  }

  @ParameterizedTest
  @EnumSource(RedisProtocol.class)
  void unknownCommandAndArityAreRedisWorded(RedisProtocol protocol) {
    try (UnifiedJedis j = jedis(protocol)) {
      assertThatThrownBy(() -> j.sendCommand(() -> "NOPE".getBytes(), "a", "b"))
          .hasMessage("ERR unknown command 'NOPE', with args beginning with: 'a' 'b' ");
      assertThatThrownBy(() -> j.sendCommand(() -> "BF.ADD".getBytes(), "k"))
          .hasMessage("ERR wrong number of arguments for 'bf.add' command");
      j.del("str");
      j.bfAdd("wt", "x");
      assertThatThrownBy(() -> j.cfAdd("wt", "x"))
          .hasMessage("WRONGTYPE Operation against a key holding the wrong kind of value");
    }
  }

  /** The Jedis snippet of docs/CLIENTS.md, with the shared server's port. */
  @org.junit.jupiter.api.Test
  void theClientsPageSnippet() {
    try (UnifiedJedis jedis = RedisClient.builder().hostAndPort(new HostAndPort("127.0.0.1", server.port())).build()) {
      jedis.del("visited");
      assertThat(jedis.bfAdd("visited", "https://example.com/")).isTrue();
      boolean seen = jedis.bfExists("visited", "https://example.org/");
      assertThat(seen).isFalse();
    }
  }
}
