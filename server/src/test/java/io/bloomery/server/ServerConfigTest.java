package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
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

  /** A valid value other than the default for every option of the option table. */
  private static final Map<String, String> SAMPLES = samples();

  private static Map<String, String> samples() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("port", "6399");
    m.put("bind", "127.0.0.2");
    m.put("dir", "/var/lib/bloomery");
    m.put("appendonly", "no");
    m.put("appendfsync", "always");
    m.put("requirepass", "s3cret");
    m.put("aclfile", "/etc/bloomery/users.acl");
    m.put("maxmemory", "512mb");
    m.put("maxclients", "77");
    m.put("timeout", "30");
    m.put("protected-mode", "no");
    m.put("http-port", "9199");
    m.put("client-output-buffer-limit", "32mb");
    m.put("proto-max-bulk-len", "2mb");
    m.put("save", "3600 1");
    m.put("loglevel", "warning");
    m.put("store", "orders=sqlite:/tmp/orders.db");
    m.put("store-table", "orders=public.customers.email");
    m.put("guard-timeout", "1234");
    m.put("guard-statement-timeout", "4321");
    m.put("guard-build-timeout", "9876");
    m.put("http-auth", "token");
    m.put("load-idle-timeout", "60");
    m.put("io-transport", "nio");
    m.put("io-threads", "3");
    m.put("http-maxclients", "12");
    m.put("http-timeout", "7");
    m.put("http-request-timeout", "3");
    m.put("client-query-buffer-limit", "2mb");
    m.put("maxmemory-clients", "10%");
    m.put("auth-fail-delay", "50");
    m.put("bf-error-rate", "0.001");
    m.put("bf-initial-size", "1000");
    m.put("bf-expansion-factor", "4");
    m.put("cf-bucket-size", "4");
    m.put("cf-initial-size", "2048");
    m.put("cf-max-iterations", "30");
    m.put("cf-expansion-factor", "2");
    m.put("cf-max-expansions", "16");
    m.put("cluster-enabled", "yes");
    m.put("cluster-port", "17000");
    m.put("cluster-announce-ip", "10.0.0.7");
    m.put("cluster-announce-port", "7000");
    m.put("cluster-node-timeout", "300");
    return m;
  }

  @Test
  void everyOptionIsSettableAsAFlagAnEnvironmentVariableAndAConfigLine() throws IOException {
    assertThat(SAMPLES.keySet()).containsExactlyElementsOf(ServerConfig.OPTIONS);
    Map<String, String> defaults = ServerConfig.defaults();
    for (Map.Entry<String, String> e : SAMPLES.entrySet()) {
      String name = e.getKey();
      String value = e.getValue();
      assertThat(value).as(name).isNotEqualTo(defaults.get(name));
      String env = "BLOOMERY_" + name.toUpperCase(Locale.ROOT).replace('-', '_');
      Path conf = Files.writeString(tmp.resolve(name + ".conf"), "# set by the file\n" + name + " \"" + value + "\"\n");
      // a store-table names a declared store
      List<String> store = name.equals("store-table") ? List.of("--store", SAMPLES.get("store")) : List.of();
      assertThat(parse(Map.of(), store, "--" + name, value).get(name)).as("--" + name).isEqualTo(value);
      assertThat(parse(Map.of(), store, "--" + name + "=" + value).get(name)).as(name + "=").isEqualTo(value);
      assertThat(parse(Map.of(env, value), store).get(name)).as(env).isEqualTo(value);
      assertThat(parse(Map.of(), store, conf.toString()).get(name)).as(conf.toString()).isEqualTo(value);
    }
  }

  /** Parses {@code first} (a config file or flags), then {@code flags}. */
  private static ServerConfig parse(Map<String, String> env, List<String> flags, String... first) {
    List<String> args = new ArrayList<>(List.of(first));
    args.addAll(flags);
    return ServerConfig.parse(env, args.toArray(String[]::new));
  }

  @Test
  void aClusterNodesBusPortIsItsPortPlus10000UnlessGivenAndNeedsAFixedPort() {
    ServerConfig node = ServerConfig.parse(Map.of(), "--cluster-enabled", "yes", "--port", "7000");
    assertThat(node.clusterEnabled()).isTrue();
    assertThat(node.clusterPort()).isEqualTo(17000);
    assertThat(node.clusterAnnouncePort()).isEqualTo(7000);
    assertThat(node.clusterAnnounceIp()).isNull();
    assertThat(ServerConfig.parse(Map.of(), "--port", "7000", "--cluster-port", "7100").clusterPort()).isEqualTo(7100);
    assertThat(ServerConfig.parse(Map.of()).clusterEnabled()).isFalse();
    assertThatThrownBy(() -> ServerConfig.parse(Map.of(), "--cluster-enabled", "yes", "--port", "0"))
        .hasMessageContaining("a cluster node needs a fixed port");
    assertThatThrownBy(() -> ServerConfig.parse(Map.of(), "--cluster-enabled", "yes", "--port", "60000"))
        .hasMessageContaining("give --cluster-port");
    assertThatThrownBy(() -> ServerConfig.parse(Map.of(), "--cluster-enabled", "maybe"))
        .hasMessage("cluster-enabled must be yes or no, not 'maybe'");
    assertThat(node.clusterNodeTimeoutMillis()).isEqualTo(1000);
    assertThat(ServerConfig.parse(Map.of(), "--cluster-enabled", "yes", "--port", "7000", "--cluster-node-timeout",
        "300").clusterNodeTimeoutMillis()).isEqualTo(300);
    for (String bad : List.of("99", "60001", "1s", "")) {
      assertThatThrownBy(() -> ServerConfig.parse(Map.of(), "--cluster-enabled", "yes", "--port", "7000",
          "--cluster-node-timeout", bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("cluster-node-timeout");
    }
  }

  @Test
  void unknownOptionsAndBadValuesAreOneLineErrors() {
    assertThatThrownBy(() -> ServerConfig.parse(Map.of(), "--no-such-option", "1"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("unknown option --no-such-option (known: ");
    assertThatThrownBy(() -> ServerConfig.parse(Map.of("BLOOMERY_IO_THREADS", "many")))
        .hasMessage("io-threads must be an integer, not 'many'");
    assertThatThrownBy(() -> ServerConfig.parse(Map.of(), "--loglevel", "loud")).hasMessageContaining("loglevel");
    assertThatThrownBy(() -> ServerConfig.parse(Map.of(), "--http-auth", "maybe")).hasMessageContaining("http-auth");
  }

  @Test
  void theCommandLineReadsAsRedisServersDoes() {
    assertThat(ServerConfig.parse(Map.of(), "--PORT", "6391", "--Maxclients=9").port()).isEqualTo(6391);
    assertThat(ServerConfig.parse(Map.of(), "--Maxclients=9").maxclients()).isEqualTo(9);
    assertThat(ServerConfig.parse(Map.of(), "--port", "6391", "--port", "6392").port()).isEqualTo(6392);
    assertThat(ServerConfig.parse(Map.of(), "--save", "").save()).isEmpty();
    assertThat(ServerConfig.parse(Map.of(), "--bind", "-::1").bind()).containsExactly("::1");
    assertThat(ServerConfig.parse(Map.of(), "--requirepass", "--port").requirepass()).isEqualTo("--port");
    ServerConfig stores = ServerConfig.parse(Map.of(), "--store", "a=sqlite:/tmp/a.db", "--port", "6391",
        "--store", "b=sqlite:/tmp/b.db");
    assertThat(stores.get("store")).isEqualTo("a=sqlite:/tmp/a.db\nb=sqlite:/tmp/b.db");
  }

  @Test
  void hostileCommandLinesAreOneLineErrors() throws IOException {
    Path conf = Files.writeString(tmp.resolve("late.conf"), "port 6391\n");
    assertThatThrownBy(() -> ServerConfig.parse(Map.of(), "--port"))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("option --port needs a value");
    assertThatThrownBy(() -> ServerConfig.parse(Map.of(), "--port", "1", conf.toString()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("unexpected argument '" + conf + "'");
    assertThatThrownBy(() -> ServerConfig.parse(Map.of(), conf.toString(), "stray"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("unexpected argument 'stray'");
    assertThatThrownBy(() -> ServerConfig.parse(Map.of(), "--Por=1"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("unknown option --por (known: ");
    assertThatThrownBy(() -> ServerConfig.parse(Map.of(), "-p", "1"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("unexpected argument '-p'");
    assertThatThrownBy(() -> ServerConfig.parse(Map.of(), "--port", "1\u0000"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("port must be an integer");
    assertThatThrownBy(() -> ServerConfig.parse(Map.of(), tmp.resolve("missing.conf").toString()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("cannot read config file");
  }

  @Test
  void everyOptionHasADefault() {
    assertThat(ServerConfig.defaults().keySet()).containsExactlyElementsOf(ServerConfig.OPTIONS);
  }
}
