package io.bloomery.sizing.planted;

import java.sql.Connection;

/** Planted for {@code PlantedViolationTest}: a class in a core package that uses JDBC. */
public final class PlantedJdbcUse {
  Connection connection;
}
