package io.bloomery.planted.cycle.a;

import io.bloomery.planted.cycle.b.CycleB;

/** Planted for {@code PlantedViolationTest}: one half of a package cycle. */
public final class CycleA {
  CycleB other;
}
