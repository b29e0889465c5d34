package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.server.BloomeryServer;
import io.bloomery.server.ServerConfig;
import java.net.ServerSocket;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.UnifiedJedis;

/** {@code bloomery top} without a terminal: plain lines against a real in-process server. */
class TopCommandTest {
  static BloomeryServer startServer(String... extra) throws Exception {
    List<String> args = new java.util.ArrayList<>(List.of("--port", "0", "--http-port", "0", "--appendonly", "no"));
    args.addAll(List.of(extra));
    return BloomeryServer.start(ServerConfig.parse(Map.of(), args.toArray(String[]::new)));
  }

  /** A Bloom filter at 90% of its capacity, a cuckoo filter and a count-min sketch. */
  static void populate(int port) {
    try (UnifiedJedis j = RedisClient.builder().hostAndPort(new HostAndPort("127.0.0.1", port)).build()) {
      j.bfReserve("urls", 0.01, 1000);
      String[] items = new String[900];
      for (int i = 0; i < items.length; i++) {
        items[i] = "url-" + i;
      }
      j.bfMAdd("urls", items);
      j.cfAdd("carts", "a");
      j.cmsInitByDim("counts", 100, 4);
    }
  }

  @Test
  void piped_printsOneLinePerRound_noEscapes() throws Exception {
    try (BloomeryServer server = startServer()) {
      populate(server.port());
      Cli.Result result = Cli.run("top", "--port", Integer.toString(server.port()), "--count", "3", "--interval", "0.1");
      assertThat(result.exitCode()).as(result.toString()).isZero();
      assertThat(result.err()).isEmpty();
      assertThat(result.out()).doesNotContain("\u001b", "\r");
      List<String> lines = result.outLines();
      assertThat(lines).hasSize(4);
      assertThat(lines.get(0)).isEqualTo("time      keys  clients     ops/s  near-capacity");
      assertThat(lines.get(1)).matches("\\d\\d:\\d\\d:\\d\\d +3 +1 +- +1");
      assertThat(lines.get(2)).matches("\\d\\d:\\d\\d:\\d\\d +3 +1 +[\\d,]+\\.\\d +1");
    }
  }

  @Test
  void view_showsEveryKeyWithItemsCapacityAndTheWarning() throws Exception {
    try (BloomeryServer server = startServer();
        RespClient j = RespClient.connect("127.0.0.1", server.port(), 5000, 5000, null)) {
      populate(server.port());
      ServerWatch watch = new ServerWatch(j);
      ServerWatch.Round first = watch.read();
      j.call("BF.ADD", "urls", "one-more");
      ServerWatch.Round second = watch.read();
      List<String> view = TopCommand.view(second, first);
      assertThat(view.get(0)).contains("keys 3", "clients 1", "(q quits)");
      // items/s is one item over the time between the two reads: 1,000.0 or more when they came within a millisecond
      assertThat(view).anySatisfy(line -> assertThat(line).matches("urls +bloom +901 +1,000 +90%! +[\\d,]+\\.\\d"
          + " +\\S+"));
      assertThat(view).anySatisfy(line -> assertThat(line).matches("carts +cuckoo +1 +1,024 +0% .*"));
      assertThat(view).anySatisfy(line -> assertThat(line).matches("counts +cms +- +- +- +- +\\d{1,3}(,\\d{3})*"));
      int header = view.indexOf(String.format("%-24s %10s", "COMMAND", "OPS/S"));
      assertThat(header).as("commands section in " + view).isPositive();
      assertThat(view.get(header + 1)).matches("bf\\.add +[\\d,]+\\.\\d");
      assertThat(view.get(header + 2)).as("top's own INFO, SCAN, TYPE and *.INFO are left out").isEmpty();
      assertThat(TopCommand.commandRates(second, first)).extracting(Map.Entry::getKey).containsExactly("bf.add");
      assertThat(TopCommand.commandRates(first, null)).isEmpty();
    }
  }

