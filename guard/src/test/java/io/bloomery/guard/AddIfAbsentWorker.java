package io.bloomery.guard;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * A separate JVM process for {@link MultiProcessExactlyOnceIT}: opens its own guard on a shared
 * store, offers items 0..n-1 in its own shuffled order and writes the ones it was told were new.
 *
 * <p>Arguments: {@code STORE N SEED OUTPUT} where STORE is a JDBC URL or {@code sqlite:FILE}. Once
 * its guard is open the worker writes {@code OUTPUT.ready} and waits for {@code OUTPUT.go}, so that
 * all workers start offering items at the same moment.
 */
public final class AddIfAbsentWorker {
  private AddIfAbsentWorker() {}

  public static void main(String[] args) throws IOException, InterruptedException {
    String store = args[0];
    int n = Integer.parseInt(args[1]);
    long seed = Long.parseLong(args[2]);
    Path output = Path.of(args[3]);
    ExactStore exactStore = store.startsWith("sqlite:")
        ? SqliteStore.open(Path.of(store.substring("sqlite:".length())))
        : PostgresStore.open(store);
    List<Integer> order = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      order.add(i);
    }
    Collections.shuffle(order, new Random(seed));
    List<String> won = new ArrayList<>();
    try (Guard guard = Guard.builder(exactStore).expectedInsertions(n).open()) {
      Files.createFile(Path.of(output + ".ready"));
      Path go = Path.of(output + ".go");
      for (long deadline = System.nanoTime() + 120_000_000_000L; !Files.exists(go); ) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("no start signal " + go);
        }
        Thread.sleep(5);
      }
      for (int from = 0; from < n; from += 50) {
        List<Integer> slice = order.subList(from, Math.min(n, from + 50));
        List<byte[]> batch = new ArrayList<>();
        slice.forEach(i -> batch.add(("item-" + i).getBytes(StandardCharsets.UTF_8)));
        boolean[] inserted = guard.addIfAbsent(batch);
        for (int i = 0; i < inserted.length; i++) {
          if (inserted[i]) {
            won.add(Integer.toString(slice.get(i)));
          }
        }
      }
    }
    Files.write(output, won);
  }
}
