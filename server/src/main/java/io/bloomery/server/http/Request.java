package io.bloomery.server.http;

import io.netty.handler.codec.http.QueryStringDecoder;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;

/**
 * What an {@link Endpoint} sees of an HTTP request.
 *
 * @param method the method, upper case as sent ({@code GET}, {@code HEAD}, ...)
 * @param path the path with its percent-escapes decoded ({@code /key})
 * @param rawQuery the query as sent, without the {@code ?}; {@code null} if the target has none
 * @param authorization the {@code Authorization} header, {@code null} if absent
 * @param peer the client's address
 */
public record Request(String method, String path, String rawQuery, String authorization, InetAddress peer) {
  /**
   * A request for {@code target}: the request line's origin form ({@code /path?query}), or its absolute form
   * ({@code http://host/path?query}, as proxies send it), whose host is ignored.
   *
   * @throws IllegalArgumentException if the target is not a URI, or its path holds a malformed percent-escape
   */
  static Request of(String method, String target, String authorization, InetAddress peer) {
    String origin = target;
    if (!target.startsWith("/")) {
      try {
        URI uri = new URI(target);
        String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
        origin = uri.getRawQuery() == null ? path : path + "?" + uri.getRawQuery();
      } catch (URISyntaxException e) {
        throw new IllegalArgumentException("not a request target: " + e.getMessage(), e);
      }
    }
    QueryStringDecoder decoder = new QueryStringDecoder(origin);
    return new Request(method, decoder.path(), origin.indexOf('?') < 0 ? null : decoder.rawQuery(), authorization,
        peer);
  }
}
