package io.bloomery.cli;

import java.math.BigDecimal;
import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Parses counts such as {@code --expected}, {@code --bits} and {@code --urls}: plain digits,
 * underscores as separators ({@code 10_000_000}), scientific notation for whole numbers ({@code 1e7})
 * and the decimal suffixes k, M, G ({@code 10M} = 10,000,000). Must be positive and at most
 * {@link Long#MAX_VALUE}; a larger one is reported as too large, not as malformed.
 */
final class CountConverter implements ITypeConverter<Long> {
  private static final BigDecimal MAX = BigDecimal.valueOf(Long.MAX_VALUE);

  @Override
  public Long convert(String text) {
    String cleaned = text.trim().replace("_", "");
    long multiplier = 1;
    if (!cleaned.isEmpty()) {
      switch (Character.toLowerCase(cleaned.charAt(cleaned.length() - 1))) {
        case 'k' -> multiplier = 1_000L;
        case 'm' -> multiplier = 1_000_000L;
        case 'g' -> multiplier = 1_000_000_000L;
        default -> multiplier = 1;
      }
      if (multiplier != 1) {
        cleaned = cleaned.substring(0, cleaned.length() - 1);
      }
    }
    BigDecimal exact;
    try {
      exact = new BigDecimal(cleaned.toUpperCase(Locale.ROOT)).multiply(BigDecimal.valueOf(multiplier));
    } catch (NumberFormatException | ArithmeticException e) {
      throw new TypeConversionException("'" + text + "' is not a whole number (examples: 1000000, 1_000_000, 1e6, 1M)");
    }
    if (exact.signum() <= 0) {
      throw new TypeConversionException("'" + text + "' must be positive");
    }
    if (exact.stripTrailingZeros().scale() > 0) {
      throw new TypeConversionException("'" + text + "' is not a whole number (examples: 1000000, 1_000_000, 1e6, 1M)");
    }
    if (exact.compareTo(MAX) > 0) {
      throw new TypeConversionException("'" + text + "' is too large: the largest count is " + Units.grouped(Long.MAX_VALUE));
    }
    return exact.longValueExact();
  }
}
