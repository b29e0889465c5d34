package io.bloomery.cli;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Parses a false-positive rate such as {@code --fpp}: a decimal ({@code 0.01}, {@code 1e-6}) or a
 * percentage ({@code 1%}), strictly between 0 and 1.
 */
final class ProbabilityConverter implements ITypeConverter<Double> {
  @Override
  public Double convert(String text) {
    String trimmed = text.trim();
    double scale = 1;
    if (trimmed.endsWith("%")) {
      trimmed = trimmed.substring(0, trimmed.length() - 1).trim();
      scale = 100;
    }
    double value;
    try {
      value = Double.parseDouble(trimmed) / scale;
    } catch (NumberFormatException e) {
      throw new TypeConversionException("'" + text + "' is not a number (examples: 0.01, 1%, 1e-6)");
    }
    if (!(value > 0 && value < 1)) {
      throw new TypeConversionException(
          "'" + text + "' is not a probability strictly between 0 and 1 (examples: 0.01, 1%, 1e-6)");
    }
    return value;
  }
}
