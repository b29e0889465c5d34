package io.bloomery.format;

import io.bloomery.filter.FilterKind;
import io.bloomery.hash.HashProtocol;
import io.bloomery.hash.ProtocolId;
import io.bloomery.hash.Protocols;

/**
 * The validated envelope header of one serialized filter (everything before the kind's body), as
 * handed to a kind's {@code *Body} reader.
 */
final class Envelope {
  final int formatVersion;
  final FilterKind kind;
  final ProtocolId protocolId;
  private final byte[] seed;
  final long bodyLength;
  /** Offset of the body's first byte from the start of the envelope. */
  final long bodyOffset;

  Envelope(int formatVersion, FilterKind kind, ProtocolId protocolId, byte[] seed, long bodyLength, long bodyOffset) {
    this.formatVersion = formatVersion;
    this.kind = kind;
    this.protocolId = protocolId;
    this.seed = seed;
    this.bodyLength = bodyLength;
    this.bodyOffset = bodyOffset;
  }

  /** The seed as read (callers must not modify it; bodies pass it to factories that copy). */
  byte[] seed() {
    return seed;
  }

  /** The protocol implementation for the recorded id. */
  HashProtocol protocol() throws FilterFormatException {
    try {
      return Protocols.of(protocolId);
    } catch (RuntimeException e) {
      throw new FilterFormatException(
          "hash protocol "
              + protocolId.code()
              + " '"
              + protocolId.protocolName()
              + "' is registered but not available in this build: "
              + e.getMessage(),
          e);
    }
  }

  /**
   * Checks the recorded protocol accepts the body's placement parameters, turning its refusal into a
   * format error that says what the protocol expected.
   */
  HashProtocol checkedProtocol(long bits, int hashes) throws FilterFormatException {
    HashProtocol protocol = protocol();
    try {
      protocol.checkParameters(bits, hashes, seed);
    } catch (IllegalArgumentException e) {
      throw new FilterFormatException(
          "protocol '" + protocol.name() + "' rejects the recorded parameters (m = " + bits + ", k = " + hashes
              + ", seed of " + seed.length + " bytes): " + e.getMessage(),
          e);
    }
    return protocol;
  }

  /** Fails unless a body that claims {@code actual} bytes matches the declared body length. */
  void requireBodyLength(long actual, String how) throws FilterFormatException {
    if (actual != bodyLength) {
      throw new FilterFormatException(
          "body length at offset "
              + (bodyOffset - Long.BYTES)
              + ": expected "
              + actual
              + " bytes for a "
              + kind.kindName()
              + " body with "
              + how
              + ", found "
              + bodyLength);
    }
  }
}
