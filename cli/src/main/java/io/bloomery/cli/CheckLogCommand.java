package io.bloomery.cli;

import io.bloomery.server.persistence.LogCheck;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code bloomery check-log [--fix] DIR}: checks a server's data directory, like redis-check-aof. */
@Command(
    name = "check-log",
    mixinStandardHelpOptions = true,
    header = "Check a server data directory's journal, snapshot and manifest; --fix repairs what it can.",
    description = {
      "Reads the MANIFEST, the snapshot it names and every journal segment after it,",
      "checking every CRC-32C, and names every damaged journal record (by sequence number)",
      "and snapshot key. Exit 0 if the server starts on the directory (a torn write after",
      "the last fsync is cut by the server itself), 1 if it would refuse or a running",
      "server holds the directory (the report then ends by saying it is in use).",
      "--fix removes the damaged journal bytes and keeps the good records around them; for a",
      "damaged snapshot it falls back to the previous snapshot and the journal after it, or",
      "else rewrites the snapshot without the damaged keys. Everything it removes is kept",
      "next to its file (journal.N.log.cut-at-OFFSET-<millis>, snapshot.N.snap.damaged-<millis>).",
      "Run it with the server stopped."
    })
final class CheckLogCommand implements Callable<Integer> {
  @ParentCommand BloomeryCommand root;

  @Parameters(index = "0", paramLabel = "DIR", description = "The server's data directory (its --dir).")
  Path dir;

  @Option(names = "--fix", description = "Repair as described above (keeps a copy of everything it removes).")
  boolean fix;

  @Override
  public Integer call() throws IOException {
    LogCheck.Report report;
    try {
      report = fix ? LogCheck.fix(dir) : LogCheck.check(dir);
    } catch (IOException e) {
      throw CliException.failure(e.getMessage(), e);
    }
    PrintWriter out = root.out();
    for (String line : report.lines()) {
      out.println(line);
    }
    out.flush();
    return report.startable() ? BloomeryCommand.EXIT_OK : BloomeryCommand.EXIT_FAILURE;
  }
}
