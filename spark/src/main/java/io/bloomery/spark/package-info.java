/**
 * Filters over data too big for one machine, on Apache Spark: {@link io.bloomery.spark.BloomerySpark} is the entry
 * point (build a filter from a column, apply one to a DataFrame, sharded or not); {@link
 * io.bloomery.spark.FilterSpec} says what to build, {@link io.bloomery.spark.SqlFunctions} registers the SQL
 * functions. Uses core only; Spark itself is the user's (provided scope). docs/SPARK.md has the guide.
 */
package io.bloomery.spark;
