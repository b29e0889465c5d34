package io.bloomery.cli;

import java.io.IOException;
import picocli.CommandLine.Option;

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

  /**
   * A connection, authenticated with the password (--password, else REDISCLI_AUTH) if there is one.
   *
   * @param readTimeoutMillis how long one reply may take
   */
  RespClient connect(int connectTimeoutMillis, int readTimeoutMillis) throws IOException {
    String secret = password != null ? password : System.getenv("REDISCLI_AUTH");
    return RespClient.connect(host, port, connectTimeoutMillis, readTimeoutMillis, secret);
  }

  @Override
  public String toString() {
    return host + ":" + port;
  }
}
