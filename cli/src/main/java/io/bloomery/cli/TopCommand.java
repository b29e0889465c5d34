package io.bloomery.cli;

import io.bloomery.sizing.CapacityUse;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/** {@code bloomery top}: a running server's keys and commands per second, refreshed in place. */
@Command(
    name = "top",
    mixinStandardHelpOptions = true,
    header = "Watch a running server's keys and commands per second, refreshed in place.",
    description = {
      "Reads the server over plain RESP (INFO, SCAN, TYPE and each kind's *.INFO) every",
      "--interval seconds. On a terminal the view is redrawn in place, with the busiest",
      "commands' ops/s from INFO commandstats below the keys; q or Ctrl-C quits.",
      "When standard output is not a terminal it prints one line per round instead",
      "(time, keys, clients, ops/s, keys near capacity), like redis-cli --stat.",
      "Commands per second leave out top's own commands. The password comes from",
      "--password or the environment variable REDISCLI_AUTH."
    })
final class TopCommand implements Callable<Integer> {
  private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss");
  private static final String CSI = "\u001b[";

  @ParentCommand BloomeryCommand root;

  @Mixin ServerOptions server;

  @Option(names = {"-i", "--interval"}, defaultValue = "1", paramLabel = "SECONDS",
      description = "Seconds between rounds, 0.1 to 3600 (default: ${DEFAULT-VALUE}).")
  double interval;

  @Option(names = {"-n", "--count"}, defaultValue = "0", paramLabel = "N",
      description = "Stop after N rounds (default: run until q or Ctrl-C).")
  long count;

  TopCommand() {}

  @Override
  public Integer call() throws IOException {
    if (!(interval >= 0.1 && interval <= 3600)) {
      throw CliException.usage("--interval must be in [0.1, 3600] seconds, was " + interval);
    }
    server.validate();
    if (count < 0) {
      throw CliException.usage("--count must be >= 0, was " + count);
    }
    PrintWriter out = root.out();
    boolean live = root.terminal();
    // RESP2 (no HELLO): *.INFO replies are flat field/value arrays
    try (RespClient client = server.connect(5000, 5000);
        Screen screen = live ? Screen.open(out, root.stdin()) : null) {
      ServerWatch watch = new ServerWatch(client);
      ServerWatch.Round previous = null;
      for (long round = 1; count == 0 || round <= count; round++) {
        ServerWatch.Round now = watch.read();
        if (!live && round == 1) {
          out.println(HEADER); // only once the server answered: a failed connection prints its error alone
        }
        if (live) {
          screen.draw(view(now, previous));
        } else {
          out.println(line(now, previous));
          StandardOutput.requireWritable(out);
        }
        out.flush();
        previous = now;
        if (count != 0 && round == count) {
          break;
        }
        if (live ? screen.awaitQuit(Math.round(interval * 1000)) : sleep(Math.round(interval * 1000))) {
          break;
        }
      }
    } catch (RespClient.Failure e) {
      throw CliException.failure("cannot read the server at " + server + ": " + oneLine(e), e);
    }
    return BloomeryCommand.EXIT_OK;
  }

  /** The plain form's header line. */
  static final String HEADER = "time      keys  clients     ops/s  near-capacity";

  private static String oneLine(Throwable e) {
    return String.valueOf(e.getMessage()).replace('\n', ' ');
  }

  private static boolean sleep(long millis) {
    try {
      Thread.sleep(millis);
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return true;
    }
  }

  /** Commands per second between two rounds, without the watcher's own; NaN for the first round. */
  static double opsPerSecond(ServerWatch.Round now, ServerWatch.Round previous) {
    if (previous == null || now.commandsProcessed() < 0 || previous.commandsProcessed() < 0) {
      return Double.NaN;
    }
    double seconds = Math.max(1e-3, (now.atNanos() - previous.atNanos()) / 1e9);
    long others = now.commandsProcessed() - previous.commandsProcessed() - previous.ownCommands();
    return Math.max(0, others) / seconds;
  }

