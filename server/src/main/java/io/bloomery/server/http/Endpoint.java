package io.bloomery.server.http;

import java.util.function.Function;

/**
 * One route of the HTTP port.
 *
 * @param path the path it answers ({@code /metrics}); {@code null} for every path no other endpoint names
 * @param open whether anyone may call it; otherwise {@link HttpAccess} decides (password, protected mode)
 * @param inline whether it is computed on the connection's I/O thread: only for answers that never block and
 *     take microseconds ({@code /health}), so that they never wait behind a slow page; the others run on the
 *     listener's page threads
 * @param route the answer to a request (a {@code RuntimeException} becomes a 500)
 */
public record Endpoint(String path, boolean open, boolean inline, Function<Request, Response> route) {
  /** Open to every client and computed inline: for a cheap answer that tells nothing secret. */
  public static Endpoint open(String path, Function<Request, Response> route) {
    return new Endpoint(path, true, true, route);
  }

  /** Behind {@link HttpAccess}, computed on a page thread; {@code path} {@code null}: the fallback. */
  public static Endpoint guarded(String path, Function<Request, Response> route) {
    return new Endpoint(path, false, false, route);
  }
}
