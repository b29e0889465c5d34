package io.bloomery.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Loads the known-answer vector files from the classpath ({@code /vectors/*.json}). */
public final class Vectors {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private Vectors() {}

  /** The parsed file, for example {@code load("sha256-doc-v1.json")}. */
  public static JsonNode load(String name) {
    try (InputStream in = Vectors.class.getResourceAsStream("/vectors/" + name)) {
      if (in == null) {
        throw new IllegalArgumentException("no vector file /vectors/" + name + " on the classpath");
      }
      return MAPPER.readTree(in);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A JSON array of numbers as longs. */
  public static long[] longs(JsonNode array) {
    long[] values = new long[array.size()];
    for (int i = 0; i < values.length; i++) {
      values[i] = array.get(i).asLong();
    }
    return values;
  }

  /** A JSON array of strings. */
  public static List<String> strings(JsonNode array) {
    List<String> values = new ArrayList<>();
    array.forEach(node -> values.add(node.asText()));
    return values;
  }

  /** UTF-8 bytes of a string item. */
  public static byte[] utf8(String item) {
    return item.getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Expands a range written as {@code "prefix<a> .. prefix<b>"} (for example {@code "doc-04 ..
   * doc-63"} or {@code "item:0 .. item:999"}), keeping the zero-padding width of the first bound.
   */
  public static List<String> range(String spec) {
    String[] bounds = spec.split("\\s*\\.\\.\\s*");
    if (bounds.length != 2) {
      throw new IllegalArgumentException("not a range: " + spec);
    }
    int digitsAt = firstTrailingDigit(bounds[0]);
    String prefix = bounds[0].substring(0, digitsAt);
    if (!bounds[1].startsWith(prefix)) {
      throw new IllegalArgumentException("range bounds have different prefixes: " + spec);
    }
    String first = bounds[0].substring(digitsAt);
    int width = first.startsWith("0") && first.length() > 1 ? first.length() : 0;
    int from = Integer.parseInt(first);
    int to = Integer.parseInt(bounds[1].substring(prefix.length()));
    List<String> items = new ArrayList<>();
    for (int i = from; i <= to; i++) {
      String number = Integer.toString(i);
      while (number.length() < width) {
        number = "0" + number;
      }
      items.add(prefix + number);
    }
    return items;
  }

  private static int firstTrailingDigit(String text) {
    int at = text.length();
    while (at > 0 && Character.isDigit(text.charAt(at - 1))) {
      at--;
    }
    if (at == text.length()) {
      throw new IllegalArgumentException("range bound has no number: " + text);
    }
    return at;
  }
}
