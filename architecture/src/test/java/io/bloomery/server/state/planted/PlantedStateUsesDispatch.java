package io.bloomery.server.state.planted;

import io.bloomery.server.command.Invocation;

/** Planted for {@code PlantedViolationTest}: server state reaching up into the command dispatch. */
public final class PlantedStateUsesDispatch {
  Invocation invocation;
}
