package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.format.FilterFormat;
import io.bloomery.sketch.CountMinSketch;
import io.bloomery.sketch.TDigest;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code bloomery info} names the kind of a sketch file (every kind the format holds), not "unknown". */
class SketchFileInfoTest {
  @TempDir Path dir;

  @Test
  void infoNamesTheKindOfATDigestAndACountMinFile() throws Exception {
    TDigest digest = TDigest.create(50);
    for (int i = 0; i < 100; i++) {
      digest.add(i);
    }
    Path tdigest = dir.resolve("latency.bloom");
    Files.write(tdigest, FilterFormat.toBytes(digest));
    Path cms = dir.resolve("counts.bloom");
    Files.write(cms, FilterFormat.toBytes(CountMinSketch.initByDimensions(16, 2)));

    Cli.Result json = Cli.run("info", tdigest.toString(), "--json");
    assertThat(json.exitCode()).as(json.toString()).isZero();
    assertThat(json.out()).contains("\"kind\": \"t-digest\"");
    Cli.Result text = Cli.run("info", tdigest.toString());
    assertThat(text.out()).as(text.toString()).contains("a t-digest filter");
    assertThat(Cli.run("info", cms.toString(), "--json").out()).contains("\"kind\": \"count-min\"");
  }
}