  /** The plain form: one line per round. */
  static String line(ServerWatch.Round now, ServerWatch.Round previous) {
    long near = now.keys().stream().map(TopCommand::use).filter(u -> u != null && u != CapacityUse.WITHIN).count();
    double ops = opsPerSecond(now, previous);
    return String.format(Locale.ROOT, "%-8s %5d %8d %9s  %d", LocalTime.now().format(CLOCK), now.keyCount(),
        now.clients(), rate(ops), near);
  }

  /** The terminal form: a header and one row per key. */
  static List<String> view(ServerWatch.Round now, ServerWatch.Round previous) {
    Map<String, Long> before = new HashMap<>();
    if (previous != null) {
      previous.keys().forEach(k -> before.put(k.key(), k.items()));
    }
    double seconds = previous == null ? Double.NaN : Math.max(1e-3, (now.atNanos() - previous.atNanos()) / 1e9);
    double ops = opsPerSecond(now, previous);
    List<String> lines = new java.util.ArrayList<>();
    lines.add(String.format(Locale.ROOT, "bloomery top   %s   keys %d   clients %d   ops/s %s   (q quits)",
        LocalTime.now().format(CLOCK), now.keyCount(), now.clients(),
        rate(ops)));
    lines.add("");
    lines.add(String.format(Locale.ROOT, "%-24s %-9s %14s %14s %8s %10s %12s", "KEY", "KIND", "ITEMS", "CAPACITY",
        "USED", "ITEMS/S", "BYTES"));
    for (ServerWatch.KeyRow key : now.keys()) {
      Long earlier = before.get(key.key());
      String rate = earlier == null || key.items() < 0 ? "-" : rate(Math.max(0, key.items() - earlier) / seconds);
      CapacityUse use = use(key);
      String usedText = use == null ? "-"
          : CapacityUse.percent(key.items(), key.capacity()) + (use == CapacityUse.WITHIN ? "" : "!");
      lines.add(String.format(Locale.ROOT, "%-24s %-9s %14s %14s %8s %10s %12s", clip(key.key(), 24), key.kind(),
          key.items() < 0 ? "-" : Units.grouped(key.items()), key.capacity() < 0 ? "-" : Units.grouped(key.capacity()),
          usedText, rate, key.bytes() < 0 ? "-" : Units.grouped(key.bytes())));
    }
    if (now.keyCount() > now.keys().size()) {
      lines.add(String.format(Locale.ROOT, "... and %d more keys (top reads %d)", now.keyCount() - now.keys().size(),
          ServerWatch.MAX_KEYS));
    }
    lines.add("");
    List<Map.Entry<String, Double>> busiest = commandRates(now, previous);
    if (!busiest.isEmpty()) {
      lines.add(String.format(Locale.ROOT, "%-24s %10s", "COMMAND", "OPS/S"));
      for (Map.Entry<String, Double> command : busiest) {
        lines.add(String.format(Locale.ROOT, "%-24s %10s", clip(command.getKey(), 24), rate(command.getValue())));
      }
      lines.add("");
    }
    lines.add("'!' marks keys at 80% of capacity or more.");
    return lines;
  }

  /** A rate per second with one decimal and thousands separators, "-" when unknown (NaN). */
  static String rate(double perSecond) {
    return Double.isNaN(perSecond) ? "-" : String.format(Locale.ROOT, "%,.1f", perSecond);
  }

  /** The key's use of its capacity, null where its kind has none. */
  private static CapacityUse use(ServerWatch.KeyRow key) {
    return key.capacity() > 0 && key.items() >= 0 ? CapacityUse.of(key.items(), key.capacity()) : null;
  }

  /** Commands shown per round at most, the busiest first. */
  static final int MAX_COMMANDS = 8;

