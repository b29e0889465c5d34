package io.bloomery.server.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * node-redis with @redis/bloom (versions pinned by {@code src/test/clients/node/package-lock.json})
 * through client.bf / cf / cms / topK, MULTI/EXEC and auto-pipelining, over RESP2 and RESP3:
 * {@code src/test/clients/node/bloom-suite.mjs}. Skipped, with the reason, only when node is not
 * installed or {@code npm ci} has not been run there ({@code ./run-tests} does both).
 */
class NodeRedisClientSuiteIT {

  private static ReplayTarget target;

  @BeforeAll
  static void start() throws Exception {
    Assumptions.assumeTrue(ExternalClient.installed("node"), "node is not installed: apt-get install nodejs npm (./run-tests does)");
    Path modules = ExternalClient.clientsDir().resolve("node").resolve("node_modules").resolve("@redis").resolve("bloom");
    Assumptions.assumeTrue(Files.isDirectory(modules),
        "node-redis is not installed: run 'npm ci' in " + ExternalClient.clientsDir().resolve("node") + " (./run-tests does)");
    target = ReplayTarget.open();
  }

  @AfterAll
  static void stop() throws Exception {
    ReplayTarget.closeIfOpen(target);
  }

  @ParameterizedTest(name = "RESP{0}")
  @ValueSource(ints = {2, 3})
  void nodeRedisSuitePasses(int resp) throws Exception {
    Path dir = ExternalClient.clientsDir().resolve("node");
    List<String> command = List.of("node", "bloom-suite.mjs", "--host", target.address().getHostString(),
        "--port", Integer.toString(target.address().getPort()), "--resp", Integer.toString(resp));
    ExternalClient.Result result = ExternalClient.run(command, dir, null, Duration.ofMinutes(3));
    System.out.println(result.output());
    assertThat(result.exitCode()).as(result.describe(command)).isZero();
    assertThat(result.output()).contains("all checks passed (RESP" + resp + ")");
  }
}
