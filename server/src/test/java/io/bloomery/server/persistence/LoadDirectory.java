package io.bloomery.server.persistence;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

/** What file-load tests look at: the files in a data directory's {@code loads/}, and state they poll for. */
public final class LoadDirectory {
  private LoadDirectory() {}

  /** The names of the files in {@code dataDir}/loads, sorted (none if it does not exist). */
  public static List<String> files(Path dataDir) {
    Path loads = dataDir.resolve("loads");
    if (!Files.isDirectory(loads)) {
      return List.of();
    }
    try (Stream<Path> files = Files.list(loads)) {
      return files.map(p -> p.getFileName().toString()).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Waits (at most 60 s, polling) for {@code condition}; the assertion is on the state, never on the time. */
  public static void await(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(condition.getAsBoolean()).isTrue();
  }
}
