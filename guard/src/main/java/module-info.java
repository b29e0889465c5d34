/**
 * Bloomery guard: a filter in front of an exact store (PostgreSQL, or an embedded SQLite file), with snapshots
 * and logical-replication catch-up. Uses core's public API only. The SQLite and PostgreSQL drivers are found
 * through JDBC's service loader; on the module path add them ({@code --add-modules}) beside this module.
 */
module io.bloomery.guard {
  requires transitive io.bloomery.core;
  requires transitive java.sql;
  requires com.zaxxer.hikari;
  requires org.postgresql.jdbc;
  requires org.slf4j;

  exports io.bloomery.guard;
}
