package io.bloomery.cli;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/**
 * An output whose every failed write is reported, never swallowed ({@code System.out} is a {@code
 * PrintStream}, which turns ENOSPC, EPIPE and EBADF into a silently set error flag), and whose
 * {@link #deliver()} says when the bytes have left the process: written (a pipe, a terminal, a
 * device) and, for a regular file, also fsynced.
 *
 * <p>Written bytes collect in memory until {@link #deliver()}; a failed delivery cuts a regular
 * file back to its length at the previous delivery, so it never ends in half a batch or half a line.
 * Standard output is the process's file descriptor 1, written directly.
 */
final class CheckedOutput implements AutoCloseable {
  private final String name;
  private final FileChannel channel;
  private final boolean regularFile;
  private final boolean closeChannel;
  private byte[] buffer = new byte[1 << 16];
  private int buffered;
  private long deliveredLength;

  private CheckedOutput(String name, FileChannel channel, boolean regularFile, boolean closeChannel)
      throws IOException {
    this.name = name;
    this.channel = channel;
    this.regularFile = regularFile;
    this.closeChannel = closeChannel;
    // The size, not the position: stdout opened for appending (>> file) starts at position 0.
    this.deliveredLength = regularFile ? channel.size() : 0;
  }

  /**
   * The process's standard output (file descriptor 1), after checking that it is open: with
   * stdout closed ({@code >&-}) the descriptor is reused by the first file the JVM opens, which
   * must not receive the items.
   *
   * @throws CliException if standard output is closed
   */
  static CheckedOutput standardOutput() throws IOException {
    StandardStreams.requireOpenForWriting(1, "standard output");
    FileChannel channel = new FileOutputStream(FileDescriptor.out).getChannel();
    return new CheckedOutput("standard output", channel,
        Files.isRegularFile(Path.of("/proc/self/fd/1")) || Files.isRegularFile(Path.of("/dev/stdout")),
        false);
  }

  /** {@code file}, created or truncated. */
  static CheckedOutput file(Path file) throws IOException {
    FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE,
        StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE);
    return new CheckedOutput(file.toString(), channel, Files.isRegularFile(file), true);
  }

  /** Where the output goes, for messages. */
  String name() {
    return name;
  }

  /** Whether {@link #deliver()} fsyncs (the output is a regular file). */
  boolean isRegularFile() {
    return regularFile;
  }

  /** Appends bytes to the current, undelivered batch. */
  void write(byte[] bytes) {
    write(bytes, 0, bytes.length);
  }

  void write(byte[] bytes, int offset, int length) {
    if (buffered + length > buffer.length) {
      buffer = Arrays.copyOf(buffer, Math.max(buffer.length * 2, buffered + length));
    }
    System.arraycopy(bytes, offset, buffer, buffered, length);
    buffered += length;
  }

  void write(int b) {
    if (buffered == buffer.length) {
      buffer = Arrays.copyOf(buffer, buffer.length * 2);
    }
    buffer[buffered++] = (byte) b;
  }

  /**
   * Writes the batch out completely and, for a regular file, fsyncs it. On failure the batch counts
   * as not delivered: a regular file is cut back to its length at the previous delivery.
   *
   * @throws Failure naming the output and the reason (e.g. "No space left on device", "Broken pipe")
   */
  void deliver() throws Failure {
    try {
      ByteBuffer bytes = ByteBuffer.wrap(buffer, 0, buffered);
      while (bytes.hasRemaining()) {
        channel.write(bytes);
      }
      if (regularFile) {
        channel.force(false);
        deliveredLength = channel.size();
      }
      buffered = 0;
    } catch (IOException e) {
      buffered = 0;
      undoPartialWrite(e);
      throw new Failure(name, e);
    }
  }

  private void undoPartialWrite(IOException cause) {
    if (!regularFile) {
      return; // a pipe or a device cannot take bytes back; the reader sees a cut last line
    }
    try {
      channel.truncate(deliveredLength);
      if (channel.position() > deliveredLength) {
        channel.position(deliveredLength); // no-op for an appending descriptor
      }
    } catch (IOException e) {
      cause.addSuppressed(e);
    }
  }

  /** Closes a file; standard output stays open. Undelivered bytes are dropped, not written. */
  @Override
  public void close() throws IOException {
    buffered = 0;
    if (closeChannel) {
      channel.close();
    }
  }

  /** A write, flush or fsync of the output failed; {@link #getMessage()} is one line for a user. */
  static final class Failure extends IOException {
    private static final long serialVersionUID = 1L;
    private final boolean brokenPipe;

    Failure(String output, IOException cause) {
      super("cannot write to " + output + ": " + reason(cause), cause);
      this.brokenPipe = isBrokenPipe(cause);
    }

    /** The reader of a pipe went away (EPIPE). */
    boolean brokenPipe() {
      return brokenPipe;
    }

    private static String reason(IOException e) {
      if (isBrokenPipe(e)) {
        return "the reader closed the pipe (broken pipe)";
      }
      return e.getMessage() == null ? "input/output error" : e.getMessage();
    }

    private static boolean isBrokenPipe(IOException e) {
      return e.getMessage() != null && e.getMessage().contains("Broken pipe");
    }
  }
}
