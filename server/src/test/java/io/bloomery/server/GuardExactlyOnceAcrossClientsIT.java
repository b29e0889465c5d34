package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.guard.PostgresCluster;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/**
 * Exactly-once across processes and languages: Jedis (four threads, single GUARD.ADDs through the group commit),
 * Debian's python3 with redis-py ({@code execute_command}, GUARD.MADD in batches) and redis-cli (a stream of
 * GUARD.ADD lines) add overlapping, shuffled streams of real URLs at the same time; every distinct item must be
 * answered 1 exactly once, and the store must hold each exactly once.
 */
class GuardExactlyOnceAcrossClientsIT {
  @TempDir Path tmp;

  static String item(int i) {
    return switch (i % 3) {
      case 0 -> "https://news.example.com/2026/12/01/story-" + i + "?utm_source=feed&ref=" + (i * 7);
      case 1 -> "https://例え.jp/ページ/" + i + "#section-" + (i % 11);
      default -> "http://shop.example.org/item/" + i + "/reviews?page=" + (i % 5) + "&sort=new";
    };
  }

  static List<String> shuffled(int from, int to, long seed) {
    List<String> out = new ArrayList<>();
    for (int i = from; i < to; i++) {
      out.add(item(i));
    }
    Collections.shuffle(out, new Random(seed));
    return out;
  }

  @Test
  void everyDistinctItemIsNewExactlyOnce() throws Exception {
    long seed = System.nanoTime();
    System.out.println("GuardExactlyOnceAcrossClientsIT seed=" + seed);
    PostgresCluster pg = PostgresCluster.shared();
    String url = pg.createDatabase();
    try (BloomeryServer server = GuardFixtures.server("--store", "pg=" + url)) {
      int port = server.port();
      try (Jedis j = new Jedis("127.0.0.1", port)) {
        j.sendCommand(GuardCommandsIT.cmd("GUARD.RESERVE"), "seen", "pg", "0.01", "100000");
      }
      List<String> javaItems = shuffled(0, 2000, seed);
      List<String> pythonItems = shuffled(1000, 3000, seed + 1);
      List<String> cliItems = shuffled(500, 2500, seed + 2);

      Path py = tmp.resolve("adds.py");
      Files.writeString(py, String.join("\n",
          "import sys, redis",
          "r = redis.Redis(host='127.0.0.1', port=int(sys.argv[1]))",
          "items = [l.rstrip('\\n') for l in open(sys.argv[2], encoding='utf-8')]",
          "out = open(sys.argv[3], 'w', encoding='utf-8')",
          "for i in range(0, len(items), 50):",
          "    batch = items[i:i + 50]",
          "    for it, res in zip(batch, r.execute_command('GUARD.MADD', 'seen', *batch)):",
          "        out.write('%d\\t%s\\n' % (res, it))",
          "out.close()", ""));
      Path pyIn = tmp.resolve("python-items.txt");
      Files.write(pyIn, pythonItems, StandardCharsets.UTF_8);
      Path pyOut = tmp.resolve("python-out.txt");
      Path cliIn = tmp.resolve("cli-commands.txt");
      List<String> cliLines = new ArrayList<>();
      for (String s : cliItems) {
        cliLines.add("GUARD.ADD seen " + s);
      }
      Files.write(cliIn, cliLines, StandardCharsets.UTF_8);

      CompletableFuture<String> python = CompletableFuture.supplyAsync(() -> GuardFixtures.run(
          List.of("/usr/bin/python3", py.toString(), String.valueOf(port), pyIn.toString(), pyOut.toString()), null));
      CompletableFuture<String> cli = CompletableFuture.supplyAsync(() -> GuardFixtures.run(
          List.of("/usr/bin/redis-cli", "-p", String.valueOf(port)), cliIn));
      Map<String, AtomicInteger> news = new ConcurrentHashMap<>();
      Map<String, AtomicInteger> answers = new ConcurrentHashMap<>();
      List<CompletableFuture<Void>> javaThreads = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        List<String> part = javaItems.subList(t * 500, (t + 1) * 500);
        javaThreads.add(CompletableFuture.runAsync(() -> {
          try (Jedis j = new Jedis("127.0.0.1", port)) {
            for (String s : part) {
              Object r = j.sendCommand(GuardCommandsIT.cmd("GUARD.ADD"), "seen", s);
              record(news, answers, s, (Long) r);
            }
          }
        }));
      }
      for (CompletableFuture<Void> f : javaThreads) {
        f.get();
      }
      python.get();
      for (String line : Files.readAllLines(pyOut, StandardCharsets.UTF_8)) {
        String[] f = line.split("\t", 2);
        record(news, answers, f[1], Long.parseLong(f[0]));
      }
      List<String> cliReplies = cli.get().lines().toList();
      assertThat(cliReplies).hasSize(cliItems.size());
      for (int i = 0; i < cliItems.size(); i++) {
        record(news, answers, cliItems.get(i), Long.parseLong(cliReplies.get(i).strip()));
      }

      Map<String, Integer> wrong = new HashMap<>();
      for (int i = 0; i < 3000; i++) {
        int n = news.getOrDefault(item(i), new AtomicInteger()).get();
        if (n != 1) {
          wrong.put(item(i), n);
        }
      }
      assertThat(wrong).as("items not answered 1 exactly once (seed %d)", seed).isEmpty();
      assertThat(answers.values().stream().mapToInt(AtomicInteger::get).sum())
          .isEqualTo(javaItems.size() + pythonItems.size() + cliItems.size());
      String table = GuardFixtures.psql(url, "SELECT tablename FROM pg_tables WHERE tablename LIKE 'bloomery_seen_%' AND tablename !~ '_(pending|replies)$'")
          .strip();
      assertThat(GuardFixtures.psql(url, "SELECT count(*), count(DISTINCT item) FROM " + table).strip())
          .isEqualTo("3000|3000");
    }
  }

  private static void record(Map<String, AtomicInteger> news, Map<String, AtomicInteger> answers, String item,
      long reply) {
    assertThat(reply).isIn(0L, 1L);
    answers.computeIfAbsent(item, k -> new AtomicInteger()).incrementAndGet();
    if (reply == 1) {
      news.computeIfAbsent(item, k -> new AtomicInteger()).incrementAndGet();
    }
  }
}
