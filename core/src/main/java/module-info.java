/**
 * Bloomery core: approximate-membership filters and frequency sketches. Exports the API packages only;
 * {@code io.bloomery.internal} (helpers the kinds share) stays inside the module.
 */
module io.bloomery.core {
  requires com.dynatrace.hash4j;

  exports io.bloomery.aging;
  exports io.bloomery.blocked;
  exports io.bloomery.counting;
  exports io.bloomery.cuckoo;
  exports io.bloomery.filter;
  exports io.bloomery.format;
  exports io.bloomery.fuse;
  exports io.bloomery.hash;
  exports io.bloomery.plan;
  exports io.bloomery.scalable;
  exports io.bloomery.sizing;
  exports io.bloomery.sketch;
}
