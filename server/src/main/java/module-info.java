/**
 * Bloomery server ({@code bloomery serve}): a RESP2/RESP3 server answering RedisBloom's commands. Exports what the
 * CLI starts and inspects: {@code io.bloomery.server} ({@code BloomeryServer}, {@code ServerConfig}, {@code Main}),
 * {@code io.bloomery.server.persistence} ({@code check-log}, the data directory's formats) and
 * {@code io.bloomery.server.rdb} (RDB files, for {@code bloomery import}). Every other package (dispatch, the
 * command families, state, keyspace, the protocol, the ports) is the server's own.
 */
module io.bloomery.server {
  requires io.bloomery.core;
  requires io.bloomery.guard;
  requires java.management;
  requires jdk.unsupported;
  requires io.netty.common;
  requires io.netty.buffer;
  requires io.netty.transport;
  requires io.netty.codec;
  requires io.netty.codec.http;
  requires io.netty.handler;
  requires io.netty.transport.classes.epoll;
  requires io.netty.transport.classes.io_uring;
  requires micrometer.core;
  requires micrometer.registry.prometheus;
  requires io.prometheus.metrics.model;
  requires org.slf4j;
  requires ch.qos.logback.classic;

  exports io.bloomery.server;
  exports io.bloomery.server.persistence;
  exports io.bloomery.server.rdb;

  // a cluster node (cluster-enabled yes), provided by the cluster module when it is there
  uses io.bloomery.server.ClusterNode.Provider;
}
