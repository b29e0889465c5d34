package io.bloomery.server.persistence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ManifestTest {
  @TempDir Path dir;

  @Test
  void roundTripsAndNamesNoSnapshotAsNone() throws IOException {
    new Manifest(DataDirectory.snapshotName(12), 12, 1043).write(dir);
    assertThat(Manifest.read(dir)).isEqualTo(new Manifest("snapshot.0000000012.snap", 12, 1043));
    new Manifest(DataDirectory.snapshotName(12), 12, 0).write(dir);
    assertThat(Files.readString(dir.resolve("MANIFEST"))).contains("\nfirst-sequence -\n");
    assertThat(Manifest.read(dir).firstSequence()).isZero();
    Manifest.EMPTY.write(dir);
    assertThat(Files.readString(dir.resolve("MANIFEST")))
        .startsWith("bloomery-manifest 3\nsnapshot none\nfirst-segment 1\nfirst-sequence 1\nprevious -\ncrc32c ");
    assertThat(Manifest.read(dir)).isEqualTo(Manifest.EMPTY);
    assertThat(Manifest.read(dir.resolve("nowhere"))).isNull();
  }

  @Test
  void keepsThePreviousStateAndStillReadsVersionsOneAndTwo() throws IOException {
    Manifest first = Manifest.EMPTY.successor(DataDirectory.snapshotName(4), 4, 31);
    Manifest second = first.successor(DataDirectory.snapshotName(9), 9, 77);
    assertThat(first.previous()).isEqualTo(new Manifest(null, 1, 1));
    assertThat(second.previous()).isEqualTo(new Manifest("snapshot.0000000004.snap", 4, 31));
    assertThat(second.firstKeptSegment()).isEqualTo(4);
    second.write(dir);
    assertThat(Files.readString(dir.resolve("MANIFEST"))).contains("\nfirst-sequence 77\nprevious snapshot.0000000004.snap 4 31\n");
    assertThat(Manifest.read(dir)).isEqualTo(second);
    // Version 2, as the builds before first-sequence wrote it: the sequences are unknown.
    String body = "bloomery-manifest 2\nsnapshot snapshot.0000000009.snap\nfirst-segment 9\nprevious snapshot.0000000004.snap 4\n";
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    crc.update(body.getBytes(StandardCharsets.UTF_8));
    Files.writeString(dir.resolve("MANIFEST"), body + String.format("crc32c %08X%n", crc.getValue()));
    assertThat(Manifest.read(dir)).isEqualTo(new Manifest("snapshot.0000000009.snap", 9, 0,
        new Manifest("snapshot.0000000004.snap", 4, 0)));
    try (var in = getClass().getResourceAsStream("/persistence/format-1-directory/MANIFEST")) {
      Files.write(dir.resolve("MANIFEST"), in.readAllBytes());
    }
    assertThat(Manifest.read(dir)).isEqualTo(new Manifest("snapshot.0000000002.snap", 2, 0));
  }

  @Test
  void hostileManifestsAreRefusedWithTheFileNamed() throws IOException {
    String good = new Manifest(DataDirectory.snapshotName(12), 12, 500).text();
    String withPrevious = Manifest.EMPTY.successor(DataDirectory.snapshotName(12), 12, 500).text();
    List<String> hostile = List.of("", "\n", good.replace("12\n", "13\n"), good.replace("bloomery-manifest 3", "bloomery-manifest 4"),
        good.replace("bloomery-manifest 3", "bloomery-manifest 2"),
        good.replace("previous -", "previous none 13 1"), good.replace("previous -", "previous ../x 1 1"),
        good.replace("previous -\n", ""), good.replace("first-sequence 500\n", ""),
        good.replace("first-sequence 500", "first-sequence 0"), good.replace("first-sequence 500", "first-sequence -5"),
        good.replace("first-sequence 500", "first-sequence 9999999999999999999"),
        withPrevious.replace("previous none 1 1", "previous none 1"), withPrevious.replace("previous none 1 1", "previous none 1 x"),
        good.replace("snapshot.0000000012.snap", "../../etc/passwd"), good.replace("first-segment 12", "first-segment -1"),
        good.replace("first-segment 12", "first-segment 99999999999999999999"), good.substring(0, good.length() - 1),
        good + "extra\n", good.replace("crc32c", "crc32"), "x".repeat(5000));
    Path file = dir.resolve("MANIFEST");
    for (String text : hostile) {
      Files.write(file, text.getBytes(StandardCharsets.UTF_8));
      assertThatThrownBy(() -> Manifest.read(dir)).as(text).isInstanceOf(PersistenceCorruptionException.class)
          .hasMessageStartingWith(file.toString());
    }
  }
}
