package io.bloomery.internal.planted;

import io.bloomery.filter.BloomFilter;

/** Planted for {@code PlantedViolationTest}: core's internal package naming a kind it serves. */
public final class PlantedKindUse {
  BloomFilter served;
}
