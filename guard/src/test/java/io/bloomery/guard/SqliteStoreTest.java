package io.bloomery.guard;

import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

class SqliteStoreTest extends ExactStoreContract {
  @TempDir Path directory;
  private Path file;
  private int databases;

  @Override
  protected ExactStore createEmptyStore() {
    file = directory.resolve("seen-" + (++databases) + ".db");
    return SqliteStore.open(file);
  }

  @Override
  protected ExactStore sameDataStore() {
    return SqliteStore.open(file);
  }
}
