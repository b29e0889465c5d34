/**
 * The RESP port: {@link io.bloomery.server.net.Transport} listens (io_uring, epoll or NIO, one event loop per core)
 * and {@link io.bloomery.server.net.ClientHandler} runs one connection's commands in order through the dispatcher,
 * holding each reply until its journal records are durable, with bounded output per client. Start here to follow a
 * request from its bytes to its reply.
 */
package io.bloomery.server.net;
