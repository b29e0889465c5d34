package io.bloomery.cli.planted;

import io.bloomery.server.state.Settings;

/** Planted for {@code PlantedViolationTest}: the cli using a server package that module-info does not export. */
public final class PlantedServerInternalUse {
  Settings settings;
}
