package io.bloomery.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.cuckoo.CuckooFilter;
import io.bloomery.format.RedisBloomDump;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A refusal from {@link HeapBudget} means the allocation cannot succeed, not that the heap holds garbage. The defect
 * this guards against: the old check compared a request with {@code maxMemory() - (totalMemory() - freeMemory())},
 * which counts dead objects as used, so a CF.LOADCHUNK header was refused with "Couldn't create filter!" on a heap
 * full of garbage that one collection would have freed.
 */
class HeapBudgetIT {
  private static final String HEAP = "-Xmx256m";
  /** Half the child's heap: fits once garbage is collected, never while 70 % of it counts as used. */
  private static final long REQUEST_BYTES = 128L << 20;

  @Test
  void aHeapFullOfGarbageDoesNotRefuseAFilterThatFitsAfterACollection() throws Exception {
    // A child JVM with a small heap of its own, so filling it cannot disturb the other tests of this JVM.
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process child = new ProcessBuilder(java, HEAP, "-cp", System.getProperty("java.class.path"),
        GarbageThenLoad.class.getName())
        .redirectErrorStream(true)
        .start();
    child.getOutputStream().close();
    String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(child.waitFor(2, TimeUnit.MINUTES)).isTrue();
    assertThat(output).as("child output").contains("loaded " + REQUEST_BYTES + " slots").contains("garbage counted");
    assertThat(child.exitValue()).as(output).isZero();
  }

  @Test
  void onlyWhatExceedsTheMaximumHeapIsRefusedUpFront() {
    long max = Runtime.getRuntime().maxMemory();
    assertThat(HeapBudget.couldEverFit(0)).isTrue();
    assertThat(HeapBudget.couldEverFit(max)).isTrue();
    assertThat(HeapBudget.couldEverFit(max + 1)).isFalse();
    assertThat(HeapBudget.couldEverFit(-1)).as("above 2^63 unsigned").isFalse();
    assertThat(HeapBudget.zeroedBytes(max + 1)).isNull();
  }

  /** Runs in the child: holds 70 % of the heap, drops it, and loads a CF header needing half the heap. */
  static final class GarbageThenLoad {
    public static void main(String[] args) throws IOException {
      Runtime runtime = Runtime.getRuntime();
      long max = runtime.maxMemory();
      List<byte[]> held = new ArrayList<>();
      for (long bytes = 0; bytes < max * 7 / 10; bytes += 256 << 10) {
        held.add(new byte[256 << 10]); // below G1's humongous size, so the heap fills densely
      }
      held = null; // all garbage now, but counted as used until the next collection
      long used = runtime.totalMemory() - runtime.freeMemory();
      System.out.println("garbage counted as used: " + used + " of " + max + " bytes");
      CuckooFilter filter = RedisBloomDump.loadCuckooHeader(header(REQUEST_BYTES));
      System.out.println("loaded " + filter.info().numberOfBuckets() + " slots");
    }

    /** A CF.SCANDUMP header: one sub-filter of {@code buckets} one-slot buckets. */
    private static byte[] header(long buckets) {
      return ByteBuffer.allocate(38).order(ByteOrder.LITTLE_ENDIAN)
          .putLong(0).putLong(buckets).putLong(0).putLong(1)
          .putShort((short) 1).putShort((short) 20).putShort((short) 1)
          .array();
    }
  }
}
