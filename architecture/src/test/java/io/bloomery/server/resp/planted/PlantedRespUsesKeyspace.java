package io.bloomery.server.resp.planted;

import io.bloomery.server.keyspace.Key;

/** Planted for {@code PlantedViolationTest}: the wire protocol layer reaching up into the keyspace. */
public final class PlantedRespUsesKeyspace {
  Key key = Key.of(new byte[] {2});
}
