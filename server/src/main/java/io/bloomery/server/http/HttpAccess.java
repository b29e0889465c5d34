package io.bloomery.server.http;

import io.bloomery.server.command.Errors;
import io.bloomery.server.state.Settings;
import io.bloomery.server.state.acl.Acl;
import io.bloomery.server.state.acl.AclUser;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * Who may call the HTTP port's guarded endpoints (the dashboard, {@code /metrics}).
 *
 * <p>With {@code requirepass} set, a request passes with HTTP basic authentication whose password is the server's
 * password (any user name, as {@code AUTH password} needs none), or with {@code Authorization: Bearer <password>}
 * for scrapers that send a token. {@code --http-auth} narrows that to {@code basic} or {@code token} (default
 * {@code both}); a request with the other scheme is refused as if it carried no password. The refusal is a 401
 * whose challenge names the scheme that is accepted ({@code Basic} unless only tokens are, so that browsers still
 * prompt).
 *
 * <p>With ACL users, basic authentication whose user name is an ACL user other than {@code default} passes with
 * that user's password if the user is on and may run {@code INFO} (the pages show what INFO shows); any other user
 * name, and a bearer token, stand for the default user, whose password is {@code requirepass} (or what
 * {@code ACL SETUSER default} gave it).
 *
 * <p>Without a password, protected mode (on by default) is the RESP port's rule applied to HTTP: a client that is
 * not on the loopback interface is answered 403 with the RESP port's {@code DENIED} text; loopback clients pass.
 * With protected mode off every request passes.
 *
 * <p>The settings are read per request, so {@code CONFIG SET requirepass} applies at once; the password is compared
 * in constant time. Thread-safe.
 */
public final class HttpAccess {
  static final String REALM = "bloomery";

  private static final List<byte[]> INFO = List.of("info".getBytes(StandardCharsets.ISO_8859_1));

  private final Settings settings;
  private final Acl acl;
  private final LongAdder denied = new LongAdder();

  /** Access by {@code requirepass} alone. */
  public HttpAccess(Settings settings) {
    this(settings, null);
  }

  /** Access by the ACL's users ({@code null}: by {@code requirepass} alone). */
  public HttpAccess(Settings settings, Acl acl) {
    this.settings = settings;
    this.acl = acl;
  }

  /** {@code null} if {@code request} may proceed, else the answer that refuses it (401 or 403). */
  Response refusal(Request request) {
    String password = settings.requirepass();
    boolean open = acl == null ? password == null || password.isEmpty() : acl.defaultUser().nopass();
    if (open) {
      if (settings.protectedMode() && (request.peer() == null || !request.peer().isLoopbackAddress())) {
        denied.increment();
        return Response.text(403, Errors.DENIED + "\n");
      }
      return null;
    }
    String mode = settings.httpAuth();
    String offered = offeredPassword(request.authorization(), mode);
    if (offered != null && passes(offeredUser(request.authorization(), mode), offered, password)) {
      return null;
    }
    return Response.text(401, "authentication required\n").with("WWW-Authenticate", "token".equals(mode)
        ? "Bearer realm=\"" + REALM + "\"" : "Basic realm=\"" + REALM + "\", charset=\"UTF-8\"");
  }

  private boolean passes(String user, String offered, String password) {
    byte[] bytes = offered.getBytes(StandardCharsets.UTF_8);
    if (acl == null) {
      return MessageDigest.isEqual(bytes, password.getBytes(StandardCharsets.UTF_8));
    }
    AclUser named = user == null || user.equals("default") ? null : acl.user(user);
    if (named == null) {
      return acl.authenticate("default", bytes) != null;
    }
    AclUser u = acl.authenticate(user, bytes);
    return u != null && acl.dryRun(u, "info", INFO, 0, 0, 0) == null;
  }

  /** The user name of a Basic {@code Authorization} header that {@code mode} accepts, or {@code null}. */
  static String offeredUser(String header, String mode) {
    String credentials = basicCredentials(header, mode);
    return credentials == null ? null : credentials.substring(0, credentials.indexOf(':'));
  }

  /** Requests protected mode has refused since the start. */
  public long denied() {
    return denied.sum();
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
    String basic = basicCredentials(trimmed, mode);
    return basic == null ? null : basic.substring(basic.indexOf(':') + 1);
  }

  /** The decoded {@code user:password} of a Basic header that {@code mode} accepts, or {@code null}. */
  private static String basicCredentials(String header, String mode) {
    if (header == null) {
      return null;
    }
    String trimmed = header.trim();
    int space = trimmed.indexOf(' ');
    if (space < 0 || !trimmed.substring(0, space).equalsIgnoreCase("Basic") || "token".equals(mode)) {
      return null;
    }
    String credentials = trimmed.substring(space + 1).trim();
    byte[] decoded;
    try {
      decoded = Base64.getDecoder().decode(credentials);
    } catch (IllegalArgumentException e) {
      return null;
    }
    String text = new String(decoded, StandardCharsets.UTF_8);
    return text.indexOf(':') < 0 ? null : text;
  }
}
