package io.bloomery.server.command;

import io.bloomery.server.command.bloom.BloomCommands;

/** Planted for {@code PlantedViolationTest}: the dispatch naming a command family, which is built on it. */
public final class PlantedDispatchUsesFamily {
  Class<?> family = BloomCommands.class;
}
