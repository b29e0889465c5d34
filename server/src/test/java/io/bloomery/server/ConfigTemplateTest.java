package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The packaged config file: every option, with its default and a comment, read back to the same settings. */
class ConfigTemplateTest {
  @Test
  void everyOptionHasADescriptionAndALine() {
    assertThat(ConfigTemplate.DESCRIPTIONS.keySet()).containsExactlyElementsOf(ServerConfig.OPTIONS);
    String text = ConfigTemplate.render(Map.of());
    for (String name : ServerConfig.OPTIONS) {
      assertThat(text).as(name).containsPattern("(?m)^(# )?" + java.util.regex.Pattern.quote(name) + " \\S");
    }
  }

  @Test
  void theFileReadsBackToTheDefaults(@TempDir Path dir) throws IOException {
    Path file = Files.writeString(dir.resolve("bloomery.conf"), ConfigTemplate.render(Map.of()));
    ServerConfig parsed = ServerConfig.parse(Map.of(), file.toString());
    Map<String, String> defaults = ServerConfig.defaults();
    defaults.put("io-transport", "auto");
    for (Map.Entry<String, String> option : defaults.entrySet()) {
      assertThat(parsed.get(option.getKey())).as(option.getKey()).isEqualTo(option.getValue());
    }
  }

  @Test
  void givenValuesReplaceTheirDefaults(@TempDir Path dir) throws IOException {
    String text = ConfigTemplate.render(Map.of("dir", "/var/lib/bloomery", "bind", "127.0.0.1 ::1"));
    assertThat(text).contains("\ndir /var/lib/bloomery\n").contains("\nbind \"127.0.0.1 ::1\"\n");
    Path file = Files.writeString(dir.resolve("bloomery.conf"), text);
    ServerConfig parsed = ServerConfig.parse(Map.of(), file.toString());
    assertThat(parsed.dir()).isEqualTo(Path.of("/var/lib/bloomery"));
    assertThat(parsed.bind()).containsExactly("127.0.0.1", "::1");
  }

  @Test
  void anUnknownNameIsRefused() {
    assertThatThrownBy(() -> ConfigTemplate.render(Map.of("no-such-option", "1")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no-such-option");
  }
}
