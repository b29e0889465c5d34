package io.bloomery.server.resp;

import java.util.List;

/**
 * One decoded command: its name and arguments as raw bytes, from a multibulk frame or an inline line.
 *
 * @param argv the command name followed by its arguments; never empty
 */
public record RespRequest(List<byte[]> argv) {
  public RespRequest {
    argv = List.copyOf(argv);
    if (argv.isEmpty()) {
      throw new IllegalArgumentException("empty command");
    }
  }
}
