package io.bloomery.guard;

import java.util.Arrays;
import java.util.List;

/** How both stores write a token's stored reply and name the items of a ledger. */
final class LedgerCodec {
  /** How long a token's stored reply is kept (a retry after a crash comes far sooner). */
  static final long REPLY_RETENTION_MILLIS = 86_400_000;
  /** How often a store deletes the expired replies (in a batch that stores one). */
  static final long PRUNE_EVERY_MILLIS = 60_000;

  private LedgerCodec() {}

  /** The answers of a stored reply, after checking that it was for the same items. */
  static boolean[] storedAnswers(byte[] storedRequest, byte[] answers, byte[] request) {
    if (!Arrays.equals(storedRequest, request)) {
      throw new IllegalArgumentException("the token was already used for other items (a token names"
          + " one request; use a new token for a new request)");
    }
    boolean[] out = new boolean[answers.length];
    for (int i = 0; i < out.length; i++) {
      out[i] = answers[i] != 0;
    }
    return out;
  }

  static byte[] encodeAnswers(boolean[] answers) {
    byte[] out = new byte[answers.length];
    for (int i = 0; i < out.length; i++) {
      out[i] = (byte) (answers[i] ? 1 : 0);
    }
    return out;
  }

  /** The digest of each item. */
  static byte[][] digestsOf(List<byte[]> items) {
    byte[][] out = new byte[items.size()][];
    for (int i = 0; i < out.length; i++) {
      out[i] = ItemDigest.of(items.get(i));
    }
    return out;
  }

  /** A stored reply, checked to have one answer per item. */
  static boolean[] checkedLength(boolean[] stored, int items) {
    if (stored.length != items) {
      throw new IllegalArgumentException("the token's stored reply has " + stored.length
          + " answers, the request " + items + " items");
    }
    return stored;
  }
}
