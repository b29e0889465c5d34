package io.bloomery.format;

import io.bloomery.filter.FilterKind;
import io.bloomery.hash.ProtocolId;
import io.bloomery.internal.KindAccess;
import io.bloomery.sketch.TDigest;
import java.io.IOException;
import java.util.Map;

/**
 * The body of a {@link FilterKind#T_DIGEST t-digest}. Protocol {@code unhashed}, empty seed. The whole state is
 * kept, buffered centroids included, so a digest read back answers and evolves exactly as the one written (its
 * next compression merges the same centroids in the same order).
 *
 * <table>
 *   <caption>T-digest body; N = merged + unmerged centroids</caption>
 *   <tr><th>offset</th><th>size</th><th>field</th><th>rule</th></tr>
 *   <tr><td>0</td><td>8</td><td>compression</td><td>u64, 1 ≤ compression ≤ {@link TDigest#MAX_COMPRESSION}</td></tr>
 *   <tr><td>8</td><td>8</td><td>min</td><td>IEEE-754 binary64, finite ({@code Double.MAX_VALUE} when empty)</td></tr>
 *   <tr><td>16</td><td>8</td><td>max</td><td>IEEE-754 binary64, finite ({@code -Double.MAX_VALUE} when empty)</td></tr>
 *   <tr><td>24</td><td>8</td><td>total compressions</td><td>u64 ≤ 2<sup>63</sup> − 1</td></tr>
 *   <tr><td>32</td><td>4</td><td>merged nodes</td><td>u32</td></tr>
 *   <tr><td>36</td><td>4</td><td>unmerged nodes</td><td>u32, N ≤ 6 × compression + 10</td></tr>
 *   <tr><td>40</td><td>8N</td><td>means</td><td>binary64 per centroid, finite: the merged ones in sorted order, then
 *       the buffered ones in arrival order</td></tr>
 *   <tr><td>40+8N</td><td>8N</td><td>weights</td><td>u64 per centroid, ≥ 1, summing to at most 2<sup>63</sup> −
 *       1</td></tr>
 * </table>
 */
final class TDigestBody {
  static final int FIXED_LENGTH = 40;

  private TDigestBody() {}

  static FilterFormat.BodyWriter writer(TDigest digest) {
    KindAccess.TDigestState state = KindAccess.tDigest(TDigest.class).state(digest);
    long centroids = state.means().length;
    long totalCompressions = digest.totalCompressions();
    return BodyWriters.of(FilterKind.T_DIGEST, ProtocolId.UNHASHED, new byte[0], FIXED_LENGTH + 16 * centroids,
        out -> {
          out.u64(digest.compression());
          out.u64(Double.doubleToRawLongBits(state.min()));
          out.u64(Double.doubleToRawLongBits(state.max()));
          out.u64(totalCompressions);
          out.u32(state.mergedNodes());
          out.u32(centroids - state.mergedNodes());
          for (double mean : state.means()) {
            out.word(Double.doubleToRawLongBits(mean));
          }
          for (long weight : state.weights()) {
            out.word(weight);
          }
        });
  }

  private record Fields(long compression, double min, double max, long totalCompressions, long merged,
      long unmerged) {
    long centroids() {
      return merged + unmerged;
    }
  }

  private static Fields readFields(Envelope envelope, FormatReader in) throws IOException {
    RedisBloomSketchBodies.requireProtocol(envelope, ProtocolId.UNHASHED);
    long offset = in.position();
    long compression = in.u64("compression", 1, TDigest.MAX_COMPRESSION, "1 <= compression <= "
        + TDigest.MAX_COMPRESSION);
    double min = Double.longBitsToDouble(in.u64("min"));
    double max = Double.longBitsToDouble(in.u64("max"));
    if (!Double.isFinite(min) || !Double.isFinite(max)) {
      throw new FilterFormatException(
          "min/max at offset " + (offset + 8) + ": expected finite values, found " + min + " and " + max);
    }
    long totalCompressions = in.u64("total compressions", 0, Long.MAX_VALUE, "<= 2^63 - 1");
    long merged = in.u32("merged nodes");
    long capacity = 6 * compression + 10;
    long unmerged = in.u32("unmerged nodes", 0, capacity - merged,
        "merged + unmerged nodes <= 6 x compression + 10 = " + capacity + " (merged " + merged + ")");
    Fields fields = new Fields(compression, min, max, totalCompressions, merged, unmerged);
    envelope.requireBodyLength(FIXED_LENGTH + 16 * fields.centroids(),
        fields.centroids() + " centroids (40 + 16 x " + fields.centroids() + ")");
    return fields;
  }

  static void describe(Envelope envelope, FormatReader in, Map<String, Long> parameters) throws IOException {
    Fields f = readFields(envelope, in);
    parameters.put("compression", f.compression());
    parameters.put("merged_nodes", f.merged());
    parameters.put("unmerged_nodes", f.unmerged());
    parameters.put("total_compressions", f.totalCompressions());
  }

  /** The digest's fields and centroids, built into a {@link TDigest} (its capacity allocated) after the checksum. */
  static FilterFormat.Deferred read(Envelope envelope, FormatReader in) throws IOException {
    Fields f = readFields(envelope, in);
    int n = (int) f.centroids();
    double[] means = new double[n];
    long[] weights = new long[n];
    FormatReader.WordStream meanWords = in.words(n, "means");
    for (int i = 0; i < n; i++) {
      means[i] = Double.longBitsToDouble(meanWords.next());
    }
    FormatReader.WordStream weightWords = in.words(n, "weights");
    for (int i = 0; i < n; i++) {
      weights[i] = weightWords.next();
    }
    return () -> {
      try {
        return KindAccess.tDigest(TDigest.class).restore(f.compression(), f.min(), f.max(), f.totalCompressions(),
            (int) f.merged(), means, weights);
      } catch (IllegalArgumentException e) {
        throw new FilterFormatException("t-digest rejected by TDigest.restore: " + e.getMessage(), e);
      }
    };
  }
}
