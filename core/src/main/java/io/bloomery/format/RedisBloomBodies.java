package io.bloomery.format;

import io.bloomery.filter.FilterKind;
import io.bloomery.hash.ProtocolId;
import java.io.IOException;

/** What {@link ScalableBloomBody} and {@link CuckooBody} share: RedisBloom's protocol tag and the writer shell. */
final class RedisBloomBodies {
  private RedisBloomBodies() {}

  /** Writes a body's bytes. */
  interface Payload {
    void write(FormatWriter out) throws IOException;
  }

  /** A writer for a body of exactly {@code bodyLength} bytes, protocol {@code redisbloom-murmur64a}, no seed. */
  static FilterFormat.BodyWriter writer(FilterKind kind, long bodyLength, Payload payload) {
    return new FilterFormat.BodyWriter() {
      @Override
      public FilterKind kind() {
        return kind;
      }

      @Override
      public ProtocolId protocol() {
        return ProtocolId.REDISBLOOM_MURMUR64A;
      }

      @Override
      public byte[] seed() {
        return new byte[0];
      }

      @Override
      public long bodyLength() {
        return bodyLength;
      }

      @Override
      public void writeBody(FormatWriter out) throws IOException {
        payload.write(out);
      }
    };
  }

  /** Fails unless the envelope records {@code redisbloom-murmur64a} with an empty seed. */
  static void requireProtocol(Envelope envelope) throws FilterFormatException {
    if (envelope.protocolId != ProtocolId.REDISBLOOM_MURMUR64A || envelope.seed().length != 0) {
      throw new FilterFormatException(envelope.kind.kindName() + " body: expected protocol "
          + ProtocolId.REDISBLOOM_MURMUR64A.code() + " '" + ProtocolId.REDISBLOOM_MURMUR64A.protocolName()
          + "' with an empty seed, found protocol " + envelope.protocolId.code() + " '"
          + envelope.protocolId.protocolName() + "' with a seed of " + envelope.seed().length + " bytes");
    }
  }
}
