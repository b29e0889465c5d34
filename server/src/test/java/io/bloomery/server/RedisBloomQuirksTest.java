package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Exact reply bytes for RedisBloom's documented behaviour and quirks, over a real socket in RESP2 and RESP3 (the
 * expected values are the ones RedisBloom's own flow tests assert).
 */
class RedisBloomQuirksTest extends SharedServerTest {
  private RawClient c;

  @BeforeEach
  void connect() {
    c = new RawClient(server.port());
    assertThat(c.call("FLUSHALL")).isEqualTo("+OK\r\n");
  }

  @org.junit.jupiter.api.AfterEach
  void disconnect() {
    c.close();
  }

  @Test
  void bfInfoMatchesTheDocsExample() {
    assertThat(c.call("BF.ADD", "bf1", "x")).isEqualTo(":1\r\n");
    assertThat(c.call("BF.INFO", "bf1")).isEqualTo("*10\r\n+Capacity\r\n:100\r\n+Size\r\n:240\r\n"
        + "+Number of filters\r\n:1\r\n+Number of items inserted\r\n:1\r\n+Expansion rate\r\n:2\r\n");
    assertThat(c.call("BF.INFO", "bf1", "SIZE")).isEqualTo("*1\r\n:240\r\n");
    assertThat(c.call("BF.INFO", "bf1", "bogus")).isEqualTo("-Invalid information value\r\n");
    assertThat(c.call("BF.INFO", "nokey")).isEqualTo("-ERR not found\r\n");
    c.call("HELLO", "3");
    assertThat(c.call("BF.INFO", "bf1")).isEqualTo("%5\r\n+Capacity\r\n:100\r\n+Size\r\n:240\r\n"
        + "+Number of filters\r\n:1\r\n+Number of items inserted\r\n:1\r\n+Expansion rate\r\n:2\r\n");
    assertThat(c.call("BF.ADD", "bf1", "x")).isEqualTo("#f\r\n");
    assertThat(c.call("BF.INFO", "bf1", "capacity")).isEqualTo("%1\r\n+Capacity\r\n:100\r\n");
  }

  @Test
  void nonScalingFilterTruncatesTheArrayAfterTheFullError() {
    assertThat(c.call("BF.INSERT", "x", "CAPACITY", "3", "NONSCALING", "ITEMS", "a", "b", "c"))
        .isEqualTo("*3\r\n:1\r\n:1\r\n:1\r\n");
    assertThat(c.call("BF.INSERT", "x", "ITEMS", "a", "b", "c", "d", "d"))
        .isEqualTo("*4\r\n:0\r\n:0\r\n:0\r\n-ERR non scaling filter is full\r\n");
    assertThat(c.call("BF.INFO", "x")).isEqualTo("*10\r\n+Capacity\r\n:3\r\n+Size\r\n:104\r\n"
        + "+Number of filters\r\n:1\r\n+Number of items inserted\r\n:3\r\n+Expansion rate\r\n$-1\r\n");
    assertThat(c.call("BF.ADD", "x", "zz")).isEqualTo("-ERR non scaling filter is full\r\n");
  }

