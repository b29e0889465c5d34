package io.bloomery.cli.planted;

import io.bloomery.internal.ClassicProbe;

/** Planted for {@code PlantedViolationTest}: the cli using core's internal package. */
public final class PlantedInternalUse {
  int batch = ClassicProbe.BATCH + 1;
  ClassicProbe probe;
}
