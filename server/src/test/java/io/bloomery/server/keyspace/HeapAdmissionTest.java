package io.bloomery.server.keyspace;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The heap rule: what the server holds, plus the value, plus its largest array, within the maximum heap. */
class HeapAdmissionTest {
  private static final long MB = 1L << 20;

  @Test
  void admitsAValueAndItsLargestArrayBesideWhatTheServerHolds() {
    assertThat(HeapAdmission.admits(256 * MB, 0, 128 * MB, 128 * MB)).isTrue();
    assertThat(HeapAdmission.admits(256 * MB, 100 * MB, 78 * MB, 78 * MB)).isTrue();
    assertThat(HeapAdmission.admits(256 * MB, 100 * MB, 79 * MB, 78 * MB)).isFalse();
    assertThat(HeapAdmission.admits(256 * MB, 100 * MB, 120 * MB, 36 * MB)).isTrue();
    assertThat(HeapAdmission.admits(256 * MB, 100 * MB, 120 * MB, 37 * MB)).isFalse();
  }

  @Test
  void refusesWhatCouldNeverFitAndNonsense() {
    assertThat(HeapAdmission.admits(256 * MB, 0, 129 * MB, 129 * MB)).isFalse();
    assertThat(HeapAdmission.admits(256 * MB, 300 * MB, 0, 0)).isFalse();
    assertThat(HeapAdmission.admits(256 * MB, 0, -1, 0)).isFalse();
    assertThat(HeapAdmission.admits(256 * MB, -1, 1, 1)).isFalse();
    assertThat(HeapAdmission.admits(Long.MAX_VALUE, Long.MAX_VALUE - 10, Long.MAX_VALUE - 10, 5)).isFalse();
    assertThat(HeapAdmission.admits(Long.MAX_VALUE, 1, Long.MAX_VALUE - 1, Long.MAX_VALUE - 1)).isFalse();
  }

  @Test
  void theJvmsMaximumHeapBoundsTheDefault() {
    long max = Runtime.getRuntime().maxMemory();
    assertThat(HeapAdmission.admits(0, max / 2, max / 2)).isTrue();
    assertThat(HeapAdmission.admits(0, max / 2 + 1, max / 2)).isFalse();
  }
}
