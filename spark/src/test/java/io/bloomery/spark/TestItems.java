package io.bloomery.spark;

import io.bloomery.format.FilterFormat;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Fixed test item sets and the single-machine reference build the CLI performs. */
final class TestItems {
  private TestItems() {}

  /** The URL of page i: members are 0..n-1, new items start past them. */
  static String url(int i) {
    return "https://example.com/page/" + i;
  }

  /**
   * A text file the way {@code bloomery build} reads one: URLs with duplicates, a CRLF line, an empty
   * line (the empty item), non-ASCII text in two Unicode normal forms, and a line that is not UTF-8.
   */
  static Path itemsFile(Path dir, int distinct) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int i = 0; i < distinct; i++) {
      out.writeBytes((url(i) + "\n").getBytes(StandardCharsets.UTF_8));
      if (i % 7 == 0) {
        out.writeBytes((url(i / 2) + "\n").getBytes(StandardCharsets.UTF_8)); // a duplicate
      }
    }
    out.writeBytes("crlf-line\r\n".getBytes(StandardCharsets.UTF_8));
    out.writeBytes("\n".getBytes(StandardCharsets.UTF_8));
    out.writeBytes("caf\u00e9\n".getBytes(StandardCharsets.UTF_8));
    out.writeBytes("cafe\u0301\n".getBytes(StandardCharsets.UTF_8));
    out.writeBytes(new byte[] {'b', 'a', 'd', (byte) 0xFF, (byte) 0xC0, '\n'});
    out.writeBytes("last-line-without-newline".getBytes(StandardCharsets.UTF_8));
    Path file = dir.resolve("items.txt");
    Files.write(file, out.toByteArray());
    return file;
  }

  /** The items of a file exactly as {@code bloomery build} splits it: at \\n, a \\r before it dropped. */
  static List<byte[]> cliItems(Path file) throws IOException {
    byte[] bytes = Files.readAllBytes(file);
    List<byte[]> items = new ArrayList<>();
    int start = 0;
    for (int i = 0; i <= bytes.length; i++) {
      if (i == bytes.length || bytes[i] == '\n') {
        if (i == bytes.length && start == i) {
          break;
        }
        int end = i > start && bytes[i - 1] == '\r' && i < bytes.length ? i - 1 : i;
        items.add(Arrays.copyOfRange(bytes, start, end));
        start = i + 1;
      }
    }
    return items;
  }

  /**
   * The file {@code bloomery build} writes for {@code spec} over {@code items}: added in order on one
   * machine, recording the number of items given (duplicates included) as its inserted count.
   */
  static byte[] singleMachine(FilterSpec spec, List<byte[]> items) {
    var filter = spec.newFilter();
    for (byte[] item : items) {
      filter.add(item);
    }
    return Filters.toBytes(filter, items.size());
  }

  /** Offset of the inserted-count field in a classic or blocked file with an empty seed. */
  static final int COUNT_OFFSET = 18 + 12;

  static long count(byte[] file) {
    long value = 0;
    for (int i = 7; i >= 0; i--) {
      value = (value << 8) | (file[COUNT_OFFSET + i] & 0xFF);
    }
    return value;
  }
}
