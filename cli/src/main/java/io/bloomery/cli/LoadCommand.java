package io.bloomery.cli;

import io.bloomery.filter.FilterKind;
import io.bloomery.format.FilterFormat;
import io.bloomery.format.FilterFormatException;
import io.bloomery.format.FilterHeader;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code bloomery load}: sends a filter file to a running server as a BF.* key, through BF.LOADCHUNK. */
@Command(
    name = "load",
    mixinStandardHelpOptions = true,
    header = "Load a classic or blocked filter file into a running server as a BF.* key.",
    description = {
      "Streams FILE (as written by build, merge or the spark module) to the server in",
      "BF.LOADCHUNK chunks: the file's header first, then the following bytes in order.",
      "The server checks the whole file (its CRC included) before the key appears, so a",
      "failed load leaves no key; an existing key is never overwritten (DEL it first).",
      "Afterwards BF.EXISTS on the key answers exactly as 'bloomery query FILE'.",
      "The password comes from --password or the environment variable REDISCLI_AUTH."
    })
final class LoadCommand implements Callable<Integer> {
  @ParentCommand BloomeryCommand root;

  @Parameters(index = "0", paramLabel = "FILE", description = "A classic or blocked filter file (.blmf).")
  Path file;

  @Option(names = "--key", required = true, description = "The key to create.")
  String key;

  @Mixin ServerOptions server;

  @Option(names = "--chunk-size", defaultValue = "8388608", paramLabel = "BYTES",
      description = "Bytes per chunk after the header, 1 to 536870912 (default: ${DEFAULT-VALUE}).")
  int chunkSize;

  /** How long a chunk's reply may take: the last one includes reading back and checking the whole file. */
  static final int LAST_CHUNK_TIMEOUT_MILLIS = 3_600_000;

  LoadCommand() {}

  @Override
  public Integer call() throws IOException {
    server.validate();
    if (chunkSize < 1 || chunkSize > (512 << 20)) {
      throw CliException.usage("--chunk-size must be in [1, 536870912], was " + chunkSize);
    }
    FilterFiles.requireReadableFile(file);
    FilterHeader header;
    try {
      header = FilterFormat.describe(file);
    } catch (FilterFormatException e) {
      String detail = e.getMessage() == null ? "" : e.getMessage();
      String named = file + ": "; // describe() names the file itself; the line names it once
      throw CliException.failure(named + "not a Bloomery filter file: "
          + (detail.startsWith(named) ? detail.substring(named.length()) : detail), e);
    }
    if (header.kind() != FilterKind.CLASSIC_BLOOM && header.kind() != FilterKind.BLOCKED_BLOOM
        && header.kind() != FilterKind.SCALABLE_BLOCKED_BLOOM) {
      throw CliException.failure(file + ": holds a " + header.kind().kindName()
          + " filter; the server serves classic, blocked and scaling blocked files as BF.* keys");
    }
    int headerLength = 18 + header.seed().length;
    long sent = 0;
    int chunks = 0;
    try (InputStream in = Files.newInputStream(file);
        // the last chunk's reply waits while the server reads the whole staged file back (seconds per GB)
        RespClient client = server.connect(60_000, LAST_CHUNK_TIMEOUT_MILLIS)) {
      byte[] first = in.readNBytes(headerLength);
      client.call("BF.LOADCHUNK", key, 1L, first);
      sent += first.length;
      chunks++;
      while (true) {
        byte[] chunk = in.readNBytes(chunkSize);
        if (chunk.length == 0) {
          break;
        }
        client.call("BF.LOADCHUNK", key, sent + 1, chunk);
        sent += chunk.length;
        chunks++;
      }
    } catch (RespClient.Failure e) {
      throw CliException.failure("cannot load " + file + " into " + server + " key '" + key + "': "
          + String.valueOf(e.getMessage()).replace('\n', ' '), e);
    }
    if (sent != header.totalLength()) {
      throw CliException.failure(file + ": changed while it was read (" + sent + " bytes sent, header says "
          + header.totalLength() + ")");
    }
    root.out().printf("loaded %s (%s, %s, %s) into key '%s' at %s:%d%n", file,
        header.kind().kindName(), sent + " " + Units.noun(sent, "byte", "bytes"),
        Units.count(chunks, "chunk", "chunks"), key, server.host, server.port);
    StandardOutput.requireWritable(root.out());
    return BloomeryCommand.EXIT_OK;
  }
}
