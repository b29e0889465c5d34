package io.bloomery.cli;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * Checks on the process's standard input before {@code --input -} reads it.
 *
 * <p>When a shell starts a program with standard input closed ({@code <&-}), file descriptor 0 is free,
 * and the first file the JVM opens for itself (its {@code lib/modules} image, or the jar) gets it:
 * {@code System.in} then reads that file as if it were the items. On Linux {@code /proc/self/fd/0} shows
 * where fd 0 points, so a closed or hijacked stdin is refused instead of read. Where there is no
 * {@code /proc}, nothing is checked. Only the process's own {@code System.in} is checked; a stream given
 * to an embedded command is taken as it is.
 */
final class StandardInput {
  private static final Path FD0 = Path.of("/proc/self/fd/0");

  private StandardInput() {}

  /**
   * Fails unless {@code stdin} is usable: when it is {@code System.in}, fd 0 must be open and must not
   * be one of the JVM's own files.
   *
   * @throws CliException naming what fd 0 is instead of a stream given to bloomery
   */
  static void requireOpen(InputStream stdin) {
    if (stdin != System.in || !Files.isDirectory(FD0.getParent())) {
      return;
    }
    if (!Files.exists(FD0, LinkOption.NOFOLLOW_LINKS)) {
      throw closed("file descriptor 0 is not open");
    }
    Path target;
    try {
      target = Files.readSymbolicLink(FD0);
    } catch (IOException | UnsupportedOperationException e) {
      return;
    }
    if (isJvmFile(target)) {
      throw closed("file descriptor 0 is " + target + ", a file the JVM opened for itself");
    }
  }

  /** The file standard input reads, for comparing with an output path; null when unknown. */
  static Path fileOf(InputStream stdin) {
    return stdin == System.in && Files.exists(FD0) ? FD0 : null;
  }

  private static CliException closed(String detail) {
    return CliException.failure("standard input is closed (" + detail
        + "); pipe the items in, redirect a file with <, or name it with --input FILE");
  }

  /** A file under the running JDK or on the class path (the jar) cannot be what the caller meant as stdin. */
  private static boolean isJvmFile(Path target) {
    if (!target.isAbsolute()) {
      return false; // "pipe:[…]", "socket:[…]": never the JVM's own
    }
    if (startsWithReal(target, System.getProperty("java.home"))) {
      return true;
    }
    String classPath = System.getProperty("java.class.path", "");
    for (String entry : classPath.split(java.io.File.pathSeparator)) {
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
