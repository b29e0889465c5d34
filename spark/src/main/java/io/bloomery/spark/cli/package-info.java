/**
 * {@code bloomery-spark}, the command-line front of the Spark jobs ({@link io.bloomery.spark.cli.SparkCommand}),
 * for spark-submit.
 */
package io.bloomery.spark.cli;
