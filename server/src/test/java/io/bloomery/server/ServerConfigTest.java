package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How the server's arguments are read: config file, then BLOOMERY_* variables, then flags; help and version. */
class ServerConfigTest {
  @TempDir Path tmp;

  @Test
  void flagsOverTheEnvironmentOverTheConfigFile() throws IOException {
    Path conf = Files.writeString(tmp.resolve("bloomery.conf"), "port 6391\nmaxclients 7\ntimeout 3\n");
    ServerConfig config = ServerConfig.parse(Map.of("BLOOMERY_MAXCLIENTS", "8", "BLOOMERY_TIMEOUT", "4"),
        conf.toString(), "--timeout", "5");
    assertThat(config.port()).isEqualTo(6391);
    assertThat(config.maxclients()).isEqualTo(8);
    assertThat(config.timeoutSeconds()).isEqualTo(5);
  }

  @Test
  void helpAndVersionAreRequestsWhereAnOptionMayStandAndValuesElsewhere() throws IOException {
    Path conf = Files.writeString(tmp.resolve("bloomery.conf"), "port 6391\n");
    assertThat(ServerConfig.request("--help")).isEqualTo(ServerConfig.Request.HELP);
    assertThat(ServerConfig.request("-h")).isEqualTo(ServerConfig.Request.HELP);
    assertThat(ServerConfig.request(conf.toString(), "--port", "1", "-h")).isEqualTo(ServerConfig.Request.HELP);
    assertThat(ServerConfig.request("--version")).isEqualTo(ServerConfig.Request.VERSION);
    assertThat(ServerConfig.request("--dir", "d", "-V")).isEqualTo(ServerConfig.Request.VERSION);
    assertThat(ServerConfig.request("--requirepass", "-h", "--port=1")).isNull();
    assertThat(ServerConfig.parse(Map.of(), "--requirepass", "-h").requirepass()).isEqualTo("-h");
    assertThat(ServerConfig.request()).isNull();
    assertThatThrownBy(() -> ServerConfig.parse(Map.of(), "--port", "1", "--help"))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("'--help' is not a server option"
            + " (bloomery serve --help answers it)");
  }

  @Test
  void everyOptionHasADefault() {
    assertThat(ServerConfig.defaults().keySet()).containsExactlyElementsOf(ServerConfig.OPTIONS);
  }
}
