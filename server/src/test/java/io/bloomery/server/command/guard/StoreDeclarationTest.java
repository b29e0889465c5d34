package io.bloomery.server.command.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.server.ServerConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StoreDeclarationTest {
  @TempDir Path tmp;

  static List<StoreDeclaration> parse(List<String> stores, List<String> tables, Map<String, String> env) {
    return StoreDeclaration.parse(stores, tables, env);
  }

  @Test
  void parsesPostgresSqliteAndTables() {
    List<StoreDeclaration> d = parse(List.of("pg=jdbc:postgresql://127.0.0.1:5432/db?user=u",
        "lite=sqlite:/var/lib/x.db", "foreign=jdbc:postgresql://h/db"), List.of("foreign=public.links.url",
        "pg=my_seen"), Map.of());
    assertThat(d).hasSize(3);
    assertThat(d.get(0).table()).isEqualTo("my_seen");
    assertThat(d.get(0).readOnly()).isFalse();
    assertThat(d.get(1).sqlite()).isTrue();
    assertThat(d.get(2).table()).isEqualTo("public.links");
    assertThat(d.get(2).column()).isEqualTo("url");
    assertThat(d.get(2).readOnly()).isTrue();
  }

  @Test
  void credentialsAreRedactedFromUrlsAndAnyText() {
    StoreDeclaration d = parse(List.of("pg=jdbc:postgresql://h:5432/db?user=app&password=hunter2secret&ssl=true"),
        List.of(), Map.of()).get(0);
    assertThat(d.redacted()).isEqualTo("jdbc:postgresql://h:5432/db?user=app&password=***&ssl=true");
    assertThat(d.redact("FATAL: password authentication failed (hunter2secret)")).doesNotContain("hunter2secret");
    assertThat(d.toString()).doesNotContain("hunter2secret");
    StoreDeclaration u = parse(List.of("pg=jdbc:postgresql://app:topsecret@h/db"), List.of(), Map.of()).get(0);
    assertThat(u.redacted()).isEqualTo("jdbc:postgresql://app:***@h/db");
  }

  @Test
  void credentialsFromTheEnvironmentAreAddedAndRedacted() {
    StoreDeclaration d = parse(List.of("my-pg=jdbc:postgresql://h/db"), List.of(),
        Map.of("BLOOMERY_STORE_MY_PG_USER", "svc", "BLOOMERY_STORE_MY_PG_PASSWORD", "from-env-pw")).get(0);
    assertThat(d.url()).isEqualTo("jdbc:postgresql://h/db?user=svc&password=from-env-pw");
    assertThat(d.redacted()).doesNotContain("from-env-pw");
    assertThat(d.redact("oops from-env-pw")).isEqualTo("oops ***");
  }

  @Test
  void hostileDeclarationsAreRefusedWithOneLineThatNeverShowsTheUrl() {
    List<List<String>> bad = List.of(List.of(""), List.of("="), List.of("noequals"), List.of("=jdbc:postgresql://h/db"),
        List.of("bad name=jdbc:postgresql://h/db"), List.of("x=mysql://h/db?password=leak1"),
        List.of("x=sqlite:"), List.of("x=jdbc:postgresql://h/db", "x=sqlite:f"), List.of("x=\n\r"),
        List.of("a".repeat(65) + "=sqlite:f"), List.of("x="));
    for (List<String> stores : bad) {
      assertThatThrownBy(() -> parse(stores, List.of(), Map.of())).as("%s", stores)
          .isInstanceOf(IllegalArgumentException.class)
          .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n").doesNotContain("leak1"));
    }
    assertThatThrownBy(() -> parse(List.of("x=sqlite:f"), List.of("y=t.c"), Map.of()))
        .hasMessageContaining("which no --store declares");
    assertThatThrownBy(() -> parse(List.of("x=sqlite:f"), List.of("x=t."), Map.of()))
        .hasMessageContaining("expected TABLE.COLUMN");
    assertThatThrownBy(() -> parse(List.of("x=sqlite:f"), List.of("x=t.c", "x=u.d"), Map.of()))
        .hasMessageContaining("given twice");
  }

  @Test
  void serverConfigTakesRepeatedFlagsAndConfigFileLinesAndRedactsItsString() throws Exception {
    Path conf = tmp.resolve("bloomery.conf");
    Files.writeString(conf, "store a=jdbc:postgresql://h/db?user=u&password=filesecret\nstore b=sqlite:/tmp/b.db\n"
        + "store-table b=seen\nguard-timeout 1500\n");
    ServerConfig c = ServerConfig.parse(Map.of(), conf.toString(), "--store", "c=sqlite:/tmp/c.db");
    List<StoreDeclaration> d = c.stores(Map.of());
    assertThat(d).extracting(StoreDeclaration::name).containsExactly("a", "b", "c");
    assertThat(c.guardTimeoutMillis()).isEqualTo(1500);
    assertThat(c.toString()).doesNotContain("filesecret");
    assertThatThrownBy(() -> ServerConfig.parse(Map.of(), "--guard-timeout", "0"))
        .hasMessageContaining("guard-timeout");
    assertThatThrownBy(() -> ServerConfig.parse(Map.of(), "--store", "z=ftp://x?password=leak2"))
        .isInstanceOf(IllegalArgumentException.class)
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("leak2"));
  }
}
