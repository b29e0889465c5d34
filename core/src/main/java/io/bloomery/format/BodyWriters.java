package io.bloomery.format;

import io.bloomery.filter.FilterKind;
import io.bloomery.hash.ProtocolId;
import java.io.IOException;

/** Builds a {@link FilterFormat.BodyWriter} from its parts, so each body only says what it writes. */
final class BodyWriters {
  private BodyWriters() {}

  /** Writes a body's bytes. */
  @FunctionalInterface
  interface Content {
    void write(FormatWriter out) throws IOException;
  }

  static FilterFormat.BodyWriter of(FilterKind kind, ProtocolId protocol, byte[] seed, long bodyLength, Content content) {
    return new FilterFormat.BodyWriter() {
      @Override
      public FilterKind kind() {
        return kind;
      }

      @Override
      public ProtocolId protocol() {
        return protocol;
      }

      @Override
      public byte[] seed() {
        return seed;
      }

      @Override
      public long bodyLength() {
        return bodyLength;
      }

      @Override
      public void writeBody(FormatWriter out) throws IOException {
        content.write(out);
      }
    };
  }
}