  /**
   * BF.MADD, BF.INSERT and BF.MEXISTS of many items (several of the filter's batch groups, duplicates within one
   * call, a chain that grows mid-call, a NONSCALING filter that fills mid-call) answer, item for item, what BF.ADD
   * and BF.EXISTS one by one answer on a twin key, and leave the same filter.
   */
  @Test
  void multiItemCommandsAnswerAsTheOneItemCommandsInOrder() {
    java.util.Random random = new java.util.Random(27);
    for (String[] reserve : new String[][] {{"0.01", "10"}, {"0.01", "40", "NONSCALING"}, {"0.001", "5000"},
        {"0.01", "7", "EXPANSION", "1"}}) {
      assertThat(c.call("FLUSHALL")).isEqualTo("+OK\r\n");
      for (String key : new String[] {"batch", "single", "inserted"}) {
        java.util.List<String> words = new java.util.ArrayList<>(java.util.List.of("BF.RESERVE", key));
        words.addAll(java.util.List.of(reserve));
        assertThat(c.call(words.toArray(String[]::new))).isEqualTo("+OK\r\n");
      }
      for (int call = 0; call < 4; call++) {
        java.util.List<String> items = new java.util.ArrayList<>();
        for (int i = 0, n = 1 + random.nextInt(150); i < n; i++) {
          items.add("item-" + random.nextInt(120));
        }
        StringBuilder expected = new StringBuilder();
        int answered = 0;
        for (String item : items) {
          String one = c.call("BF.ADD", "single", item);
          expected.append(one);
          answered++;
          if (one.equals("-ERR non scaling filter is full\r\n")) {
            break;
          }
        }
        String reply = "*" + answered + "\r\n" + expected;
        java.util.List<String> madd = new java.util.ArrayList<>(java.util.List.of("BF.MADD", "batch"));
        madd.addAll(items);
        assertThat(c.call(madd.toArray(String[]::new))).as("%s call %d", String.join(" ", reserve), call)
            .isEqualTo(reply);
        java.util.List<String> insert = new java.util.ArrayList<>(java.util.List.of("BF.INSERT", "inserted", "ITEMS"));
        insert.addAll(items);
        assertThat(c.call(insert.toArray(String[]::new))).isEqualTo(reply);
        java.util.List<String> probes = new java.util.ArrayList<>(items);
        for (int i = 0; i < 40; i++) {
          probes.add("probe-" + random.nextInt(1000));
        }
        StringBuilder exists = new StringBuilder("*" + probes.size() + "\r\n");
        for (String probe : probes) {
          exists.append(c.call("BF.EXISTS", "single", probe));
        }
        java.util.List<String> mexists = new java.util.ArrayList<>(java.util.List.of("BF.MEXISTS", "batch"));
        mexists.addAll(probes);
        assertThat(c.call(mexists.toArray(String[]::new))).isEqualTo(exists.toString());
      }
      String info = c.call("BF.INFO", "single");
      assertThat(c.call("BF.INFO", "batch")).isEqualTo(info);
      assertThat(c.call("BF.INFO", "inserted")).isEqualTo(info);
      assertThat(c.call("BF.DEBUG", "batch")).isEqualTo(c.call("BF.DEBUG", "single"));
    }
  }

