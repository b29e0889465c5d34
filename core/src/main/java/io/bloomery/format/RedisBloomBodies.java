package io.bloomery.format;

import io.bloomery.filter.FilterKind;
import io.bloomery.hash.ProtocolId;
import java.io.IOException;

/** What {@link ScalableBloomBody} and {@link CuckooBody} share: RedisBloom's protocol tag and the writer shell. */
final class RedisBloomBodies {
  private RedisBloomBodies() {}

  /** A writer for a body of exactly {@code bodyLength} bytes, protocol {@code redisbloom-murmur64a}, no seed. */
  static FilterFormat.BodyWriter writer(FilterKind kind, long bodyLength, BodyWriters.Content payload) {
    return BodyWriters.of(kind, ProtocolId.REDISBLOOM_MURMUR64A, new byte[0], bodyLength, payload);
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
