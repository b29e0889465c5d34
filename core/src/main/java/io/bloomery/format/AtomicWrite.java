package io.bloomery.format;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The one way the project writes a file: readers see the old file or the complete new one, never a
 * torn or half-written one, and a completed write survives a crash. The bytes go to a temporary file
 * in the target's directory ({@code .NAME.RANDOM.tmp}), which is forced to disk and renamed over the
 * target; then the directory is forced so the rename is durable. On any failure before the rename the
 * temporary file is deleted and the target is untouched.
 *
 * <p>Permissions are what an ordinary write would give: a new file gets the process's default mode
 * (0666 less the umask), a replaced file keeps its permission bits; the temporary file has the final
 * bits from its creation, before any byte is written.
 *
 * <p>{@link #write} takes the whole content at once; {@link #open} hands out a {@link Pending} file for
 * a writer that produces its content over time (a snapshot streamed while a server runs) and
 * {@link Pending#publish publishes} it at the end.
 */
public final class AtomicWrite {

  /** Writes the whole content to the stream it is given. */
  @FunctionalInterface
  public interface Content {
    void writeTo(OutputStream out) throws IOException;
  }

  private static final int BUFFER = 1 << 16;

  private AtomicWrite() {}

  /**
   * Replaces {@code target} with what {@code content} writes (through a 64 KiB buffer).
   *
   * @return the number of bytes written
   * @throws IOException if the directory does not exist or writing, forcing or renaming fails; the
   *     target is then as it was, and whatever {@code content} throws propagates the same way
   */
  public static long write(Path target, Content content) throws IOException {
    Objects.requireNonNull(content, "content");
    try (Pending pending = open(target)) {
      content.writeTo(pending.out());
      return pending.publish();
    }
  }

  /** Replaces {@code target} with {@code bytes}. */
  public static void write(Path target, byte[] bytes) throws IOException {
    Objects.requireNonNull(bytes, "bytes");
    write(target, out -> out.write(bytes));
  }

  /**
   * Creates the temporary file for {@code target}; nothing is visible under {@code target} until
   * {@link Pending#publish}, and {@link Pending#close} without a publish deletes it.
   */
  public static Pending open(Path target) throws IOException {
    Path absolute = Objects.requireNonNull(target, "target").toAbsolutePath();
    Path directory = absolute.getParent();
    if (directory == null) {
      throw new IOException("cannot write " + target + ": it has no parent directory");
    }
    Path temporary = createTemporary(directory, absolute.getFileName().toString(), existingPermissions(absolute));
    try {
      return new Pending(temporary, absolute, FileChannel.open(temporary, StandardOpenOption.WRITE));
    } catch (IOException | RuntimeException e) {
      Files.deleteIfExists(temporary);
      throw e;
    }
  }

  /**
   * Makes a rename or creation in {@code directory} durable (POSIX fsync of the directory). Platforms
   * that cannot open a directory for reading (not Linux) skip the step; on Linux a failure is an error.
   */
  public static void forceDirectory(Path directory) throws IOException {
    try (FileChannel channel = FileChannel.open(directory, StandardOpenOption.READ)) {
      channel.force(true);
    } catch (IOException | UnsupportedOperationException e) {
      if (System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("linux")) {
        throw e;
      }
    }
  }

  /** A temporary file that becomes the target when published. Not safe for use by several threads. */
  public static final class Pending implements AutoCloseable {
    private final Path temporary;
    private final Path target;
    private final FileChannel channel;
    private final OutputStream out;
    private boolean done;

    private Pending(Path temporary, Path target, FileChannel channel) {
      this.temporary = temporary;
      this.target = target;
      this.channel = channel;
      this.out = new BufferedOutputStream(Channels.newOutputStream(channel), BUFFER);
    }

    /** The buffered stream into the temporary file; {@link #publish} flushes it. Do not close it. */
    public OutputStream out() {
      return out;
    }

    /** The temporary file's path (for messages and tests); never the target's. */
    public Path temporary() {
      return temporary;
    }

    /**
     * Flushes and forces the temporary file, renames it over the target (atomically where the file
     * system can) and forces the directory.
     *
     * @return the file's size in bytes
     * @throws IllegalStateException if already published or closed
     */
    public long publish() throws IOException {
      if (done) {
        throw new IllegalStateException("already published or abandoned: " + target);
      }
      out.flush();
      channel.force(true);
      long size = channel.size();
      channel.close();
      try {
        Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(temporary, target, StandardCopyOption.REPLACE_EXISTING);
      }
      done = true;
      forceDirectory(target.getParent());
      return size;
    }

    /** Abandons an unpublished file: closes and deletes the temporary file. A no-op after a publish. */
    @Override
    public void close() throws IOException {
      if (done) {
        return;
      }
      done = true;
      try {
        channel.close();
      } finally {
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
      Path candidate = directory.resolve(
          "." + name + "." + Long.toUnsignedString(ThreadLocalRandom.current().nextLong(), 36) + ".tmp");
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
}
