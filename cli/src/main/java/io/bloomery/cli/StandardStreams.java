package io.bloomery.cli;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * Detects a standard stream that the caller closed ({@code <&-}, {@code >&-}). POSIX hands a closed
 * descriptor number to the next file opened, and the JVM opens its own files before {@code main}
 * runs ({@code lib/modules}, the jar): reading "stdin" would then read the JVM's module image, and
 * writing "stdout" would fail or, worse, land in a file. On Linux {@code /proc/self/fd} tells which
 * file the descriptor really is; where there is no {@code /proc}, nothing is checked.
 */
final class StandardStreams {
  private static final Path FD_DIRECTORY = Path.of("/proc/self/fd");

  private StandardStreams() {}

  /**
   * Refuses descriptor {@code fd} for output if it is not open, open read-only (a shell never
   * redirects output that way, so it is a closed descriptor reused by the JVM) or one of the JVM's own
   * files.
   *
   * @throws CliException naming the stream as closed
   */
  static void requireOpenForWriting(int fd, String stream) {
    require(fd, stream, 0, "give it a file or a pipe, e.g. > new-items.txt");
  }

  /**
   * Refuses descriptor {@code fd} for input if it is not open, open write-only or one of the JVM's own
   * files.
   *
   * @throws CliException naming the stream as closed
   */
  static void requireOpenForReading(int fd, String stream) {
    require(fd, stream, 1, "pipe the items in, redirect a file with <, or name it with --input FILE");
  }

  /**
   * Checks the process's standard input before {@code --input -} reads it. A stream other than
   * {@code System.in} (given to an embedded command) is taken as it is.
   */
  static void requireStdinOpen(InputStream stdin) {
    if (stdin == System.in) {
      requireOpenForReading(0, "standard input");
    }
  }

  /** The file standard input reads, for comparing with an output path; null when unknown. */
  static Path fileOfStdin(InputStream stdin) {
    Path fd0 = FD_DIRECTORY.resolve("0");
    return stdin == System.in && Files.exists(fd0) ? fd0 : null;
  }

  private static void require(int fd, String stream, int refusedAccessMode, String advice) {
    if (!Files.isDirectory(FD_DIRECTORY)) {
      return;
    }
    Path link = FD_DIRECTORY.resolve(Integer.toString(fd));
    if (!Files.exists(link, LinkOption.NOFOLLOW_LINKS)) {
      throw closed(stream, "file descriptor " + fd + " is not open", advice);
    }
    Path target;
    try {
      target = Files.readSymbolicLink(link);
    } catch (IOException | UnsupportedOperationException | SecurityException e) {
      return;
    }
    if (isJvmFile(target)) {
      throw closed(stream, "the descriptor is now the JVM's " + target, advice);
    }
    if (accessMode(fd) == refusedAccessMode) {
      throw closed(stream, "file descriptor " + fd + " is open " + (refusedAccessMode == 0 ? "read-only" : "write-only"),
          advice);
    }
  }

  private static CliException closed(String stream, String detail, String advice) {
    return CliException.failure(stream + " is closed (" + detail + "); " + advice);
  }

  /** O_ACCMODE of the descriptor (0 read-only, 1 write-only, 2 read-write), or -1 if unknown. */
  private static int accessMode(int fd) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/fdinfo/" + fd))) {
        if (line.startsWith("flags:")) {
          return Integer.parseInt(line.substring("flags:".length()).strip(), 8) & 3;
        }
      }
    } catch (IOException | NumberFormatException | SecurityException e) {
      return -1;
    }
    return -1;
  }

  /** Files the JVM itself opens: anything under java.home, and on the class path (jars or directories). */
  private static boolean isJvmFile(Path target) {
    if (!target.isAbsolute()) {
      return false; // pipe:[…], socket:[…], anon_inode:…
    }
    if (startsWithReal(target, System.getProperty("java.home"))) {
      return true;
    }
    for (String entry : System.getProperty("java.class.path", "").split(File.pathSeparator)) {
      if (!entry.isEmpty() && startsWithReal(target, entry)) {
        return true;
      }
    }
    return false;
  }

  private static boolean startsWithReal(Path target, String location) {
    if (location == null) {
      return false;
    }
    try {
      return target.startsWith(Path.of(location).toRealPath());
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }
}
