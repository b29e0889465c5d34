package io.bloomery.cli;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Detects a standard stream that the caller closed ({@code <&-}, {@code >&-}). POSIX hands a closed
 * descriptor number to the next file opened, and the JVM opens its own files before {@code main}
 * runs ({@code lib/modules}, the jar): reading "stdin" would then read the JVM's module image, and
 * writing "stdout" would fail or, worse, land in a file. On Linux {@code /proc/self/fd} tells which
 * file the descriptor really is; elsewhere the check is skipped.
 */
final class StandardStreams {
  private StandardStreams() {}

  /**
   * Refuses descriptor {@code fd} for output if it is open read-only (a shell never redirects output
   * that way, so it is a closed descriptor reused by the JVM) or is one of the JVM's own files.
   *
   * @throws CliException naming the stream as closed
   */
  static void requireOpenForWriting(int fd, String stream) {
    String target = target(fd);
    if (target == null) {
      return;
    }
    if (isJvmFile(target) || accessMode(fd) == 0) {
      throw CliException.failure(stream + " is closed (the descriptor is now the JVM's " + target
          + "); give it a file or a pipe, e.g. > new-items.txt");
    }
  }

  /**
   * Refuses descriptor {@code fd} for input if it is one of the JVM's own files or open write-only.
   *
   * @throws CliException naming the stream as closed
   */
  static void requireOpenForReading(int fd, String stream) {
    String target = target(fd);
    if (target == null) {
      return;
    }
    if (isJvmFile(target) || accessMode(fd) == 1) {
      throw CliException.failure(stream + " is closed (the descriptor is now the JVM's " + target
          + "); give it a file or a pipe, e.g. < items.txt");
    }
  }

  /** What {@code /proc/self/fd/FD} points at, or null where that cannot be read. */
  private static String target(int fd) {
    try {
      return Files.readSymbolicLink(Path.of("/proc/self/fd/" + fd)).toString();
    } catch (IOException | UnsupportedOperationException | SecurityException e) {
      return null;
    }
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

  /** Files the JVM itself opens: anything under java.home, and the class path. */
  private static boolean isJvmFile(String target) {
    Path path = Path.of(target);
    if (!path.isAbsolute()) {
      return false; // pipe:[…], socket:[…], anon_inode:…
    }
    Path javaHome = Path.of(System.getProperty("java.home")).toAbsolutePath().normalize();
    if (path.normalize().startsWith(javaHome)) {
      return true;
    }
    for (String entry : List.of(System.getProperty("java.class.path", "").split(File.pathSeparator))) {
      if (!entry.isEmpty() && path.equals(Path.of(entry).toAbsolutePath().normalize())) {
        return true;
      }
    }
    return false;
  }
}
