/**
 * The HTTP port ({@code --http-port}): {@link io.bloomery.server.http.HttpListener} serves the server's
 * {@link io.bloomery.server.http.Endpoint}s ({@code /health}, {@code /metrics}, the dashboard) over Netty, many
 * connections at once, with bounded requests, timeouts and a connection cap; {@link
 * io.bloomery.server.http.HttpAccess} applies {@code requirepass} and protected mode to it.
 */
package io.bloomery.server.http;
