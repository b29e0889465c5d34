package io.bloomery.cli;

import io.bloomery.format.AtomicWrite;
import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The CLI's file outputs (build, merge, ...) through core's {@link AtomicWrite}: readers see either the
 * old file or the complete new one (temporary file in the same directory, fsync, rename, fsync of the
 * directory; permissions as an ordinary write gives them). This class adds the CLI's checks and
 * one-line messages: the target must be a regular file or not exist (a device, pipe or socket is never
 * replaced by a rename), and a failed write names the file.
 */
final class AtomicFile {
  private AtomicFile() {}

  /**
   * Replaces {@code target} with what {@code content} writes.
   *
   * @return the number of bytes written
   * @throws CliException if the target's directory does not exist, the target is not a regular file,
   *     or writing fails (disk full, I/O error); the message names the target
   */
  static long write(Path target, AtomicWrite.Content content) throws IOException {
    Path absolute = target.toAbsolutePath();
    Path directory = absolute.getParent();
    if (directory == null || !Files.isDirectory(directory)) {
      throw CliException.failure("cannot write " + target + ": directory " + directory + " does not exist");
    }
    if (Files.isDirectory(absolute)) {
      throw CliException.failure("cannot write " + target + ": it is a directory");
    }
    if (Files.exists(absolute) && !Files.isRegularFile(absolute)) {
      throw CliException.failure("cannot write " + target
          + ": it is not a regular file (a device, pipe or socket); filters are written to a new file and renamed over the old one");
    }
    try {
      return AtomicWrite.write(absolute, content);
    } catch (FileSystemException e) {
      throw e;
    } catch (IOException e) {
      // A failed write (ENOSPC, EFBIG, EIO) has no file name in its message: say which file it was.
      throw CliException.failure("cannot write " + target + ": "
          + (e.getMessage() == null ? "input/output error" : e.getMessage()) + " (the old file, if any, is unchanged)", e);
    }
  }
}
