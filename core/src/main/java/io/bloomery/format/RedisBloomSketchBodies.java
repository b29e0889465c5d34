package io.bloomery.format;

import io.bloomery.hash.ProtocolId;

/** Checks shared by the bodies of RedisBloom-hashed sketches (count-min, top-k). */
final class RedisBloomSketchBodies {
  private RedisBloomSketchBodies() {}

  /** These kinds place items with RedisBloom's MurmurHash2 and take no seed. */
  static void requireProtocol(Envelope envelope) throws FilterFormatException {
    if (envelope.protocolId != ProtocolId.REDISBLOOM_MURMUR2) {
      throw new FilterFormatException(
          "hash protocol at offset 6: expected " + ProtocolId.REDISBLOOM_MURMUR2.code() + " '"
              + ProtocolId.REDISBLOOM_MURMUR2.protocolName() + "' for a " + envelope.kind.kindName() + " body, found "
              + envelope.protocolId.code() + " '" + envelope.protocolId.protocolName() + "'");
    }
    if (envelope.seed().length != 0) {
      throw new FilterFormatException(
          "seed length at offset 8: expected 0 for a " + envelope.kind.kindName() + " body, found " + envelope.seed().length);
    }
  }
}