  @Test
  void missingAndWrongTypeKeysReadAsZero() {
    c.call("CF.ADD", "cf", "a");
    assertThat(c.call("BF.EXISTS", "nokey", "a")).isEqualTo(":0\r\n");
    assertThat(c.call("BF.EXISTS", "cf", "a")).isEqualTo(":0\r\n");
    assertThat(c.call("BF.MEXISTS", "nokey", "a", "b")).isEqualTo("*2\r\n:0\r\n:0\r\n");
    assertThat(c.call("BF.CARD", "nokey")).isEqualTo(":0\r\n");
    assertThat(c.call("BF.CARD", "cf"))
        .isEqualTo("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    assertThat(c.call("CF.COUNT", "nokey", "a")).isEqualTo(":0\r\n");
    assertThat(c.call("CF.DEL", "nokey", "a")).isEqualTo("-Not found\r\n");
  }

  @Test
  void sketchesTooLargeForTheHeapGetRedisBloomsTexts() {
    assertThat(c.call("TOPK.RESERVE", "t", "3", "2000000000", "200000000", "1"))
        .isEqualTo("-ERR Insufficient memory to create topk data structure\r\n");
    assertThat(c.call("TOPK.RESERVE", "t", "3", "4294967295", "4294967295", "1"))
        .isEqualTo("-ERR Insufficient memory to create topk data structure\r\n");
    assertThat(c.call("TOPK.RESERVE", "t", "3", "4294967296", "1", "1")).isEqualTo("-TopK: invalid width\r\n");
    assertThat(c.call("CMS.INITBYDIM", "c", "4294967296", "4294967296")).isEqualTo("-CMS: invalid init arguments\r\n");
    assertThat(c.call("TDIGEST.CREATE", "d", "COMPRESSION", "1000000000000"))
        .isEqualTo("-ERR T-Digest: allocation failed\r\n");
    assertThat(c.call("EXISTS", "t", "c", "d")).isEqualTo(":0\r\n");
  }

  @Test
  void reserveValidationOrderAndTexts() {
    assertThat(c.call("BF.RESERVE", "k", "blah", "1000")).isEqualTo("-ERR bad error rate\r\n");
    assertThat(c.call("BF.RESERVE", "k", "7.7", "1000"))
        .isEqualTo("-ERR error rate must be in the range (0.000000, 1.000000)\r\n");
    assertThat(c.call("BF.RESERVE", "k", "0.01", "18446744073709551616")).isEqualTo("-ERR bad capacity\r\n");
    assertThat(c.call("BF.RESERVE", "k", "0.01", "0")).isEqualTo("-ERR capacity must be in the range [1, 1073741824]\r\n");
    assertThat(c.call("BF.RESERVE", "k", "0.01", "100", "EXPANSION")).isEqualTo("-ERR no expansion\r\n");
    assertThat(c.call("BF.RESERVE", "k", "0.01", "100", "NONSCALING", "EXPANSION", "2"))
        .isEqualTo("-Nonscaling filters cannot expand\r\n");
    assertThat(c.call("BF.RESERVE", "k", "0.01", "100", "EXPANSION", "-1"))
        .isEqualTo("-ERR expansion must be in the range [0, 32768]\r\n");
    assertThat(c.call("BF.RESERVE", "k", "0.01")).isEqualTo("-ERR wrong number of arguments for 'bf.reserve' command\r\n");
    assertThat(c.call("BF.RESERVE", "k", "0.001", "100", "whatever")).isEqualTo("+OK\r\n");
    assertThat(c.call("BF.INFO", "k", "SIZE")).isEqualTo("*1\r\n:296\r\n");
    assertThat(c.call("BF.INSERT", "k2", "DONTEXIST", "ITEMS", "a")).isEqualTo("-Unknown argument received\r\n");
    assertThat(c.call("BF.INSERT", "k2", "CAPACITY", "0.3", "ITEMS", "a")).isEqualTo("-Bad capacity\r\n");
    assertThat(c.call("BF.INSERT", "k2", "ERROR", "big", "ITEMS", "a")).isEqualTo("-Bad error rate\r\n");
    assertThat(c.call("BF.INSERT", "k2", "EXPANSION", "-1", "ITEMS", "a")).isEqualTo("-Bad expansion\r\n");
    assertThat(c.call("BF.INSERT", "k2", "NOCREATE", "ITEMS", "a")).isEqualTo("-ERR not found\r\n");
  }

  @Test
  void bfDebugMatchesRedisBloomsTest() {
    c.call("BF.RESERVE", "bf", "0.01", "10");
    for (int i = 0; i < 100; i++) {
      c.call("BF.ADD", "bf", Integer.toString(i));
    }
    String debug = c.call("BF.DEBUG", "bf");
    assertThat(debug).contains("size:99").contains("bytes:16 bits:128 hashes:8 hashwidth:64 capacity:10 size:10 "
        + "ratio:0.005").contains("bytes:160 bits:1280 hashes:11 hashwidth:64 capacity:80 size:29 ratio:0.000625");
  }

  @Test
  void scanDumpMatchesTheDocsExampleAndRoundTrips() {
    c.call("BF.RESERVE", "bf", "0.1", "10");
    c.call("BF.ADD", "bf", "item1");
    String header = c.call("BF.SCANDUMP", "bf", "0");
    assertThat(header).startsWith("*2\r\n:1\r\n$73\r\n");
    assertThat(c.call("BF.SCANDUMP", "bf", "1")).isEqualTo("*2\r\n:9\r\n$8\r\n\u0001\u0008\u0000\u0080\u0000\u0004 \u0000\r\n");
    assertThat(c.call("BF.SCANDUMP", "bf", "9")).isEqualTo("*2\r\n:0\r\n$0\r\n\r\n");
    assertThat(c.call("BF.SCANDUMP", "bf", "x")).isEqualTo("-Second argument must be numeric\r\n");
    assertThat(c.call("BF.LOADCHUNK", "bf", "x", "y")).isEqualTo("-ERR Second argument must be numeric\r\n");
    assertThat(c.call("CF.SCANDUMP", "cf", "0")).isEqualTo("-ERR not found\r\n");
    c.call("CF.RESERVE", "cf", "10");
    assertThat(c.call("CF.SCANDUMP", "cf", "0")).isEqualTo("*2\r\n:0\r\n$-1\r\n");
  }

  @Test
  void cuckooInfoAndInsertReplies() {
    assertThat(c.call("CF.RESERVE", "a", "1000")).isEqualTo("+OK\r\n");
    assertThat(c.call("CF.INFO", "a")).isEqualTo("*16\r\n+Size\r\n:1080\r\n+Number of buckets\r\n:512\r\n"
        + "+Number of filters\r\n:1\r\n+Number of items inserted\r\n:0\r\n+Number of items deleted\r\n:0\r\n"
        + "+Bucket size\r\n:2\r\n+Expansion rate\r\n:1\r\n+Max iterations\r\n:20\r\n");
    assertThat(c.call("CF.RESERVE", "a", "1000")).isEqualTo("-ERR item exists\r\n");
    assertThat(c.call("CF.RESERVE", "b", "1")).isEqualTo("-Capacity must be in the range [2 * BUCKETSIZE, 1073741824]\r\n");
    assertThat(c.call("CF.RESERVE", "b", "10", "BUCKETSIZE", "0")).isEqualTo("-BUCKETSIZE: value must be in the range [1, 255]\r\n");
    assertThat(c.call("CF.RESERVE", "e", "9", "EXPANSION", "0")).isEqualTo("+OK\r\n");
    assertThat(c.call("CF.INSERT", "e", "ITEMS", "1", "2", "3", "4")).isEqualTo("*4\r\n:1\r\n:1\r\n:1\r\n:1\r\n");
    c.call("CF.INSERT", "e", "ITEMS", "5", "6", "7", "8", "9", "10", "11");
    assertThat(c.call("CF.INSERTNX", "f", "ITEMS", "x", "x")).isEqualTo("*2\r\n:1\r\n:0\r\n");
    c.call("HELLO", "3");
    assertThat(c.call("CF.INSERTNX", "f", "ITEMS", "x", "y")).isEqualTo("*2\r\n:0\r\n:1\r\n");
    assertThat(c.call("CF.INSERT", "f", "ITEMS", "z")).isEqualTo("*1\r\n#t\r\n");
    assertThat(c.call("CF.COUNT", "f", "x")).isEqualTo(":1\r\n");
    assertThat(c.call("CF.DEL", "f", "x")).isEqualTo("#t\r\n");
    assertThat(c.call("CF.DEBUG", "a")).isEqualTo("$79\r\nbktsize:2 buckets:512 items:0 deletes:0 filters:1 "
        + "max_iterations:20 expansion:1\r\n");
  }

  @Test
  void countMinSketchAndTopK() {
    assertThat(c.call("CMS.INITBYPROB", "cms", "0.001", "0.01")).isEqualTo("+OK\r\n");
    assertThat(c.call("CMS.INFO", "cms")).isEqualTo("*6\r\n+width\r\n:2000\r\n+depth\r\n:7\r\n+count\r\n:0\r\n");
    assertThat(c.call("CMS.INCRBY", "cms", "a", "5", "b", "2")).isEqualTo("*2\r\n:5\r\n:2\r\n");
    assertThat(c.call("CMS.INCRBY", "cms", "a", "-1")).isEqualTo("-CMS: Number cannot be negative\r\n");
    assertThat(c.call("CMS.QUERY", "cms", "a", "zz")).isEqualTo("*2\r\n:5\r\n:0\r\n");
    assertThat(c.call("CMS.INITBYDIM", "cms", "1", "1")).isEqualTo("-CMS: key already exists\r\n");
    assertThat(c.call("CMS.QUERY", "nokey", "a")).isEqualTo("-CMS: key does not exist\r\n");
    assertThat(c.call("TOPK.RESERVE", "tk", "2")).isEqualTo("+OK\r\n");
    assertThat(c.call("TOPK.ADD", "tk", "foo", "bar", "foo")).isEqualTo("*3\r\n$-1\r\n$-1\r\n$-1\r\n");
    assertThat(c.call("TOPK.QUERY", "tk", "foo", "nope")).isEqualTo("*2\r\n:1\r\n:0\r\n");
    assertThat(c.call("TOPK.LIST", "tk", "WITHCOUNT")).isEqualTo("*4\r\n$3\r\nfoo\r\n:2\r\n$3\r\nbar\r\n:1\r\n");
    assertThat(c.call("TOPK.LIST", "tk", "nope")).isEqualTo("-WITHCOUNT keyword expected\r\n");
    assertThat(c.call("TOPK.INCRBY", "tk", "foo", "1", "bar", "100001", "baz", "1")).startsWith("*2\r\n")
        .endsWith("-TopK: increment must be an integer greater or equal to 0"
            + " ".repeat(28) + "and smaller or equal to 100,000\r\n");
    assertThat(c.call("TOPK.INFO", "tk")).isEqualTo("*8\r\n+k\r\n:2\r\n+width\r\n:8\r\n+depth\r\n:7\r\n"
        + "+decay\r\n$3\r\n0.9\r\n");
  }

  @Test
  void keyspaceCommandsAndExpiry() throws InterruptedException {
    c.call("BF.ADD", "a", "x");
    assertThat(c.call("TYPE", "a")).isEqualTo("+MBbloom--\r\n");
    assertThat(c.call("TYPE", "none")).isEqualTo("+none\r\n");
    assertThat(c.call("EXISTS", "a", "a", "b")).isEqualTo(":2\r\n");
    assertThat(c.call("RENAME", "a", "b")).isEqualTo("+OK\r\n");
    assertThat(c.call("RENAME", "a", "b")).isEqualTo("-ERR no such key\r\n");
    assertThat(c.call("TTL", "b")).isEqualTo(":-1\r\n");
    assertThat(c.call("TTL", "a")).isEqualTo(":-2\r\n");
    assertThat(c.call("PEXPIRE", "b", "100")).isEqualTo(":1\r\n");
    assertThat(c.call("DBSIZE")).isEqualTo(":1\r\n");
    Thread.sleep(300);
    assertThat(c.call("BF.EXISTS", "b", "x")).isEqualTo(":0\r\n");
    assertThat(c.call("EXISTS", "b")).isEqualTo(":0\r\n");
    c.call("BF.ADD", "k1", "x");
    c.call("CF.ADD", "k2", "x");
    assertThat(c.call("KEYS", "k*")).contains("k1").contains("k2");
    assertThat(c.call("SCAN", "0", "TYPE", "MBbloomCF")).isEqualTo("*2\r\n$1\r\n0\r\n*1\r\n$2\r\nk2\r\n");
    assertThat(c.call("DEL", "k1", "k2", "k3")).isEqualTo(":2\r\n");
  }

  @Test
  void transactionsQueueAndExecuteAtomically() {
    assertThat(c.call("MULTI")).isEqualTo("+OK\r\n");
    assertThat(c.call("BF.ADD", "t", "a")).isEqualTo("+QUEUED\r\n");
    assertThat(c.call("BF.EXISTS", "t", "a")).isEqualTo("+QUEUED\r\n");
    assertThat(c.call("EXEC")).isEqualTo("*2\r\n:1\r\n:1\r\n");
    c.call("MULTI");
    assertThat(c.call("NOPE")).startsWith("-ERR unknown command 'NOPE'");
    assertThat(c.call("EXEC")).isEqualTo("-EXECABORT Transaction discarded because of previous errors.\r\n");
    assertThat(c.call("EXEC")).isEqualTo("-ERR EXEC without MULTI\r\n");
    assertThat(c.call("DISCARD")).isEqualTo("-ERR DISCARD without MULTI\r\n");
  }

  @Test
  void connectionCommands() {
    assertThat(c.call("PING")).isEqualTo("+PONG\r\n");
    assertThat(c.call("ECHO", "hi")).isEqualTo("$2\r\nhi\r\n");
    assertThat(c.call("SELECT", "0")).isEqualTo("+OK\r\n");
    assertThat(c.call("SELECT", "1")).isEqualTo("-ERR DB index is out of range\r\n");
    assertThat(c.call("CLIENT", "SETNAME", "me")).isEqualTo("+OK\r\n");
    assertThat(c.call("CLIENT", "GETNAME")).isEqualTo("$2\r\nme\r\n");
    assertThat(c.call("CLIENT", "SETINFO", "LIB-NAME", "raw")).isEqualTo("+OK\r\n");
    assertThat(c.call("CLIENT", "LIST")).contains("name=me").contains("lib-name=raw");
    assertThat(c.call("HELLO", "4")).isEqualTo("-NOPROTO unsupported protocol version\r\n");
    assertThat(c.call("HELLO", "3")).startsWith("%7\r\n$6\r\nserver\r\n").contains("$5\r\nproto\r\n:3\r\n");
    // redis-cli asserts that COMMAND DOCS field names are bulk strings (it aborts on status strings).
    assertThat(c.call("COMMAND", "DOCS", "ping")).startsWith("%1\r\n$4\r\nping\r\n%3\r\n$7\r\nsummary\r\n");
    assertThat(c.call("CONFIG", "GET", "appendonly")).isEqualTo("%1\r\n$10\r\nappendonly\r\n$2\r\nno\r\n");
    assertThat(c.call("AUTH", "x")).startsWith("-ERR AUTH <password> called without any password configured");
    assertThat(c.call("COMMAND", "COUNT")).startsWith(":");
    assertThat(c.call("DEBUG", "SLEEP", "0")).isEqualTo("+OK\r\n");
    assertThat(c.call("INFO", "keyspace")).startsWith("=");
    assertThat(c.call("RESET")).isEqualTo("+RESET\r\n");
    assertThat(c.call("PING")).isEqualTo("+PONG\r\n");
    assertThat(c.call("QUIT")).isEqualTo("+OK\r\n");
    assertThat(c.closedByServer()).isTrue();
  }
}
