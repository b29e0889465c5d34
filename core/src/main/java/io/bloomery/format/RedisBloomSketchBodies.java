package io.bloomery.format;

import io.bloomery.hash.ProtocolId;

/** Checks shared by the bodies of the sketches (count-min and top-k, hashed by RedisBloom's MurmurHash2; t-digest). */
final class RedisBloomSketchBodies {
  private RedisBloomSketchBodies() {}

  /** These kinds place items with RedisBloom's MurmurHash2 and take no seed. */
  static void requireProtocol(Envelope envelope) throws FilterFormatException {
    requireProtocol(envelope, ProtocolId.REDISBLOOM_MURMUR2);
  }

  /** The kind's body takes exactly {@code protocol} and no seed. */
  static void requireProtocol(Envelope envelope, ProtocolId protocol) throws FilterFormatException {
    if (envelope.protocolId != protocol) {
      throw new FilterFormatException(
          "hash protocol at offset 6: expected " + protocol.code() + " '" + protocol.protocolName() + "' for a "
              + envelope.kind.kindName() + " body, found " + envelope.protocolId.code() + " '"
              + envelope.protocolId.protocolName() + "'");
    }
    if (envelope.seed().length != 0) {
      throw new FilterFormatException(
          "seed length at offset 8: expected 0 for a " + envelope.kind.kindName() + " body, found " + envelope.seed().length);
    }
  }
}
