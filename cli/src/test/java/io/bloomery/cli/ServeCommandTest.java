package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ServeCommandTest {
  @Test
  void badOptionsExitTwoWithTheServersOneLineMessage() {
    Cli.Result result = Cli.run("serve", "--port", "nope");
    assertThat(result.exitCode()).as(result.toString()).isEqualTo(2);
    assertThat(result.err()).isEqualTo("bloomery serve: port must be an integer, not 'nope'\n");
    Cli.Result unknown = Cli.run("serve", "--no-such-option", "1");
    assertThat(unknown.exitCode()).isEqualTo(2);
    assertThat(unknown.err()).startsWith("bloomery serve: unknown option --no-such-option");
  }

  @Test
  void helpListsServe() {
    Cli.Result result = Cli.run("--help");
    assertThat(result.out()).contains("serve").contains("Serve filters over RESP2/RESP3");
  }
}
