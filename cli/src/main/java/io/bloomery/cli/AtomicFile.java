package io.bloomery.cli;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * Writes a file so that readers see either the old file or the complete new one, never a torn or
 * half-written file: the bytes go to a temporary file in the target's directory, which is fsynced and
 * then renamed over the target; the directory is fsynced so the rename survives a crash. On any
 * failure the temporary file is deleted and the target is untouched.
 */
final class AtomicFile {
  /** Writes the whole content to the stream it is given. */
  @FunctionalInterface
  interface Content {
    void writeTo(OutputStream out) throws IOException;
  }

  private AtomicFile() {}

  /**
   * Replaces {@code target} with what {@code content} writes.
   *
   * @return the number of bytes written
   * @throws CliException if the target's directory does not exist or the target is a directory
   */
  static long write(Path target, Content content) throws IOException {
    Path absolute = target.toAbsolutePath();
    Path directory = absolute.getParent();
    if (directory == null || !Files.isDirectory(directory)) {
      throw CliException.failure("cannot write " + target + ": directory " + directory + " does not exist");
    }
    if (Files.isDirectory(absolute)) {
      throw CliException.failure("cannot write " + target + ": it is a directory");
    }
    Path temporary = Files.createTempFile(directory, "." + absolute.getFileName() + ".", ".tmp");
    boolean moved = false;
    try {
      long size;
      try (FileChannel channel = FileChannel.open(temporary, StandardOpenOption.WRITE)) {
        OutputStream out = new BufferedOutputStream(Channels.newOutputStream(channel), 1 << 16);
        content.writeTo(out);
        out.flush();
        channel.force(true);
        size = channel.size();
      }
      try {
        Files.move(temporary, absolute, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(temporary, absolute, StandardCopyOption.REPLACE_EXISTING);
      }
      moved = true;
      syncDirectory(directory);
      return size;
    } finally {
      if (!moved) {
        Files.deleteIfExists(temporary);
      }
    }
  }

  private static void syncDirectory(Path directory) {
    try (FileChannel channel = FileChannel.open(directory, StandardOpenOption.READ)) {
      channel.force(true);
    } catch (IOException | UnsupportedOperationException e) {
      // Some platforms cannot open or sync a directory; the file itself is already durable.
    }
  }
}
