package io.bloomery.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.filter.BloomFilter;
import io.bloomery.filter.Summary;
import io.bloomery.testkit.ForeignSummary;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The project's one atomic-write helper: the old file or the complete new one, never a half-written file. */
class AtomicWriteTest {
  @TempDir Path dir;

  private List<String> names() throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  @Test
  void write_createsAndReplaces_andLeavesNoTemporary() throws Exception {
    Path target = dir.resolve("out.bin");
    assertThat(AtomicWrite.write(target, out -> out.write("first".getBytes(StandardCharsets.UTF_8)))).isEqualTo(5);
    AtomicWrite.write(target, "second, longer".getBytes(StandardCharsets.UTF_8));
    assertThat(Files.readString(target)).isEqualTo("second, longer");
    assertThat(names()).containsExactly("out.bin");
  }

  @Test
  void aFailureHalfwayThrough_leavesTheOldFile_andNoTemporary() throws Exception {
    Path target = dir.resolve("out.bin");
    Files.writeString(target, "old complete content");
    IOException failure = new IOException("No space left on device");
    assertThatThrownBy(() -> AtomicWrite.write(target, out -> {
      out.write(new byte[200_000]); // past the 64 KiB buffer: part of it is in the temporary file
      throw failure;
    })).isSameAs(failure);
    assertThat(Files.readString(target)).isEqualTo("old complete content");
    assertThat(names()).containsExactly("out.bin");
    assertThatThrownBy(() -> AtomicWrite.write(target, out -> {
      out.write(1);
      throw new UncheckedIOException(new IOException("from a lambda"));
    })).isInstanceOf(UncheckedIOException.class);
    assertThat(Files.readString(target)).isEqualTo("old complete content");
    assertThat(names()).containsExactly("out.bin");
  }

  @Test
  void aFailedFirstWrite_leavesNothingUnderTheName() throws Exception {
    Path target = dir.resolve("new.bin");
    assertThatThrownBy(() -> AtomicWrite.write(target, out -> {
      out.write(new byte[100_000]);
      throw new IOException("disk full");
    })).hasMessage("disk full");
    assertThat(names()).isEmpty();
  }

  @Test
  void pending_isInvisibleUntilPublished_andAnAbandonedOneDisappears() throws Exception {
    Path target = dir.resolve("snapshot");
    Files.writeString(target, "old");
    try (AtomicWrite.Pending pending = AtomicWrite.open(target)) {
      pending.out().write("new".getBytes(StandardCharsets.UTF_8));
      assertThat(Files.readString(target)).isEqualTo("old");
      assertThat(pending.temporary().getParent()).isEqualTo(dir.toAbsolutePath());
      assertThat(pending.temporary().getFileName().toString()).startsWith(".snapshot.").endsWith(".tmp");
      assertThat(pending.publish()).isEqualTo(3);
      assertThatThrownBy(pending::publish).isInstanceOf(IllegalStateException.class);
    }
    assertThat(Files.readString(target)).isEqualTo("new");
    try (AtomicWrite.Pending abandoned = AtomicWrite.open(target)) {
      abandoned.out().write(new byte[100_000]);
    }
    assertThat(Files.readString(target)).isEqualTo("new");
    assertThat(names()).containsExactly("snapshot");
  }

  @Test
  void aMissingDirectory_isAnErrorAndCreatesNothing() {
    Path target = dir.resolve("no-such-dir").resolve("f.bin");
    assertThatThrownBy(() -> AtomicWrite.write(target, new byte[1])).isInstanceOf(IOException.class);
    assertThat(Files.exists(target.getParent())).isFalse();
  }

  @Test
  void aReplacedFile_keepsItsPermissionBits() throws Exception {
    Path target = dir.resolve("f.bin");
    Files.writeString(target, "x");
    Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rw-r-----"));
    AtomicWrite.write(target, new byte[] {1, 2});
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(target))).isEqualTo("rw-r-----");
  }

  @Test
  void filterFormatWrite_goesThroughIt_andAFilterThatCannotBeSerializedTouchesNothing() throws Exception {
    Path target = dir.resolve("f.blmf");
    BloomFilter filter = BloomFilter.create(1000, 0.01);
    filter.add("a");
    FilterFormat.write(filter, target);
    assertThat(Files.readAllBytes(target)).isEqualTo(FilterFormat.toBytes(filter));
    Summary foreign = ForeignSummary.claimingClassic(); // a kind this build cannot serialize: not one of ours
    assertThatThrownBy(() -> FilterFormat.write(foreign, target)).isInstanceOf(IllegalArgumentException.class);
    assertThat(Files.readAllBytes(target)).isEqualTo(FilterFormat.toBytes(filter));
    assertThat(names()).containsExactly("f.blmf");
  }
}
