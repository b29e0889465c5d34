package io.bloomery.server.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * redis-py (Debian's python3-redis, run with /usr/bin/python3) through its bf() / cf() / cms() /
 * topk() APIs and a transactional pipeline(): {@code src/test/clients/python/bloom_suite.py}.
 * Skipped, with the reason, only when python3-redis is not installed ({@code ./run-tests} installs it).
 */
class RedisPyClientSuiteIT {

  private static final String PYTHON = "/usr/bin/python3";
  private static ReplayTarget target;

  @BeforeAll
  static void start() throws Exception {
    Assumptions.assumeTrue(ExternalClient.installed(PYTHON), PYTHON + " is not installed");
    ExternalClient.Result probe = ExternalClient.run(List.of(PYTHON, "-c", "import redis"),
        ExternalClient.clientsDir(), null, Duration.ofSeconds(30));
    Assumptions.assumeTrue(probe.exitCode() == 0,
        "redis-py is not installed for " + PYTHON + ": apt-get install python3-redis (./run-tests does)");
    target = ReplayTarget.open();
  }

  @AfterAll
  static void stop() throws Exception {
    ReplayTarget.closeIfOpen(target);
  }

  @Test
  void redisPySuitePasses() throws Exception {
    Path dir = ExternalClient.clientsDir().resolve("python");
    List<String> command = List.of(PYTHON, "bloom_suite.py", "--host", target.address().getHostString(),
        "--port", Integer.toString(target.address().getPort()));
    ExternalClient.Result result = ExternalClient.run(command, dir, null, Duration.ofMinutes(3));
    System.out.println(result.output());
    assertThat(result.exitCode()).as(result.describe(command)).isZero();
    assertThat(result.output()).contains("\nOK");
  }
}
