package io.bloomery.server.state;

import io.bloomery.server.keyspace.Key;
import java.util.List;
import java.util.Map;

/**
 * The keys held outside the keyspace by the GUARD.* family (its guarded sets), as the rest of the server must see
 * them: every other write of such a name answers {@link #WRONGTYPE}, DBSIZE, KEYS and SCAN count and list them,
 * their filters count against {@code maxmemory}, INFO reports them. The family implements it; the
 * {@link ServerContext} holds it, so the dispatch and the other families need not know the family.
 */
public interface GuardedKeys {
  /** The error every non-GUARD write of a guarded key answers (DEL, RENAME, BF.ADD ...). */
  String WRONGTYPE = "WRONGTYPE Operation against a guarded key (only GUARD.* commands apply; remove it with"
      + " GUARD.DROP)";

  /** No guarded keys (a server without declared stores' family, recovery, tests). */
  GuardedKeys NONE = new GuardedKeys() {
    @Override
    public boolean isGuarded(Key key) {
      return false;
    }

    @Override
    public int count() {
      return 0;
    }

    @Override
    public List<Key> names() {
      return List.of();
    }

    @Override
    public long usedBytes() {
      return 0;
    }

    @Override
    public long usedBytes(Key key) {
      return -1;
    }

    @Override
    public long recountAll() {
      return 0;
    }

    @Override
    public Map<String, String> infoFields() {
      return Map.of();
    }
  };

  /** Whether {@code key} names a guarded key (reserved, being built or reopened). */
  boolean isGuarded(Key key);

  /** How many guarded keys there are (DBSIZE counts them). */
  int count();

  /** The guarded key names, for KEYS and SCAN. */
  List<Key> names();

  /** The bytes guarded keys count against {@code maxmemory}, as last counted. */
  long usedBytes();

  /** The bytes the guarded key counts against maxmemory, or -1 if there is no such guarded key (MEMORY USAGE). */
  long usedBytes(Key key);

  /** Recounts every guarded key's filters; {@link #usedBytes()} after. */
  long recountAll();

  /** The fields of INFO's {@code # Guard} section. */
  Map<String, String> infoFields();
}
