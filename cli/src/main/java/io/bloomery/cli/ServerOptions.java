package io.bloomery.cli;

import picocli.CommandLine.Option;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.UnifiedJedis;

/** The {@code --host}, {@code --port} and {@code --password} of the commands that talk to a running server. */
final class ServerOptions {
  @Option(names = "--host", defaultValue = "127.0.0.1", description = "Server host (default: ${DEFAULT-VALUE}).")
  String host;

  @Option(names = {"-p", "--port"}, defaultValue = "6380", description = "Server port (default: ${DEFAULT-VALUE}).")
  int port;

  @Option(names = {"-a", "--password"}, description = "The server's requirepass (else REDISCLI_AUTH).")
  String password;

  /** Refuses a port outside [1, 65535] as a usage error. */
  void validate() {
    if (port < 1 || port > 65535) {
      throw CliException.usage("--port must be in [1, 65535], was " + port);
    }
  }

  /** A client with {@code config} plus the password (--password, else REDISCLI_AUTH). */
  UnifiedJedis connect(DefaultJedisClientConfig.Builder config) {
    String secret = password != null ? password : System.getenv("REDISCLI_AUTH");
    if (secret != null && !secret.isEmpty()) {
      config.password(secret);
    }
    return RedisClient.builder().hostAndPort(new HostAndPort(host, port)).clientConfig(config.build()).build();
  }

  @Override
  public String toString() {
    return host + ":" + port;
  }
}
