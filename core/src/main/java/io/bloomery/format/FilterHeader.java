package io.bloomery.format;

import io.bloomery.filter.FilterKind;
import io.bloomery.hash.ProtocolId;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a serialized filter says about itself, read by {@link FilterFormat#describe} without loading
 * the payload: the envelope's fields plus the kind's fixed header fields (for a classic filter
 * {@code bits}, {@code hashes}, {@code inserted}).
 *
 * <p>A header that was described has passed every check that can be made without the payload; the
 * checksum and the payload itself are verified only when the filter is read. Immutable.
 */
public final class FilterHeader {
  private final int formatVersion;
  private final FilterKind kind;
  private final ProtocolId protocol;
  private final byte[] seed;
  private final long bodyLength;
  private final Map<String, Long> parameters;

  FilterHeader(
      int formatVersion, FilterKind kind, ProtocolId protocol, byte[] seed, long bodyLength, Map<String, Long> parameters) {
    this.formatVersion = formatVersion;
    this.kind = kind;
    this.protocol = protocol;
    this.seed = seed.clone();
    this.bodyLength = bodyLength;
    this.parameters = Collections.unmodifiableMap(new LinkedHashMap<>(parameters));
  }

  /** The envelope's format version (1 for files written by this build). */
  public int formatVersion() {
    return formatVersion;
  }

  public FilterKind kind() {
    return kind;
  }

  /** The hash protocol recorded in the envelope. */
  public ProtocolId protocolId() {
    return protocol;
  }

  /** A copy of the seed (domain prefix) recorded with the protocol. */
  public byte[] seed() {
    return seed.clone();
  }

  /** Length of the kind's body in bytes (the payload included). */
  public long bodyLength() {
    return bodyLength;
  }

  /** Length of the whole envelope in bytes, checksum included. */
  public long totalLength() {
    return FilterFormat.envelopeLength(seed.length, bodyLength);
  }

  /**
   * The kind's fixed header fields by name, in file order (for a classic filter: {@code bits},
   * {@code hashes}, {@code inserted}); empty for a kind this build cannot read.
   */
  public Map<String, Long> parameters() {
    return parameters;
  }

  @Override
  public String toString() {
    return "FilterHeader{version="
        + formatVersion
        + ", kind="
        + kind.kindName()
        + ", protocol="
        + protocol.protocolName()
        + ", seedLength="
        + seed.length
        + ", bodyLength="
        + bodyLength
        + ", parameters="
        + parameters
        + "}";
  }
}
