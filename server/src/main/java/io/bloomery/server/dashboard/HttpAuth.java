package io.bloomery.server.dashboard;

import com.sun.net.httpserver.Authenticator;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpPrincipal;
import io.bloomery.server.command.Settings;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;

/**
 * The HTTP side of {@code requirepass}: a request passes with HTTP basic authentication whose password is the
 * server's password (any user name, as {@code AUTH password} needs none), or with {@code Authorization: Bearer
 * <password>} for scrapers that send a token. {@code --http-auth} narrows that to {@code basic} or {@code token}
 * (default {@code both}); a request with the other scheme is refused as if it carried no password. Without a
 * password every request passes. The password is read per request, so {@code CONFIG SET requirepass} applies at
 * once; it is compared in constant time. The 401 challenge names the scheme that is accepted ({@code Basic} unless
 * only tokens are, so that browsers still prompt).
 */
final class HttpAuth extends Authenticator {
  static final String REALM = "bloomery";

  private final Settings settings;

  HttpAuth(Settings settings) {
    this.settings = settings;
  }

  @Override
  public Result authenticate(HttpExchange exchange) {
    String password = settings.requirepass;
    if (password == null || password.isEmpty()) {
      return new Success(new HttpPrincipal("default", REALM));
    }
    String mode = settings.httpAuth;
    String offered = offeredPassword(exchange.getRequestHeaders().getFirst("Authorization"), mode);
    if (offered != null && MessageDigest.isEqual(offered.getBytes(StandardCharsets.UTF_8),
        password.getBytes(StandardCharsets.UTF_8))) {
      return new Success(new HttpPrincipal("default", REALM));
    }
    exchange.getResponseHeaders().set("WWW-Authenticate", "token".equals(mode) ? "Bearer realm=\"" + REALM + "\""
        : "Basic realm=\"" + REALM + "\", charset=\"UTF-8\"");
    return new Retry(401);
  }

  /** The password in a Basic or Bearer {@code Authorization} header; {@code null} if none or malformed. */
  static String offeredPassword(String header) {
    return offeredPassword(header, "both");
  }

  /**
   * The password in an {@code Authorization} header whose scheme {@code mode} ({@code basic}, {@code token} or
   * {@code both}) accepts; {@code null} if none, malformed or of a scheme not accepted.
   */
  static String offeredPassword(String header, String mode) {
    if (header == null) {
      return null;
    }
    String trimmed = header.trim();
    int space = trimmed.indexOf(' ');
    if (space < 0) {
      return null;
    }
    String scheme = trimmed.substring(0, space);
    String credentials = trimmed.substring(space + 1).trim();
    if (scheme.equalsIgnoreCase("Bearer")) {
      return "basic".equals(mode) ? null : credentials;
    }
    if (!scheme.equalsIgnoreCase("Basic") || "token".equals(mode)) {
      return null;
    }
    byte[] decoded;
    try {
      decoded = Base64.getDecoder().decode(credentials);
    } catch (IllegalArgumentException e) {
      return null;
    }
    String text = new String(decoded, StandardCharsets.UTF_8);
    int colon = text.indexOf(':');
    return colon < 0 ? null : text.substring(colon + 1);
  }
}
