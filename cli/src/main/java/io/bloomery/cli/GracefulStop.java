package io.bloomery.cli;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.ClosedByInterruptException;
import java.util.ArrayList;
import java.util.List;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * SIGTERM and SIGINT as a request to stop after the current batch, instead of the JVM's default
 * (run shutdown hooks and halt wherever the work is). While installed, the first signal sets
 * {@link #requested()} and, if the working thread is blocked reading its input, wakes it (reads go
 * through {@link #input}, over an interruptible channel where the caller provides one); the worker
 * then finishes its batch and returns normally. A second signal halts at once, like the default.
 *
 * <p>Closing restores the previous handlers, so an embedding process (or a test JVM) gets its own
 * signal handling back.
 */
final class GracefulStop implements AutoCloseable {
  private static final String[] SIGNALS = {"TERM", "INT"};

  private final Thread worker;
  private final Object lock = new Object();
  private final List<Signal> installed = new ArrayList<>();
  private final List<SignalHandler> previous = new ArrayList<>();
  private volatile Signal received;
  private boolean workerReading;

  private GracefulStop(Thread worker) {
    this.worker = worker;
  }

  /** Installs the handlers for the calling thread's work. */
  static GracefulStop install() {
    GracefulStop stop = new GracefulStop(Thread.currentThread());
    for (String name : SIGNALS) {
      try {
        Signal signal = new Signal(name);
        SignalHandler old = Signal.handle(signal, stop::onSignal);
        stop.installed.add(signal);
        stop.previous.add(old);
      } catch (IllegalArgumentException e) {
        // The signal does not exist on this platform or the JVM reserves it (-Xrs): keep the default.
      }
    }
    return stop;
  }

  private void onSignal(Signal signal) {
    if (received != null) {
      Runtime.getRuntime().halt(exitCode(signal)); // second signal: stop now
    }
    synchronized (lock) {
      received = signal;
      if (workerReading) {
        worker.interrupt(); // wakes a read blocked on an interruptible channel
      }
    }
  }

  /** Whether a stop was requested. */
  boolean requested() {
    return received != null;
  }

  /** The conventional exit code after the signal: 128 + its number (143 for TERM, 130 for INT). */
  int exitCode() {
    return exitCode(received);
  }

  /** The signal's name, e.g. "SIGTERM". */
  String signalName() {
    return received == null ? "none" : "SIG" + received.getName();
  }

  private static int exitCode(Signal signal) {
    return 128 + signal.getNumber();
  }

  /**
   * {@code in}, whose reads end with {@link Stopped} once a stop is requested: before a read starts,
   * or during one that the signal interrupted. Bytes already read are still handed out, so the
   * worker finishes the items it has.
   */
  InputStream input(InputStream in) {
    return new FilterInputStream(in) {
      @Override
      public int read() throws IOException {
        byte[] one = new byte[1];
        int n = read(one, 0, 1);
        return n < 0 ? -1 : one[0] & 0xff;
      }

      @Override
      public int read(byte[] buffer, int offset, int length) throws IOException {
        synchronized (lock) {
          if (received != null) {
            throw new Stopped();
          }
          workerReading = true;
        }
        try {
          return super.read(buffer, offset, length);
        } catch (ClosedByInterruptException e) {
          throw new Stopped();
        } finally {
          synchronized (lock) {
            workerReading = false;
            Thread.interrupted(); // the interrupt was for the read only
          }
        }
      }
    };
  }

  @Override
  public void close() {
    for (int i = 0; i < installed.size(); i++) {
      Signal.handle(installed.get(i), previous.get(i));
    }
    installed.clear();
    Thread.interrupted();
  }

  /** The input stopped reading because a stop was requested. */
  static final class Stopped extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Stopped() {
      super("stop requested", null, false, false);
    }
  }
}
