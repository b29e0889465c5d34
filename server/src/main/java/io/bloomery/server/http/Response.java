package io.bloomery.server.http;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What an {@link Endpoint} answers. The listener adds {@code Content-Length} (also to the answer to a
 * {@code HEAD}, which carries no body) and {@code Connection}.
 *
 * @param status the status code
 * @param contentType the {@code Content-Type} header
 * @param body the body (not copied: not to be changed afterwards)
 * @param headers further headers, in the order they are sent
 */
public record Response(int status, String contentType, byte[] body, Map<String, String> headers) {
  /** The content type of plain-text answers. */
  public static final String TEXT = "text/plain; charset=utf-8";

  public Response {
    headers = Collections.unmodifiableMap(new LinkedHashMap<>(headers));
  }

  /** {@code body} as UTF-8, with no further headers. */
  public static Response of(int status, String contentType, String body) {
    return new Response(status, contentType, body.getBytes(StandardCharsets.UTF_8), Map.of());
  }

  /** A plain-text answer. */
  public static Response text(int status, String body) {
    return of(status, TEXT, body);
  }

  /** This answer with one more header (replacing one of the same name). */
  public Response with(String name, String value) {
    Map<String, String> more = new LinkedHashMap<>(headers);
    more.put(name, value);
    return new Response(status, contentType, body, more);
  }
}
