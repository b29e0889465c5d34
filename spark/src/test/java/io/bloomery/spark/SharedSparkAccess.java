package io.bloomery.spark;

import org.apache.spark.sql.SparkSession;

/** The shared test session for test classes in other packages. */
public final class SharedSparkAccess {
  private SharedSparkAccess() {}

  public static SparkSession session() {
    return SharedSpark.session();
  }
}
