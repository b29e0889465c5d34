package io.bloomery.server.persistence;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * Random command sequences with snapshots in between, a crash, then a random torn tail (part of a record
 * whose write the crash cut short, a cut inside a fresh segment's header, or garbage after the last record):
 * recovery must equal a model that applied every acknowledged command. Or one flipped byte in a random
 * record of the newest segment: check-log --fix names exactly that record, and recovery equals the model
 * without that one command. jqwik reports the seed of a failing try.
 */
class RecoveryPropertyTest {

  /** One step of a script: a command, or {@code SAVE} (a checkpoint). */
  record Step(String... words) {
    boolean isSave() {
      return words[0].equals("SAVE");
    }

    @Override
    public String toString() {
      return String.join(" ", words);
    }
  }

  enum Tear { TORN_WRITE, GARBAGE_AFTER, FLIPPED_RECORD, NONE }

  @Provide
  Arbitrary<List<Step>> scripts() {
    Arbitrary<String> items = Arbitraries.strings().alpha().ofMinLength(0).ofMaxLength(6);
    Arbitrary<Step> bfAdd = Combinators.combine(Arbitraries.of("bf1", "bf2"), items).as((k, i) -> new Step("BF.ADD", k, i));
    Arbitrary<Step> cmsIncr = Combinators.combine(items, Arbitraries.integers().between(1, 9))
        .as((i, n) -> new Step("CMS.INCRBY", "cms", i, Integer.toString(n)));
    Arbitrary<Step> del = Arbitraries.of("bf1", "bf2", "cms").map(k -> new Step("DEL", k));
    Arbitrary<Step> save = Arbitraries.just(new Step("SAVE"));
    return Arbitraries.frequencyOf(
            net.jqwik.api.Tuple.of(6, bfAdd), net.jqwik.api.Tuple.of(4, cmsIncr),
            net.jqwik.api.Tuple.of(1, del), net.jqwik.api.Tuple.of(1, save))
        .list().ofMinSize(0).ofMaxSize(40);
  }

  @Property(tries = 60)
  void recoveryEqualsTheModelOfTheSurvivingRecords(@ForAll("scripts") List<Step> script, @ForAll Tear tear,
      @ForAll FsyncPolicy policy, @ForAll @IntRange(min = 0, max = 1_000_000) int where) throws IOException {
    Path dir = Files.createTempDirectory("bloomery-recovery-property");
    try {
      TestKeyspace keyspace = new TestKeyspace();
      Durability durability = Durability.open(dir, true, policy, keyspace, keyspace, keyspace);
      keyspace.journalTo(durability.journal());
      for (Step step : script) {
        if (step.isSave()) {
          durability.control().save();
        } else {
          keyspace.apply(step.words()).toCompletableFuture().join();
        }
      }
      durability.abandon();

      Path segment = DataDirectory.segments(dir).lastEntry().getValue();
      long number = DataDirectory.segments(dir).lastKey();
      List<Long> offsets = new ArrayList<>();
      JournalFormat.scan(segment, number, 0, (offset, argv) -> offsets.add(offset));
      int lost = -1;
      switch (tear) {
        case TORN_WRITE -> {
          if (offsets.isEmpty()) {
            // Nothing after the last snapshot: tear the segment's own header instead.
            truncate(segment, where % JournalFormat.HEADER_LENGTH);
          } else {
            // The first bytes of a record that was being written when the process died, never acknowledged.
            byte[] record = JournalFormat.encode(TestKeyspace.argv("BF.ADD", "bf1", "torn"), 1_000_000);
            Files.write(segment, Arrays.copyOf(record, 1 + where % (record.length - 1)), StandardOpenOption.APPEND);
          }
        }
        case GARBAGE_AFTER -> {
          byte[] garbage = new byte[1 + where % 40];
          new java.util.Random(where).nextBytes(garbage);
          Files.write(segment, garbage, StandardOpenOption.APPEND);
        }
        case FLIPPED_RECORD -> {
          if (!offsets.isEmpty()) {
            int k = where % offsets.size();
            long end = k + 1 < offsets.size() ? offsets.get(k + 1) : Files.size(segment);
            LogCheckTest.flip(segment, offsets.get(k) + (where / 7) % (end - offsets.get(k)));
            lost = commandIndex(script, lastSaveIndex(script) + 1, k);
            long sequence = commandCount(script, lost) + 1;
            List<String> report = LogCheck.fix(dir).lines();
            assertThat(report).as("script %s", script).anyMatch(line -> line.contains("record " + sequence + " lost")
                || line.contains("records from " + sequence + " on lost") || line.contains("records up to " + sequence + " lost"));
          }
        }
        case NONE -> { }
      }

      TestKeyspace model = new TestKeyspace();
      for (int i = 0; i < script.size(); i++) {
        if (!script.get(i).isSave() && i != lost) {
          model.apply(script.get(i).words()).toCompletableFuture().join();
        }
      }
      TestKeyspace recovered = new TestKeyspace();
      try (Durability reopened = Durability.open(dir, true, policy, recovered, recovered, recovered)) {
        Map<String, String> expected = model.dump();
        assertThat(recovered.dump()).as("script %s, tear %s", script, tear).isEqualTo(expected);
      }
    } finally {
      try (Stream<Path> files = Files.walk(dir)) {
        for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      }
    }
  }

  /**
   * Found by the property (seed 73931900865975125): the only record after a snapshot, its marker flipped, ran
   * to the end of the segment with nothing before it to number from. The manifest's first sequence names it,
   * whatever the fsync policy and however many snapshots came between.
   */
  @Example
  void aDamagedOnlyRecordAfterSnapshotsIsNamed() throws IOException {
    for (FsyncPolicy policy : FsyncPolicy.values()) {
      recoveryEqualsTheModelOfTheSurvivingRecords(List.of(new Step("SAVE"), new Step("BF.ADD", "bf1", "")),
          Tear.FLIPPED_RECORD, policy, 0);
      recoveryEqualsTheModelOfTheSurvivingRecords(List.of(new Step("BF.ADD", "bf1", "a"), new Step("SAVE"),
          new Step("CMS.INCRBY", "cms", "x", "2"), new Step("SAVE"), new Step("SAVE"), new Step("BF.ADD", "bf2", "b")),
          Tear.FLIPPED_RECORD, policy, 0);
    }
  }

  private static int lastSaveIndex(List<Step> script) {
    for (int i = script.size() - 1; i >= 0; i--) {
      if (script.get(i).isSave()) {
        return i;
      }
    }
    return -1;
  }

  /** The index in {@code script} of the {@code n}th command (0-based) from {@code from} on. */
  private static int commandIndex(List<Step> script, int from, int n) {
    int seen = 0;
    for (int i = from; i < script.size(); i++) {
      if (!script.get(i).isSave() && seen++ == n) {
        return i;
      }
    }
    throw new IllegalStateException("the segment holds more records than the script has commands");
  }

  /** How many commands come before index {@code before}: the journal numbers one record per command. */
  private static long commandCount(List<Step> script, int before) {
    return script.subList(0, before).stream().filter(step -> !step.isSave()).count();
  }

  private static void truncate(Path file, long length) throws IOException {
    try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
      raf.setLength(length);
    }
  }
}
