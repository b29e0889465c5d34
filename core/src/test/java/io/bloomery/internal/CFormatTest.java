package io.bloomery.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** C's {@code %g}, as glibc prints it (expected values printed by Python's %-formatting, which uses the C library on doubles). */
class CFormatTest {
  @ParameterizedTest
  @CsvSource({
      "0.005, 0.005", "0.0025, 0.0025", "0.00125, 0.00125", "0.000625, 0.000625", "0.0005, 0.0005",
      "6.25e-05, 6.25e-05", "1.5625e-05, 1.5625e-05", "0.01, 0.01", "0.25, 0.25", "1, 1", "100000, 100000",
      "1000000, 1e+06", "123456789, 1.23457e+08", "0.1234567, 0.123457", "1e-300, 1e-300", "0, 0",
      "9.999995e-05, 0.0001", "3.0517578125e-05, 3.05176e-05"})
  void formatsLikeGlibc(double value, String expected) {
    assertThat(CFormat.g(value)).isEqualTo(expected);
  }
}
