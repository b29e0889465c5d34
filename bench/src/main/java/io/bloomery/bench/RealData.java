package io.bloomery.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.zip.GZIPInputStream;

/**
 * The real-strings workload: insert the npm package names, query the PyPI names, exact truth from a
 * {@link HashSet}. Data origin: {@code realdata/README.md}.
 */
public final class RealData {

  private RealData() {}

  /** The names in a bundled list ({@code "npm-names"} or {@code "pypi-names"}), in file order. */
  public static List<String> names(String list) {
    String resource = "/realdata/" + list + ".txt.gz";
    try (InputStream raw = RealData.class.getResourceAsStream(resource)) {
      if (raw == null) {
        throw new IllegalArgumentException("no bundled list " + resource);
      }
      BufferedReader reader = new BufferedReader(new InputStreamReader(new GZIPInputStream(raw), StandardCharsets.UTF_8));
      List<String> names = new ArrayList<>();
      for (String line = reader.readLine(); line != null; line = reader.readLine()) {
        if (!line.isEmpty()) {
          names.add(line);
        }
      }
      return names;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The inserted set (npm) and the queried list (PyPI) with the exact answer per query. */
  public record Workload(List<String> inserted, List<String> queries, boolean[] truth, int members) {}

  /** Loads both lists and computes the exact truth. */
  public static Workload load() {
    List<String> inserted = names("npm-names");
    List<String> queries = names("pypi-names");
    Set<String> exact = new HashSet<>(inserted);
    boolean[] truth = new boolean[queries.size()];
    int members = 0;
    for (int i = 0; i < truth.length; i++) {
      truth[i] = exact.contains(queries.get(i));
      members += truth[i] ? 1 : 0;
    }
    return new Workload(inserted, queries, truth, members);
  }
}
