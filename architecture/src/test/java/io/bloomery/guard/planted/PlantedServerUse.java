package io.bloomery.guard.planted;

import io.bloomery.server.keyspace.Key;

/** Planted for {@code PlantedViolationTest}: the guard module reaching up into the server. */
public final class PlantedServerUse {
  Key key = Key.of(new byte[] {1});
}
