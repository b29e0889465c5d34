package io.bloomery.cli;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Writes a file so that readers see either the old file or the complete new one, never a torn or
 * half-written file: the bytes go to a temporary file in the target's directory, which is fsynced and
 * then renamed over the target; the directory is fsynced so the rename survives a crash. On any
 * failure the temporary file is deleted and the target is untouched.
 *
 * <p>Permissions are what an ordinary write would give: a new file gets the process's default mode
 * (0666 less the umask, as {@code >} in a shell), and a replaced file keeps its permission bits. The
 * temporary file is created with the final bits (never wider), before any byte is written. Owner and
 * group are the writer's, as for any new file. The target must be a regular file or not exist: a
 * device, pipe or socket is never replaced by a rename.
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
   * @throws CliException if the target's directory does not exist, the target is not a regular file,
   *     or writing fails (disk full, I/O error); the message names the target
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
    if (Files.exists(absolute) && !Files.isRegularFile(absolute)) {
      throw CliException.failure("cannot write " + target
          + ": it is not a regular file (a device, pipe or socket); filters are written to a new file and renamed over the old one");
    }
    Set<PosixFilePermission> keep = existingPermissions(absolute);
    Path temporary = createTemporary(directory, absolute.getFileName().toString(), keep);
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
    } catch (FileSystemException e) {
      throw e;
    } catch (IOException e) {
      // A failed write (ENOSPC, EFBIG, EIO) has no file name in its message: say which file it was.
      throw CliException.failure("cannot write " + target + ": "
          + (e.getMessage() == null ? "input/output error" : e.getMessage()) + " (the old file, if any, is unchanged)", e);
    } finally {
      if (!moved) {
        Files.deleteIfExists(temporary);
      }
    }
  }

  /** The permission bits of an existing target, or null when it does not exist or the file system has none. */
  private static Set<PosixFilePermission> existingPermissions(Path target) throws IOException {
    if (!Files.exists(target)
        || Files.getFileAttributeView(target, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS) == null) {
      return null;
    }
    return Files.getPosixFilePermissions(target);
  }

  /**
   * A new empty file next to the target. {@code Files.createTempFile} would make it 0600 whatever the
   * umask, so it is created like any other file and, when it replaces one, given that file's bits.
   */
  private static Path createTemporary(Path directory, String name, Set<PosixFilePermission> keep) throws IOException {
    for (int attempt = 0; ; attempt++) {
      Path candidate = directory.resolve("." + name + "." + Long.toUnsignedString(ThreadLocalRandom.current().nextLong(), 36) + ".tmp");
      try {
        if (keep == null) {
          Files.createFile(candidate);
        } else {
          Files.createFile(candidate, PosixFilePermissions.asFileAttribute(keep));
          Files.setPosixFilePermissions(candidate, keep); // the umask may have cleared some of them
        }
        return candidate;
      } catch (FileAlreadyExistsException e) {
        if (attempt >= 100) {
          throw e;
        }
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
