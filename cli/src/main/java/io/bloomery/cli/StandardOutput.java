package io.bloomery.cli;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.FilterWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;

/**
 * The commands' standard output: a {@link PrintWriter} that, unlike {@code System.out}, remembers why
 * a write failed, so that no command reports success after its output was lost.
 *
 * <p>{@code PrintWriter} and {@code PrintStream} swallow write errors and only set a flag; a command
 * that never asks exits 0 after writing into a full disk, {@code /dev/full} or a closed pipe. Every
 * command is checked once at the end ({@link #failure()} after a flush, in {@link CliErrors}); commands
 * that stream many lines ({@code query}) also call {@link #requireWritable(PrintWriter)} per line, so a
 * reader that goes away ({@code | head -1}) stops them within one buffer instead of after the input.
 *
 * <p>A broken pipe is not an error of ours: like the standard Unix tools, which the kernel ends with
 * SIGPIPE, the command stops quietly (nothing on stderr) with exit status {@value
 * BloomeryCommand#EXIT_BROKEN_PIPE}, the status a shell reports for such a tool. Any other failure
 * (disk full, I/O error) is one line on stderr and exit 1.
 */
final class StandardOutput extends PrintWriter {
  private final Recorder recorder;

  private StandardOutput(Recorder recorder) {
    super(recorder, true); // flushed per line, as picocli's default System.out writer was: answers appear as they are made
    this.recorder = recorder;
  }

  /** Standard output of the process, unbuffered by {@code System.out}: UTF-8 over file descriptor 1. */
  static StandardOutput ofProcess() {
    return over(new OutputStreamWriter(new FileOutputStream(FileDescriptor.out), StandardCharsets.UTF_8));
  }

  /** A checked writer over {@code target} (tests give one that fails like a full disk or a closed pipe). */
  static StandardOutput over(Writer target) {
    return new StandardOutput(new Recorder(target));
  }

  /** The first write failure seen so far, without flushing; {@code null} while every write succeeded. */
  IOException failure() {
    return recorder.failure;
  }

  /**
   * Throws the failure that stops the command if an earlier write to {@code out} failed; a no-op for
   * writers that are not a {@code StandardOutput} (their errors are found by the final check).
   */
  static void requireWritable(PrintWriter out) {
    if (out instanceof StandardOutput checked && checked.recorder.failure != null) {
      throw failed(checked.recorder.failure);
    }
  }

  /**
   * Flushes {@code out} and throws if anything written to it was lost: the end-of-command check.
   */
  static void requireWritten(PrintWriter out) {
    out.flush();
    if (out instanceof StandardOutput checked && checked.recorder.failure != null) {
      throw failed(checked.recorder.failure);
    }
    if (out.checkError()) {
      throw CliException.failure("cannot write standard output: a write failed");
    }
  }

  /** What a failed write of standard output means for the command. */
  static CliException failed(IOException cause) {
    if (isBrokenPipe(cause)) {
      return CliException.brokenPipe(cause);
    }
    String reason = cause.getMessage() == null ? "input/output error" : cause.getMessage();
    return CliException.failure("cannot write standard output: " + reason, cause);
  }

  /**
   * Whether {@code e} is EPIPE: the reader closed the pipe. The JVM ignores SIGPIPE, so the write
   * fails with the C library's text for EPIPE, which is the only thing that tells it apart.
   */
  static boolean isBrokenPipe(IOException e) {
    String message = e.getMessage();
    return message != null && message.contains("Broken pipe");
  }

  /** Passes everything through and keeps the first {@link IOException}. */
  private static final class Recorder extends FilterWriter {
    IOException failure;

    Recorder(Writer out) {
      super(out);
    }

    @Override
    public void write(int c) throws IOException {
      requireNoFailure();
      try {
        out.write(c);
      } catch (IOException e) {
        throw record(e);
      }
    }

    @Override
    public void write(char[] buffer, int offset, int length) throws IOException {
      requireNoFailure();
      try {
        out.write(buffer, offset, length);
      } catch (IOException e) {
        throw record(e);
      }
    }

    @Override
    public void write(String text, int offset, int length) throws IOException {
      requireNoFailure();
      try {
        out.write(text, offset, length);
      } catch (IOException e) {
        throw record(e);
      }
    }

    @Override
    public void flush() throws IOException {
      requireNoFailure();
      try {
        out.flush();
      } catch (IOException e) {
        throw record(e);
      }
    }

    /** After one failure nothing more is attempted: a half-written stream stays as it was. */
    private void requireNoFailure() throws IOException {
      if (failure != null) {
        throw failure;
      }
    }

    private IOException record(IOException e) {
      if (failure == null) {
        failure = e;
      }
      return e;
    }
  }
}
