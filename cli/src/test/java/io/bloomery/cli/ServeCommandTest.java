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

  @Test
  void helpPrintsTheUsageWithEveryOptionAndExitsZero() {
    for (String flag : new String[] {"--help", "-h"}) {
      for (Cli.Result result : new Cli.Result[] {Cli.run("serve", flag), Cli.run("serve", "--port", "6390", flag)}) {
        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.err()).as(result.toString()).isEmpty();
        assertThat(result.out()).contains("Usage: bloomery serve").contains("Serve filters over RESP2/RESP3")
            .contains("\n  --port 6380\n").contains("\n  --requirepass\n").contains("\n  --http-port 9180\n");
        for (String option : io.bloomery.server.ServerConfig.defaults().keySet()) {
          assertThat(result.out()).contains("\n  --" + option);
        }
      }
    }
  }

  @Test
  void helpServeAndServeHelpShowEveryOptionOfTheOptionTableWithWhatItDoes() {
    Cli.Result help = Cli.run("help", "serve");
    Cli.Result serveHelp = Cli.run("serve", "--help");
    assertThat(help.exitCode()).as(help.toString()).isZero();
    assertThat(help.out()).isEqualTo(serveHelp.out());
    for (String option : io.bloomery.server.ServerConfig.defaults().keySet()) {
      assertThat(help.out()).contains("\n  --" + option);
      assertThat(io.bloomery.server.ConfigTemplate.description(option)).isNotEmpty();
      for (String line : io.bloomery.server.ConfigTemplate.description(option)) {
        assertThat(help.out()).contains("\n        " + line + "\n");
      }
    }
    assertThat(help.out()).contains("--io-threads 0").contains("--http-auth both").contains("--loglevel notice")
        .contains("--maxmemory-clients 25%").contains("Event loops serving clients")
        .contains("A flag wins over the environment, which wins over the file,");
  }

  @Test
  void noCommandListsEveryCommandAndExitsTwo() {
    Cli.Result result = Cli.run();
    assertThat(result.exitCode()).isEqualTo(2);
    for (String command : new String[] {"plan", "build", "query", "info", "merge", "demo", "dedup", "bench", "serve",
        "load", "import", "check-log", "top", "help"}) {
      assertThat(result.err().lines().findFirst().orElseThrow()).contains(command);
    }
  }

  @Test
  void versionPrintsTheVersionAndExitsZero() {
    Cli.Result root = Cli.run("--version");
    for (String flag : new String[] {"--version", "-V"}) {
      Cli.Result result = Cli.run("serve", flag);
      assertThat(result.exitCode()).as(result.toString()).isZero();
      assertThat(result.out()).startsWith("bloomery ").isEqualTo(root.out());
    }
  }

  @Test
  void aHelpFlagAsAnOptionsValueIsThatValue() {
    Cli.Result result = Cli.run("serve", "--port", "--help");
    assertThat(result.exitCode()).as(result.toString()).isEqualTo(2);
    assertThat(result.err()).isEqualTo("bloomery serve: port must be an integer, not '--help'\n");
  }

  @Test
  void aPlainServeStartsTheServerWithoutTheCommandTree() {
    assertThat(ServeCommand.direct(new String[] {"serve"})).isEmpty();
    assertThat(ServeCommand.direct(new String[] {"serve", "conf", "--port", "1"})).containsExactly("conf", "--port", "1");
    assertThat(ServeCommand.direct(new String[] {"serve", "--help"})).isNull();
    assertThat(ServeCommand.direct(new String[] {"serve", "--port", "1", "-V"})).isNull();
    assertThat(ServeCommand.direct(new String[] {"serve", "--verbose"})).isNull();
    assertThat(ServeCommand.direct(new String[] {"serve", "--port"})).isNull();
    assertThat(ServeCommand.direct(new String[] {"plan", "serve"})).isNull();
    assertThat(ServeCommand.direct(new String[] {})).isNull();
  }
}