  /**
   * Each command's calls per second between two rounds from {@code INFO commandstats}, without top's own calls:
   * those above zero, the busiest first (ties by name), at most {@link #MAX_COMMANDS}; empty for the first round.
   */
  static List<Map.Entry<String, Double>> commandRates(ServerWatch.Round now, ServerWatch.Round previous) {
    if (previous == null) {
      return List.of();
    }
    double seconds = Math.max(1e-3, (now.atNanos() - previous.atNanos()) / 1e9);
    List<Map.Entry<String, Double>> rates = new java.util.ArrayList<>();
    now.calls().forEach((command, calls) -> {
      long delta = calls - previous.calls().getOrDefault(command, 0L) - previous.ownCalls().getOrDefault(command, 0L);
      if (delta > 0) {
        rates.add(Map.entry(command, delta / seconds));
      }
    });
    rates.sort(Map.Entry.<String, Double>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()));
    return rates.subList(0, Math.min(MAX_COMMANDS, rates.size()));
  }

  /** A key as one printable cell: control characters shown as '?', long names cut with '~'. */
  static String clip(String key, int width) {
    StringBuilder clean = new StringBuilder();
    key.codePoints().forEach(c -> clean.appendCodePoint(Character.isISOControl(c) ? '?' : c));
    return clean.length() <= width ? clean.toString() : clean.substring(0, width - 1) + "~";
  }

  /**
   * The terminal while top runs: the alternate screen, no cursor, and the keyboard unbuffered (stty on /dev/tty) so
   * that a single q quits; all restored on close and, for Ctrl-C, by a shutdown hook.
   */
  static final class Screen implements AutoCloseable {
    private final PrintWriter out;
    private final String savedStty;
    private final CountDownLatch quit = new CountDownLatch(1);
    private final Thread restoreOnExit;
    private boolean closed;

    private Screen(PrintWriter out, String savedStty) {
      this.out = out;
      this.savedStty = savedStty;
      this.restoreOnExit = new Thread(this::restore, "bloomery-top-restore");
    }

    static Screen open(PrintWriter out, InputStream keyboard) {
      Screen screen = new Screen(out, stty("-g"));
      Runtime.getRuntime().addShutdownHook(screen.restoreOnExit);
      if (screen.savedStty != null) {
        stty("-icanon", "-echo", "min", "1");
      }
      out.print(CSI + "?1049h" + CSI + "?25l");
      out.flush();
      Thread reader = new Thread(() -> {
        try {
          int c;
          while ((c = keyboard.read()) >= 0) {
            if (c == 'q' || c == 'Q' || c == 3) {
              break;
            }
          }
        } catch (IOException e) {
          // no keyboard: Ctrl-C still ends top
        }
        screen.quit.countDown();
      }, "bloomery-top-keys");
      reader.setDaemon(true);
      reader.start();
      return screen;
    }

    void draw(List<String> lines) {
      StringBuilder frame = new StringBuilder(CSI + "H");
      for (String line : lines) {
        frame.append(line).append(CSI).append("K\r\n");
      }
      frame.append(CSI).append('J');
      out.print(frame);
      out.flush();
    }

    /** Waits up to {@code millis}; true if q was pressed (or the keyboard closed). */
    boolean awaitQuit(long millis) {
      try {
        return quit.await(millis, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return true;
      }
    }

    private synchronized void restore() {
      if (closed) {
        return;
      }
      closed = true;
      out.print(CSI + "?25h" + CSI + "?1049l");
      out.flush();
      if (savedStty != null) {
        stty(savedStty);
      }
    }

    @Override
    public void close() {
      restore();
      try {
        Runtime.getRuntime().removeShutdownHook(restoreOnExit);
      } catch (IllegalStateException e) {
        // already shutting down: the hook runs restore, which is a no-op now
      }
    }

    /** Runs stty on the controlling terminal; its output, or null if there is none or it failed. */
    private static String stty(String... args) {
      try {
        java.util.List<String> command = new java.util.ArrayList<>(List.of("stty"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/tty")))
            .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String output = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).trim();
        return p.waitFor() == 0 ? output : null;
      } catch (IOException e) {
        return null;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return null;
      }
    }
  }
}
