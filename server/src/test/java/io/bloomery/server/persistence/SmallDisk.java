package io.bloomery.server.persistence;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;

/**
 * A small tmpfs mounted for one test, so that its disk can really fill up: {@link #fill()} writes a file until the
 * kernel answers ENOSPC, {@link #free()} deletes it. Mounting needs root (or CAP_SYS_ADMIN); where it is not allowed
 * the test is skipped with the reason. {@link #close()} always unmounts.
 */
final class SmallDisk implements AutoCloseable {
  private final Path mountPoint;
  private final Path filler;

  private SmallDisk(Path mountPoint) {
    this.mountPoint = mountPoint;
    this.filler = mountPoint.resolve("filler");
  }

  /** Mounts a tmpfs of {@code size} (as {@code mount -o size=}, e.g. {@code 8m}) on the empty directory {@code at}. */
  static SmallDisk mount(Path at, String size) throws Exception {
    Files.createDirectories(at);
    String[] command = {"mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", at.toString()};
    String output;
    int status;
    try {
      Process mount = new ProcessBuilder(command).redirectErrorStream(true).start();
      output = new String(mount.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      status = mount.waitFor(30, TimeUnit.SECONDS) ? mount.exitValue() : -1;
    } catch (IOException e) {
      output = e.getMessage();
      status = -1;
    }
    assumeTrue(status == 0, "a full disk needs a small tmpfs, and `" + String.join(" ", command)
        + "` is not allowed here (it needs root or CAP_SYS_ADMIN): " + output);
    return new SmallDisk(at);
  }

  Path root() {
    return mountPoint;
  }

  /** Appends to the filler file until the disk is full (the kernel answers ENOSPC). */
  void fill() throws IOException {
    byte[] chunk = new byte[64 << 10];
    try (OutputStream out = Files.newOutputStream(filler, StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
      while (true) {
        out.write(chunk);
      }
    } catch (IOException e) {
      if (e.getMessage() == null || !e.getMessage().contains("No space left on device")) {
        throw e;
      }
    }
  }

  /** Deletes the filler file. */
  void free() throws IOException {
    Files.deleteIfExists(filler);
  }

  /** Unmounts (lazily if something still holds a file there, so the mount never outlives the test). */
  @Override
  public void close() throws Exception {
    Process umount = new ProcessBuilder("umount", mountPoint.toString()).redirectErrorStream(true).start();
    umount.getInputStream().readAllBytes();
    if (!umount.waitFor(30, TimeUnit.SECONDS) || umount.exitValue() != 0) {
      new ProcessBuilder("umount", "-l", mountPoint.toString()).inheritIO().start().waitFor(30, TimeUnit.SECONDS);
    }
  }
}
