package io.bloomery.planted.cycle.b;

import io.bloomery.planted.cycle.a.CycleA;

/** Planted for {@code PlantedViolationTest}: the other half of a package cycle. */
public final class CycleB {
  CycleA other;
}
