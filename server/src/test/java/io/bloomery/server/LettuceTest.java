package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.TransactionResult;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.probabilistic.BfInfoValue;
import io.lettuce.core.probabilistic.CfInfoValue;
import io.lettuce.core.probabilistic.ScanDumpValue;
import io.lettuce.core.protocol.ProtocolVersion;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Lettuce 7.7 with its native RedisBloom API, over RESP2 and RESP3, against a real server on a real socket. */
class LettuceTest extends SharedServerTest {

  private interface Body {
    void run(RedisCommands<String, String> redis);
  }

  private static void withLettuce(ProtocolVersion protocol, Body body) {
    RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", server.port()));
    client.setOptions(ClientOptions.builder().protocolVersion(protocol).build());
    try (StatefulRedisConnection<String, String> connection = client.connect()) {
      body.run(connection.sync());
    } finally {
      client.shutdown();
    }
  }

  @ParameterizedTest
  @EnumSource(ProtocolVersion.class)
  void bloomAndCuckooThroughLettuce(ProtocolVersion protocol) {
    withLettuce(protocol, redis -> {
      String bf = "lettuce-bf-" + protocol;
      String cf = "lettuce-cf-" + protocol;
      redis.del(bf, cf, bf + "-copy");
      assertThat(redis.ping()).isEqualTo("PONG");
      assertThat(redis.bfReserve(bf, 0.01, 500)).isEqualTo("OK");
      assertThat(redis.bfAdd(bf, "a")).isTrue();
      assertThat(redis.bfMAdd(bf, "a", "b")).containsExactly(false, true);
      assertThat(redis.bfMExists(bf, "a", "b", "c")).containsExactly(true, true, false);
      assertThat(redis.bfCard(bf)).isEqualTo(2);
      BfInfoValue info = redis.bfInfo(bf);
      assertThat(info.getCapacity()).isEqualTo(500);
      assertThat(info.getNumberOfItemsInserted()).isEqualTo(2);
      assertThat(info.getExpansionRate()).isEqualTo(2);
      List<ScanDumpValue> chunks = new ArrayList<>();
      long iterator = 0;
      while (true) {
        ScanDumpValue chunk = redis.bfScanDump(bf, iterator);
        if (chunk.getIterator() == 0) {
          break;
        }
        chunks.add(chunk);
        iterator = chunk.getIterator();
      }
      for (ScanDumpValue chunk : chunks) {
        assertThat(redis.bfLoadChunk(bf + "-copy", chunk.getIterator(), chunk.getData())).isEqualTo("OK");
      }
      assertThat(redis.bfExists(bf + "-copy", "b")).isTrue();
      assertThat(redis.cfReserve(cf, 1000)).isEqualTo("OK");
      assertThat(redis.cfAdd(cf, "x")).isTrue();
      assertThat(redis.cfExists(cf, "x")).isTrue();
      assertThat(redis.cfCount(cf, "x")).isEqualTo(1);
      assertThat(redis.cfDel(cf, "x")).isTrue();
      CfInfoValue cfInfo = redis.cfInfo(cf);
      assertThat(cfInfo.getNumberOfBuckets()).isEqualTo(512);
      assertThat(cfInfo.getNumberOfItemsDeleted()).isEqualTo(1);
      assertThatThrownBy(() -> redis.bfInfo("lettuce-missing")).isInstanceOf(RedisCommandExecutionException.class)
          .hasMessage("ERR not found");
    });
  }

  @ParameterizedTest
  @EnumSource(ProtocolVersion.class)
  void transactionsRunAtomically(ProtocolVersion protocol) {
    withLettuce(protocol, redis -> {
      String key = "lettuce-tx-" + protocol;
      redis.del(key);
      assertThat(redis.multi()).isEqualTo("OK");
      // Lettuce's MultiOutput cannot take a RESP3 boolean inside EXEC (it would fail the same way against
      // Redis), so the transaction uses commands with string and integer replies.
      redis.bfReserve(key, 0.01, 100);
      redis.bfCard(key);
      TransactionResult result = redis.exec();
      assertThat(result.wasDiscarded()).isFalse();
      assertThat(result.<Object>get(0)).isEqualTo("OK");
      assertThat(result.<Object>get(1)).isEqualTo(0L);
      assertThat(redis.bfAdd(key, "a")).isTrue();
    });
  }
}
