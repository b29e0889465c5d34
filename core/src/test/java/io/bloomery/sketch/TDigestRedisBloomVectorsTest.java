package io.bloomery.sketch;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Known answers recorded from Redis 8.0.2 with RedisBloom b28c2945 (t-digest-c 5b89d70a) by
 * tools/redisbloom-vectors/tdigest_vectors.py: every TDIGEST.* reply of each scenario must come out of {@link TDigest}
 * bit for bit, INFO's node counts and compressions included (they show that compression ran at the same moments
 * and merged the same centroids).
 */
class TDigestRedisBloomVectorsTest {
  private static final String RESOURCE = "/vectors/redisbloom-tdigest.txt";

  /** One recorded command and the reply RedisBloom gave. */
  record Step(String[] args, String reply) {
    @Override
    public String toString() {
      return String.join(" ", args).substring(0, Math.min(120, String.join(" ", args).length()));
    }
  }

  static Stream<Arguments> scenarios() throws IOException {
    List<Arguments> scenarios = new ArrayList<>();
    try (InputStream in = Objects.requireNonNull(TDigestRedisBloomVectorsTest.class.getResourceAsStream(RESOURCE));
        BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
      String name = null;
      List<Step> steps = new ArrayList<>();
      String[] pending = null;
      for (String line = reader.readLine(); line != null; line = reader.readLine()) {
        if (line.startsWith("# scenario ")) {
          if (name != null) {
            scenarios.add(Arguments.of(name, steps));
          }
          name = line.substring("# scenario ".length());
          steps = new ArrayList<>();
        } else if (line.startsWith("> ")) {
          pending = line.substring(2).split(" ");
        } else if (line.startsWith("= ")) {
          steps.add(new Step(pending, line.substring(2)));
        }
      }
      scenarios.add(Arguments.of(name, steps));
    }
    assertThat(scenarios).hasSizeGreaterThan(40);
    return scenarios.stream();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("scenarios")
  void repliesMatchRedisBloom(String scenario, List<Step> steps) {
    Map<String, TDigest> keys = new HashMap<>();
    int index = 0;
    for (Step step : steps) {
      index++;
      assertThat(run(keys, step.args())).as("%s step %d: %s", scenario, index, step).isEqualTo(expected(step));
    }
  }

  private static final List<String> DOUBLE_REPLIES =
      List.of("MIN", "MAX", "QUANTILE", "CDF", "BYRANK", "BYREVRANK", "TRIMMED_MEAN");

  /** The recorded reply, its doubles rendered by {@link #text} (Redis prints the shortest round-trip text). */
  private static String expected(Step step) {
    if (!DOUBLE_REPLIES.contains(step.args()[0].substring("TDIGEST.".length())) || step.reply().startsWith("E:")) {
      return step.reply();
    }
    String reply = step.reply();
    boolean array = reply.startsWith("[");
    String[] tokens = (array ? reply.substring(1, reply.length() - 1) : reply).split(", ");
    Stream<String> values = Arrays.stream(tokens).map(token -> switch (token) {
      case "nan" -> "nan";
      case "inf" -> "inf";
      case "-inf" -> "-inf";
      default -> text(Double.parseDouble(token));
    });
    return array ? list(values) : values.findFirst().orElseThrow();
  }

  /** Runs one command on the core digests and renders the reply as the recorder does. */
  private static String run(Map<String, TDigest> keys, String[] a) {
    String command = a[0].substring("TDIGEST.".length());
    TDigest t = keys.get(a[1]);
    switch (command) {
      case "CREATE" -> {
        keys.put(a[1], a.length == 4 ? TDigest.create(Long.parseLong(a[3])) : TDigest.create());
        return "OK";
      }
      case "ADD" -> {
        for (int i = 2; i < a.length; i++) {
          t.add(Double.parseDouble(a[i]));
        }
        return "OK";
      }
      case "RESET" -> {
        t.reset();
        return "OK";
      }
      case "MERGE" -> {
        int numKeys = Integer.parseInt(a[2]);
        List<TDigest> sources = new ArrayList<>();
        for (int i = 0; i < numKeys; i++) {
          sources.add(Objects.requireNonNull(keys.get(a[3 + i])));
        }
        List<String> options = Arrays.asList(a).subList(3 + numKeys, a.length);
        boolean override = options.contains("OVERRIDE");
        int at = options.indexOf("COMPRESSION");
        long compression = at >= 0 ? Long.parseLong(options.get(at + 1)) : t != null && !override ? t.compression() : 0;
        keys.put(a[1], TDigest.combine(t, sources, compression, override));
        return "OK";
      }
      case "MIN" -> {
        return text(t.min());
      }
      case "MAX" -> {
        return text(t.max());
      }
      case "QUANTILE" -> {
        double[] fractions = new double[a.length - 2];
        for (int i = 0; i < fractions.length; i++) {
          fractions[i] = Double.parseDouble(a[i + 2]);
        }
        return list(Arrays.stream(t.quantiles(fractions)).mapToObj(TDigestRedisBloomVectorsTest::text));
      }
      case "CDF" -> {
        return list(args(a).map(x -> text(t.cdf(Double.parseDouble(x)))));
      }
      case "RANK" -> {
        return list(args(a).map(x -> Long.toString(t.rank(Double.parseDouble(x)))));
      }
      case "REVRANK" -> {
        return list(args(a).map(x -> Long.toString(t.revRank(Double.parseDouble(x)))));
      }
      case "BYRANK" -> {
        return list(args(a).map(x -> text(t.byRank(Long.parseLong(x)))));
      }
      case "BYREVRANK" -> {
        return list(args(a).map(x -> text(t.byRevRank(Long.parseLong(x)))));
      }
      case "TRIMMED_MEAN" -> {
        return text(t.trimmedMean(Double.parseDouble(a[2]), Double.parseDouble(a[3])));
      }
      case "INFO" -> {
        return "[Compression, " + t.compression() + ", Capacity, " + t.capacity() + ", Merged nodes, " + t.mergedNodes()
            + ", Unmerged nodes, " + t.unmergedNodes() + ", Merged weight, " + t.mergedWeight() + ", Unmerged weight, "
            + t.unmergedWeight() + ", Observations, " + t.insertedCount() + ", Total compressions, "
            + t.totalCompressions() + ", Memory usage, " + t.memoryUsage() + "]";
      }
      default -> throw new AssertionError("no such command " + command);
    }
  }

  private static Stream<String> args(String[] a) {
    return Arrays.stream(a, 2, a.length);
  }

  private static String list(Stream<String> items) {
    return "[" + String.join(", ", items.toList()) + "]";
  }

  /**
   * A double in the recording's text, compared by value: the recording holds Redis's shortest round-trip text, so
   * reading it back gives RedisBloom's exact binary64; this renders ours the same way when the values are equal.
   */
  private static String text(double d) {
    return Double.isNaN(d) ? "nan" : Double.isInfinite(d) ? (d > 0 ? "inf" : "-inf") : "=" + Double.doubleToLongBits(d);
  }
}