  @Test
  void aGrownCuckooFilterCountsEverySubFilter_andRatesHaveSeparators() throws Exception {
    try (BloomeryServer server = startServer();
        RespClient j = RespClient.connect("127.0.0.1", server.port(), 5000, 5000, null)) {
      j.call("CF.RESERVE", "cf", "1000");
      for (int i = 0; i < 5_001; i++) {
        j.call("CF.ADD", "cf", "item-" + i);
      }
      Map<String, Long> info = ServerWatch.pairs(j.call("CF.INFO", "cf"));
      long filters = info.get("Number of filters");
      assertThat(filters).isGreaterThan(1);
      long capacity = filters * info.get("Number of buckets") * info.get("Bucket size"); // expansion rate 1
      ServerWatch.Round round = new ServerWatch(j).read();
      ServerWatch.KeyRow row = round.keys().get(0);
      assertThat(row.capacity()).isEqualTo(capacity);
      String percent = Math.round(Math.floor(500_100.0 / capacity)) + "%";
      assertThat(TopCommand.view(round, null)).anySatisfy(line -> assertThat(line)
          .matches("cf +cuckoo +5,001 +" + Units.grouped(capacity).replace(",", "\\,") + " +" + percent + "!? +- +[\\d,]+"));
    }
    assertThat(TopCommand.rate(1_234_567.2)).isEqualTo("1,234,567.2");
    assertThat(TopCommand.rate(Double.NaN)).isEqualTo("-");
  }

  @Test
  void hostileKeyNames_areShownAsOnePrintableCell() {
    assertThat(TopCommand.clip("a\u001b[2Jb\r\n", 24)).isEqualTo("a?[2Jb??");
    assertThat(TopCommand.clip("x".repeat(30), 24)).hasSize(24).endsWith("~");
  }

  @Test
  void infoParsing_ignoresWhatItDoesNotKnow() {
    assertThat(ServerWatch.parseInfo("# Stats\r\ntotal_commands_processed:12\r\nbogus\r\n:x\r\n"))
        .containsExactly(Map.entry("total_commands_processed", "12"));
    assertThat(ServerWatch.keyCount("keys=5,expires=1")).isEqualTo(5);
    assertThat(ServerWatch.keyCount("keys=x")).isEqualTo(-1);
    assertThat(ServerWatch.keyCount("")).isZero();
    assertThat(ServerWatch.pairs("not a list")).isEmpty();
    assertThat(ServerWatch.commandCalls(ServerWatch.parseInfo("# Commandstats\r\n"
        + "cmdstat_bf.add:calls=7,usec=30,usec_per_call=4.29,rejected_calls=0,failed_calls=0\r\n"
        + "cmdstat_x:calls=oops,usec=1\r\ncmdstat_:calls=3\r\ncmdstat_y:usec=1\r\ncmdstat_z:calls=2\r\n")))
        .containsExactly(Map.entry("bf.add", 7L), Map.entry("z", 2L));
    assertThat(ServerWatch.pairs(List.of("Capacity".getBytes(), 5L, "odd".getBytes()))).containsExactly(Map.entry("Capacity", 5L));
  }

  @Test
  void noServer_isOneLineAndExit1_badOptionsAreUsage() throws Exception {
    int port;
    try (ServerSocket probe = new ServerSocket(0)) {
      port = probe.getLocalPort();
    }
    Cli.Result refused = Cli.run("top", "--port", Integer.toString(port), "--count", "1");
    assertThat(refused.exitCode()).isEqualTo(BloomeryCommand.EXIT_FAILURE);
    assertThat(refused.err()).startsWith("bloomery top: cannot read the server at 127.0.0.1:" + port).hasLineCount(1);
    assertThat(Cli.run("top", "--interval", "0").exitCode()).isEqualTo(BloomeryCommand.EXIT_USAGE);
    assertThat(Cli.run("top", "--port", "70000").exitCode()).isEqualTo(BloomeryCommand.EXIT_USAGE);
    assertThat(Cli.run("top", "--count", "-1").exitCode()).isEqualTo(BloomeryCommand.EXIT_USAGE);
  }

  @Test
  void requirepass_isSentFromThePasswordOption() throws Exception {
    try (BloomeryServer server = startServer("--requirepass", "s3cret")) {
      Cli.Result denied = Cli.run("top", "--port", Integer.toString(server.port()), "--count", "1");
      assertThat(denied.exitCode()).isEqualTo(BloomeryCommand.EXIT_FAILURE);
      assertThat(denied.err()).contains("NOAUTH").hasLineCount(1);
      assertThat(denied.out()).as("no header before the error").isEmpty();
      Cli.Result allowed = Cli.run("top", "--port", Integer.toString(server.port()), "--count", "1", "--password", "s3cret");
      assertThat(allowed.exitCode()).as(allowed.toString()).isZero();
    }
  }
}
