package io.bloomery.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.spark.sql.SparkSession;

/**
 * The one local SparkSession every test class of the module shares (starting one costs 5-12 s on
 * this machine): local[2], two shuffle partitions, no UI, a small driver heap share. Stopped by a
 * JVM shutdown hook when the test fork exits.
 */
final class SharedSpark {
  private static SparkSession session;

  private SharedSpark() {}

  static synchronized SparkSession session() {
    if (session == null) {
      Path warehouse;
      try {
        warehouse = Files.createTempDirectory("bloomery-spark-warehouse");
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      session = SparkSession.builder()
          .master("local[2]")
          .appName("bloomery-spark-tests")
          .config("spark.ui.enabled", "false")
          .config("spark.sql.shuffle.partitions", "2")
          .config("spark.default.parallelism", "2")
          .config("spark.sql.warehouse.dir", warehouse.toUri().toString())
          .config("spark.driver.host", "127.0.0.1")
          .getOrCreate();
      session.sparkContext().setLogLevel("WARN");
      SparkSession started = session;
      Runtime.getRuntime().addShutdownHook(new Thread(started::stop, "stop-shared-spark"));
    }
    return session;
  }
}
