package io.bloomery.cli;

import io.bloomery.filter.BloomFilter;
import io.bloomery.format.MappedBlockedBloomFilter;
import io.bloomery.format.MappedBloomFilter;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.sizing.BloomMath;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * {@code bloomery query}: asks a filter about each input line and, given the exact member set, shows
 * the three-valued verdict a guard would reach and the realized false-positive rate.
 */
@Command(
    name = "query",
    mixinStandardHelpOptions = true,
    header = "Ask a filter about each line: maybe / absent, verdicts with --truth.",
    sortOptions = false,
    description = {
      "Prints 'maybe' or 'absent', a tab and the item per input line (same line",
      "rules as build), in input order. 'absent' is definite; 'maybe' means: go",
      "and check. The item is shown as read; in hex (with --hex, or prefixed",
      "'hex:' when it is not printable UTF-8) otherwise.",
      "",
      "With --truth FILE (the exact member set, same encoding as the input),",
      "each item also gets the verdict a guard in front of that store reaches:",
      "  maybe_present  the filter's answer (true = maybe, false = absent)",
      "  exact_checked  true when the filter said maybe and the exact set was",
      "                 consulted; false when it said absent (a definite",
      "                 non-member: the exact store is never asked)",
      "  duplicate      true only when the exact set confirmed a member; an",
      "                 absent answer is a definite non-duplicate",
      "So an item is one of: absent (new, unchecked), maybe + duplicate, or",
      "maybe + new (a false positive).",
      "",
      "The summary (stderr in text mode, 'summary' with --json) counts queried,",
      "maybe and absent; with --truth also false_positives, the realized rate",
      "among non-members beside the model's estimated_fpp, and false_negatives:",
      "a member the filter calls absent means the filter does not match the",
      "data. That is reported loudly and the exit code is 1.",
      ""
    })
final class QueryCommand implements Callable<Integer> {
  @ParentCommand BloomeryCommand root;

  @Parameters(index = "0", paramLabel = "FILTER", description = "A filter file written by build or merge.")
  Path filterPath;

  @Option(names = "--input", required = true, paramLabel = "FILE|-",
      description = "Items to ask about, one per line; - reads standard input.")
  String input;

  @Option(names = "--hex", description = "Input and truth lines are the items' bytes in hex.")
  boolean hex;

  @Option(names = "--truth", paramLabel = "FILE",
      description = "The exact member set, one item per line (- reads standard input), to confirm each 'maybe' against.")
  Path truthPath;

  @Mixin FilterFormatOption filterFormat;

  @Option(names = "--json", description = "Print JSON: an 'items' list with the verdict fields and a 'summary'.")
  boolean json;

