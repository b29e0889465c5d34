package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.blocked.BlockedBloomFilter;
import io.bloomery.blocked.ScalableBlockedBloomFilter;
import io.bloomery.format.FilterFormat;
import io.bloomery.server.BloomeryServer;
import io.bloomery.server.ServerConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.UnifiedJedis;

/** {@code bloomery load} against a real in-process server: BF.EXISTS then answers exactly as {@code bloomery query}. */
class LoadCommandTest {
  @TempDir Path dir;

  private static BloomeryServer start(String... extra) throws IOException {
    List<String> args = new ArrayList<>(List.of("--port", "0", "--http-port", "0", "--appendonly", "no"));
    args.addAll(List.of(extra));
    return BloomeryServer.start(ServerConfig.parse(Map.of(), args.toArray(String[]::new)));
  }

  private static UnifiedJedis client(int port, String password) {
    DefaultJedisClientConfig.Builder config = DefaultJedisClientConfig.builder();
    if (password != null) {
      config.password(password);
    }
    return RedisClient.builder().hostAndPort(new HostAndPort("127.0.0.1", port)).clientConfig(config.build()).build();
  }

  @Test
  void aBuiltFileLoadedIntoTheServerAnswersLikeQuery() throws IOException {
    List<String> members = new ArrayList<>();
    List<String> probe = new ArrayList<>();
    for (int i = 0; i < 2000; i++) {
      members.add("https://example.org/page/" + i);
    }
    for (int i = 0; i < 4000; i++) {
      probe.add("https://example.org/page/" + i); // the second half are non-members
    }
    Files.write(dir.resolve("members.txt"), members, StandardCharsets.UTF_8);
    Files.write(dir.resolve("probe.txt"), probe, StandardCharsets.UTF_8);
    Path filter = dir.resolve("urls.blmf");
    Cli.Result build = Cli.run("build", "--input", dir.resolve("members.txt").toString(), "--output",
        filter.toString(), "--expected", "2000", "--fpp", "0.05");
    assertThat(build.exitCode()).as(build.toString()).isZero();
    Cli.Result query = Cli.run("query", filter.toString(), "--input", dir.resolve("probe.txt").toString());
    assertThat(query.exitCode()).as(query.toString()).isZero();
    List<Boolean> expected = query.outLines().stream().map(line -> line.startsWith("maybe\t")).toList();
    assertThat(expected).hasSize(4000).contains(false);

    try (BloomeryServer server = start("--requirepass", "s3cret"); UnifiedJedis j = client(server.port(), "s3cret")) {
      Cli.Result load = Cli.run("load", filter.toString(), "--key", "urls", "--port", String.valueOf(server.port()),
          "--password", "s3cret", "--chunk-size", "1000");
      assertThat(load.exitCode()).as(load.toString()).isZero();
      assertThat(load.out()).startsWith("loaded " + filter + " (classic, " + Files.size(filter) + " bytes, ");
      assertThat(j.type("urls")).isEqualTo("BLbloom");
      assertThat(j.bfMExists("urls", probe.toArray(String[]::new))).isEqualTo(expected);

      // an existing key is never overwritten, and the message is one line naming the key
      Cli.Result again = Cli.run("load", filter.toString(), "--key", "urls", "--port", String.valueOf(server.port()),
          "--password", "s3cret");
      assertThat(again.exitCode()).isEqualTo(1);
      assertThat(again.err()).contains("key 'urls'").contains("item exists").doesNotContain("\n\n");

      // a blocked file from the library loads the same way
      BlockedBloomFilter blocked = BlockedBloomFilter.create(1000, 0.01);
      for (String m : members.subList(0, 1000)) {
        blocked.add(m);
      }
      Path blockedFile = dir.resolve("blocked.blmf");
      FilterFormat.write(blocked, blockedFile);
      assertThat(Cli.run("load", blockedFile.toString(), "--key", "b", "--port", String.valueOf(server.port()),
          "--password", "s3cret").exitCode()).isZero();
      for (String p : probe.subList(0, 2000)) {
        assertThat(j.bfExists("b", p)).isEqualTo(blocked.mightContain(p));
      }

      // so does a scaling blocked chain, which then keeps growing as a key
      ScalableBlockedBloomFilter chain = ScalableBlockedBloomFilter.create(300, 0.01, 2);
      for (String m : members.subList(0, 1000)) {
        chain.add(m);
      }
      Path chainFile = dir.resolve("chain.blmf");
      FilterFormat.write(chain, chainFile);
      Cli.Result loaded = Cli.run("load", chainFile.toString(), "--key", "chain", "--port",
          String.valueOf(server.port()), "--password", "s3cret", "--chunk-size", "500");
      assertThat(loaded.exitCode()).as(loaded.toString()).isZero();
      assertThat(loaded.out()).startsWith("loaded " + chainFile + " (scalable-blocked, ");
      assertThat(j.bfCard("chain")).isEqualTo(chain.insertedCount());
      for (String p : probe.subList(0, 2000)) {
        assertThat(j.bfExists("chain", p)).isEqualTo(chain.mightContain(p));
      }
    }
  }

  @Test
  void refusesWhatIsNotAClassicOrBlockedFile() throws IOException {
    Path junk = dir.resolve("junk.blmf");
    Files.writeString(junk, "not a filter");
    Cli.Result result = Cli.run("load", junk.toString(), "--key", "k", "--port", "1");
    assertThat(result.exitCode()).isEqualTo(1);
    assertThat(result.err()).contains("not a Bloomery filter file");
    // It once read "junk.blmf: not a Bloomery filter file: junk.blmf: not a Bloomery filter: ...".
    assertThat(result.err().split(java.util.regex.Pattern.quote(junk.toString()), -1)).as(result.err()).hasSize(2);
    Cli.Result usage = Cli.run("load", junk.toString(), "--key", "k", "--chunk-size", "0");
    assertThat(usage.exitCode()).isEqualTo(2);
  }
}
