package io.bloomery.hash;

import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;

/**
 * The registry of hash protocol implementations shipped with Bloomery, keyed by their frozen
 * {@link ProtocolId}.
 *
 * <p>Every serialized filter records its protocol's id; loading it looks the implementation up here.
 * The map is built once and never changes at run time. A protocol's definition is frozen once
 * shipped: a different derivation is a new protocol with a new id, never an edit of an existing one.
 * The definitions are written out in {@code docs/PROTOCOLS.md} and pinned by known-answer tests.
 */
public final class Protocols {

  private static final Map<ProtocolId, HashProtocol> BY_ID;

  static {
    EnumMap<ProtocolId, HashProtocol> byId = new EnumMap<>(ProtocolId.class);
    register(byId, Xxh3EnhancedDoubleHashing.INSTANCE);
    register(byId, Sha256DocV1.INSTANCE);
    register(byId, Sha256Indexed.INDEX8);
    register(byId, Sha256Indexed.INDEX16);
    register(byId, GuavaMurmur128Mitz64.INSTANCE);
    register(byId, RedisBloomMurmur64A.INSTANCE);
    BY_ID = Collections.unmodifiableMap(byId);
  }

  private Protocols() {}

  private static void register(Map<ProtocolId, HashProtocol> byId, HashProtocol protocol) {
    if (byId.put(protocol.id(), protocol) != null) {
      throw new AssertionError("protocol registered twice: " + protocol.id());
    }
  }

  /**
   * The implementation of a protocol.
   *
   * @throws IllegalArgumentException if {@code id} is kind-bound (Parquet split-block, blocked, RedisBloom CMS/TOPK
   *     placement lives inside its kind; the t-digest hashes nothing; see docs/PROTOCOLS.md)
   */
  public static HashProtocol of(ProtocolId id) {
    Objects.requireNonNull(id, "id");
    HashProtocol protocol = BY_ID.get(id);
    if (protocol == null) {
      throw new IllegalArgumentException(
          "hash protocol '" + id.protocolName() + "' (id " + id.code() + ") is bound to its filter kind and is not a"
              + " general position function (general protocols: " + BY_ID.keySet() + ")");
    }
    return protocol;
  }

  /**
   * The implementation of a protocol by its stable name, for example {@code "sha256-doc-v1"}.
   *
   * @throws IllegalArgumentException if the name is unknown or has no implementation in this build
   */
  public static HashProtocol byName(String name) {
    Objects.requireNonNull(name, "name");
    return of(ProtocolId.ofName(name));
  }

  /** The fast default protocol, {@code xxh3-edh-v1}. */
  public static HashProtocol defaultProtocol() {
    return Xxh3EnhancedDoubleHashing.INSTANCE;
  }

  /** The identifiers that have an implementation in this build, in code order. */
  public static java.util.Set<ProtocolId> implemented() {
    return BY_ID.keySet();
  }
}
