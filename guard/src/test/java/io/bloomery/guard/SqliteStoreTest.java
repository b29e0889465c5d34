package io.bloomery.guard;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import org.junit.jupiter.api.io.TempDir;

class SqliteStoreTest extends LedgerStoreContract {
  @TempDir Path directory;
  private Path file;
  private int databases;

  @Override
  protected LedgerStore createEmptyStore() {
    file = directory.resolve("seen-" + (++databases) + ".db");
    return SqliteStore.open(file);
  }

  @Override
  protected LedgerStore sameDataStore() {
    return SqliteStore.open(file);
  }

  @Override
  protected void plantRow(byte[] digest, byte[] item) throws Exception {
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file);
        PreparedStatement ps = c.prepareStatement(
            "INSERT INTO bloomery_seen (digest, item) VALUES (?, ?)")) {
      ps.setBytes(1, digest);
      ps.setBytes(2, item);
      ps.executeUpdate();
    }
  }
}
