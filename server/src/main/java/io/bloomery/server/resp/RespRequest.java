package io.bloomery.server.resp;

import java.util.Collections;
import java.util.List;

/**
 * One decoded command: its name and arguments as raw bytes, from a multibulk frame or an inline line.
 *
 * @param argv the command name followed by its arguments; never empty. An unmodifiable view of the list given,
 *     which the caller hands over (the decoder builds a fresh list per command and never touches it again), so no
 *     copy is made per command.
 */
public record RespRequest(List<byte[]> argv) {
  public RespRequest {
    if (argv.isEmpty()) {
      throw new IllegalArgumentException("empty command");
    }
    argv = Collections.unmodifiableList(argv);
  }
}
