package io.bloomery.server.command.guard;

import java.nio.charset.StandardCharsets;

/** Test access to a guarded key's table suffix. */
public final class GuardSetsAccess {
  private GuardSetsAccess() {}

  public static String keyId(String key) {
    return GuardSets.keyId(key.getBytes(StandardCharsets.UTF_8));
  }
}