  @Override
  public Integer call() throws IOException {
    Object loaded = FilterFiles.openForQueries(filterPath, filterFormat.format);
    if (!(loaded instanceof MembershipFilter filter)) {
      throw CliException.failure(filterPath + ": holds a " + FilterFiles.kindName(loaded) + ", which does not answer membership queries");
    }
    if (truthPath != null && "-".equals(truthPath.toString()) && "-".equals(input)) {
      throw CliException.usage("--input and --truth cannot both read standard input");
    }
    Set<ByteKey> truth = truthPath == null ? null : readTruth(truthPath);
    Tally tally = new Tally();
    PrintWriter out = root.out();
    JsonWriter w = json ? new JsonWriter(out) : null;
    if (w != null) {
      w.beginObject();
      w.field("filter", filterPath.toString()).field("kind", filter.kind().kindName());
      w.name("items").beginArray();
    }
    try (ItemInput in = ItemInput.open(input, root.stdin())) {
      in.forEach(hex, (line, bytes, offset, length) -> {
        boolean maybe = mightContain(filter, bytes, offset, length);
        boolean member = truth != null && truth.contains(ByteKey.copyOf(bytes, offset, length));
        Verdict verdict = tally.count(maybe, member, truth != null);
        if (w != null) {
          writeJsonItem(w, line, bytes, offset, length, maybe, verdict, truth != null);
        } else if (truth == null) {
          out.printf(Locale.ROOT, "%s\t%s%n", maybe ? "maybe" : "absent", shown(bytes, offset, length));
        } else {
          out.printf(Locale.ROOT, "%-6s maybe_present=%s exact_checked=%s duplicate=%s%s\t%s%n",
              maybe ? "maybe" : "absent", maybe, verdict.exactChecked, verdict.duplicate,
              verdict.falseNegative ? "  FALSE NEGATIVE: a member the filter calls absent" : "",
              shown(bytes, offset, length));
        }
        StandardOutput.requireWritable(out);
      });
    }
    if (w != null) {
      w.endArray();
      w.name("summary");
      writeJsonSummary(w, tally, filter, truth);
      w.endObject().finish();
    } else {
      StandardOutput.requireWritten(out); // no summary for answers that were lost
      writeTextSummary(root.err(), tally, filter, truth);
    }
    if (tally.falseNegatives > 0) {
      throw CliException.failure(tally.falseNegatives + " FALSE NEGATIVE(S): items of " + truthPath
          + " that the filter reports absent. An intact filter never does this, so it was not built"
          + " from this data or with these parameters (protocol, seed, item encoding).");
    }
    return BloomeryCommand.EXIT_OK;
  }

  private Set<ByteKey> readTruth(Path path) throws IOException {
    Set<ByteKey> truth = new HashSet<>();
    try (ItemInput in = ItemInput.open(path.toString(), root.stdin())) {
      in.forEach(hex, (line, bytes, offset, length) -> truth.add(ByteKey.copyOf(bytes, offset, length)));
    }
    return truth;
  }

  private static boolean mightContain(MembershipFilter filter, byte[] bytes, int offset, int length) {
    if (filter instanceof BloomFilter bloom) {
      return bloom.mightContain(bytes, offset, length);
    }
    if (filter instanceof MappedBloomFilter bloom) {
      return bloom.mightContain(bytes, offset, length);
    }
    if (filter instanceof MappedBlockedBloomFilter blocked) {
      return blocked.mightContain(bytes, offset, length);
    }
    return filter.mightContain(Arrays.copyOfRange(bytes, offset, offset + length));
  }

  private void writeJsonItem(JsonWriter w, long line, byte[] bytes, int offset, int length,
      boolean maybe, Verdict verdict, boolean withTruth) {
    w.beginObject().field("line", line);
    String text = hex ? null : utf8OrNull(bytes, offset, length);
    if (text != null) {
      w.field("item", text);
    } else {
      w.field("item_hex", Hex.encode(Arrays.copyOfRange(bytes, offset, offset + length)));
    }
    w.field("filter", maybe ? "maybe" : "absent").field("maybe_present", maybe);
    if (withTruth) {
      w.field("exact_checked", verdict.exactChecked).field("duplicate", verdict.duplicate);
      if (verdict.falseNegative) {
        w.field("false_negative", true);
      }
    }
    w.endObject();
  }

  /**
   * The item as a text line shows it: in hex under {@code --hex}; otherwise its UTF-8 text, or {@code hex:} and its
   * bytes when they are not UTF-8 or hold a control character (a terminal would act on it, or it would break the line).
   */
  private String shown(byte[] bytes, int offset, int length) {
    String hexForm = Hex.encode(Arrays.copyOfRange(bytes, offset, offset + length));
    if (hex) {
      return hexForm;
    }
    String text = utf8OrNull(bytes, offset, length);
    return text == null || text.codePoints().anyMatch(Character::isISOControl) ? "hex:" + hexForm : text;
  }

