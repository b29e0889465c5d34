package io.bloomery.server.persistence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.cuckoo.CuckooFilter;
import io.bloomery.scalable.ScalableBloomFilter;
import io.bloomery.server.keyspace.Key;
import io.bloomery.server.keyspace.Keyspace;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SnapshotFilesTest {
  @TempDir
  Path dir;

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void aKeyspaceWrittenIsReadBackWithItsValuesAndExpiries() throws Exception {
    Keyspace source = new Keyspace(System::currentTimeMillis);
    ScalableBloomFilter bloom = ScalableBloomFilter.create(100, 0.01);
    bloom.add(bytes("seen"));
    CuckooFilter cuckoo = CuckooFilter.create(1000);
    cuckoo.add(bytes("twice"));
    cuckoo.add(bytes("twice"));
    source.restore(bytes("urls"), bloom, -1);
    source.restore(bytes("counts"), cuckoo, 4_102_444_800_000L);
    Path file = dir.resolve("snapshot.1_42");

    assertThat(SnapshotFiles.write(source, file, () -> 1234L)).isEqualTo(2);

    Keyspace target = new Keyspace(System::currentTimeMillis);
    assertThat(SnapshotFiles.read(file, target::restore)).isEqualTo(2);
    assertThat(((ScalableBloomFilter) target.read(Key.of(bytes("urls")))).mightContain(bytes("seen"))).isTrue();
    assertThat(((CuckooFilter) target.read(Key.of(bytes("counts")))).count(bytes("twice"))).isEqualTo(2);
    assertThat(target.expireAt(Key.of(bytes("counts")))).isEqualTo(4_102_444_800_000L);
    assertThat(target.expireAt(Key.of(bytes("urls")))).isEqualTo(-1);
  }

  @Test
  void aDamagedFileIsRefusedNamingWhere() throws Exception {
    Keyspace source = new Keyspace(System::currentTimeMillis);
    ScalableBloomFilter bloom = ScalableBloomFilter.create(100, 0.01);
    bloom.add(bytes("seen"));
    source.restore(bytes("urls"), bloom, -1);
    Path file = dir.resolve("snapshot.1_7");
    SnapshotFiles.write(source, file, System::currentTimeMillis);
    byte[] content = Files.readAllBytes(file);
    content[content.length / 2] ^= 0x10;
    Files.write(file, content, StandardOpenOption.TRUNCATE_EXISTING);

    assertThatThrownBy(() -> SnapshotFiles.read(file, new Keyspace(System::currentTimeMillis)::restore))
        .isInstanceOf(PersistenceCorruptionException.class).hasMessageContaining(file.getFileName().toString());
  }
}
