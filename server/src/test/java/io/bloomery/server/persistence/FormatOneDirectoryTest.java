package io.bloomery.server.persistence;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A data directory written in persistence format 1 (journal segment and snapshot version 1, by commit 2fba2d6;
 * see the resource's README) still loads, and the server continues it in the current format.
 */
class FormatOneDirectoryTest {
  @TempDir Path dir;

  private static final String[] FILES = {"MANIFEST", "journal.0000000002.log", "snapshot.0000000002.snap"};

  /** The commands the resource's README lists, applied to a fresh keyspace. */
  private static Map<String, String> model() {
    TestKeyspace model = new TestKeyspace();
    for (int i = 0; i < 40; i++) {
      model.apply("BF.ADD", "urls", "u" + i);
      model.apply("CMS.INCRBY", "hits", "k" + (i % 7), "2");
      if (i == 24) {
        model.apply("BF.ADD", "gone", "x");
        model.apply("DEL", "gone");
      }
    }
    return model.dump();
  }

  @Test
  void aFormatOneDirectoryLoadsAndContinuesInTheCurrentFormat() throws IOException {
    for (String name : FILES) {
      try (InputStream in = getClass().getResourceAsStream("/persistence/format-1-directory/" + name)) {
        Files.write(dir.resolve(name), in.readAllBytes());
      }
    }
    assertThat(LogCheck.check(dir).startable()).isTrue();
    TestKeyspace keyspace = new TestKeyspace();
    Durability durability = Durability.open(dir, true, FsyncPolicy.ALWAYS, keyspace, keyspace, keyspace);
    keyspace.journalTo(durability.journal());
    assertThat(keyspace.dump()).isEqualTo(model());
    keyspace.apply("BF.ADD", "urls", "after-upgrade").toCompletableFuture().join();
    Map<String, String> expected = keyspace.dump();
    durability.abandon();
    // The format-1 segment is read, never appended to: the new record went to a new segment.
    assertThat(JournalFormat.version(dir.resolve(DataDirectory.segmentName(2)))).isEqualTo(1);
    assertThat(JournalFormat.version(dir.resolve(DataDirectory.segmentName(3)))).isEqualTo(JournalFormat.VERSION);
    TestKeyspace reopened = new TestKeyspace();
    try (Durability again = Durability.open(dir, true, FsyncPolicy.ALWAYS, reopened, reopened, reopened)) {
      assertThat(reopened.dump()).isEqualTo(expected);
    }
  }
}