  private static String utf8OrNull(byte[] bytes, int offset, int length) {
    try {
      return StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes, offset, length))
          .toString();
    } catch (CharacterCodingException e) {
      return null;
    }
  }

  private static void writeJsonSummary(JsonWriter w, Tally tally, MembershipFilter filter, Set<ByteKey> truth) {
    w.beginObject()
        .field("queried", tally.queried)
        .field("maybe", tally.maybe)
        .field("absent", tally.absent);
    if (truth != null) {
      w.field("truth_items", truth.size())
          .field("exact_checked", tally.maybe)
          .field("duplicates", tally.duplicates)
          .field("non_members", tally.nonMembers)
          .field("false_positives", tally.falsePositives)
          .field("realized_fpp", tally.realizedFpp())
          .field("false_negatives", tally.falseNegatives);
    }
    ClassicModel model = ClassicModel.of(filter);
    if (model != null) {
      w.field("estimated_fpp", model.estimatedFpp()).field("model_fpp", model.modelFpp());
    }
    w.endObject();
  }

  private static void writeTextSummary(PrintWriter err, Tally tally, MembershipFilter filter, Set<ByteKey> truth) {
    err.printf(Locale.ROOT, "queried %s: %s maybe, %s absent%n",
        Units.grouped(tally.queried), Units.grouped(tally.maybe), Units.grouped(tally.absent));
    if (truth != null) {
      err.printf(Locale.ROOT, "exact check of the %s maybe: %s, %s%n", Units.grouped(tally.maybe),
          Units.count(tally.duplicates, "duplicate", "duplicates"),
          Units.count(tally.falsePositives, "false positive", "false positives"));
      err.printf(Locale.ROOT, "realized false-positive rate: %s of %s = %s%n",
          Units.grouped(tally.falsePositives), Units.count(tally.nonMembers, "non-member", "non-members"),
          Units.probability(tally.realizedFpp()));
    }
    ClassicModel model = ClassicModel.of(filter);
    if (model != null) {
      err.printf(Locale.ROOT, "model: estimated_fpp %s (from the fill), %s (from %s)%n",
          Units.probability(model.estimatedFpp()), Units.probability(model.modelFpp()),
          Units.count(model.inserted(), "inserted item", "inserted items"));
    }
    if (tally.falseNegatives > 0) {
      err.printf(Locale.ROOT, "FALSE NEGATIVES: %s%n", Units.grouped(tally.falseNegatives));
    }
    err.flush();
  }

  /** A classic filter's model figures, on the heap or mapped; null for other kinds. */
  private record ClassicModel(double estimatedFpp, double modelFpp, long inserted) {
    static ClassicModel of(MembershipFilter filter) {
      if (filter instanceof BloomFilter bloom) {
        return new ClassicModel(bloom.estimatedFpp(),
            BloomMath.falsePositiveRate(bloom.bitSize(), bloom.hashCount(), bloom.insertedCount()), bloom.insertedCount());
      }
      if (filter instanceof MappedBloomFilter bloom) {
        return new ClassicModel(bloom.estimatedFpp(),
            BloomMath.falsePositiveRate(bloom.bitSize(), bloom.hashCount(), bloom.insertedCount()), bloom.insertedCount());
      }
      return null;
    }
  }

  /** What the exact check concluded about one item. */
  private record Verdict(boolean exactChecked, boolean duplicate, boolean falseNegative) {}

  private static final class Tally {
    long queried;
    long maybe;
    long absent;
    long duplicates;
    long nonMembers;
    long falsePositives;
    long falseNegatives;

    Verdict count(boolean maybePresent, boolean member, boolean withTruth) {
      queried++;
      if (maybePresent) {
        maybe++;
      } else {
        absent++;
      }
      if (!withTruth) {
        return new Verdict(false, false, false);
      }
      if (!member) {
        nonMembers++;
      }
      if (maybePresent && member) {
        duplicates++;
        return new Verdict(true, true, false);
      }
      if (maybePresent) {
        falsePositives++;
        return new Verdict(true, false, false);
      }
      if (member) {
        falseNegatives++;
        return new Verdict(false, false, true);
      }
      return new Verdict(false, false, false);
    }

    double realizedFpp() {
      return nonMembers == 0 ? Double.NaN : (double) falsePositives / nonMembers;
    }
  }
}
