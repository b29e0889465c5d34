package io.bloomery.server.http;

import io.netty.handler.codec.http.QueryStringDecoder;
import java.net.InetAddress;

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
   * A request for {@code target} (the request line's origin-form target, {@code /path?query}).
   *
   * @throws IllegalArgumentException if the path holds a malformed percent-escape
   */
  static Request of(String method, String target, String authorization, InetAddress peer) {
    QueryStringDecoder decoder = new QueryStringDecoder(target);
    int question = target.indexOf('?');
    return new Request(method, decoder.path(), question < 0 ? null : decoder.rawQuery(), authorization, peer);
  }
}
