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
    header = "Check a server data directory's journal, snapshot and manifest; --fix cuts a damaged journal.",
    description = {
      "Reads the MANIFEST, the snapshot it names and every journal segment after it,",
      "checking every record's CRC-32C. Exit 0 if the server starts on the directory",
      "(a torn last record is trimmed by the server itself), 1 if it would refuse.",
      "--fix truncates the journal at the last good record before the damage and moves",
      "later segments aside; everything it cuts is kept next to the segment as",
      "journal.N.log.cut-<millis>. Run it with the server stopped."
    })
final class CheckLogCommand implements Callable<Integer> {
  @ParentCommand BloomeryCommand root;

  @Parameters(index = "0", paramLabel = "DIR", description = "The server's data directory (its --dir).")
  Path dir;

  @Option(names = "--fix", description = "Cut the journal at the last good record (keeps a copy of what it cuts).")
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
