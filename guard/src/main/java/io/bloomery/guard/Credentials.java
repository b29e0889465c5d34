package io.bloomery.guard;

import java.util.IdentityHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one place credentials are taken out of text before it reaches a message, a log line or an
 * exception: every store URL, driver message and pool message passes through {@link #redact}.
 *
 * <p>Redacted, whatever the scheme: the password of URL user info ({@code scheme://user:secret@host}
 * and the bare {@code user:secret@host} that drivers echo), and the values of
 * password-like parameters in a query string or a property list ({@code password=}, {@code
 * sslpassword=}, {@code pwd=}, {@code passwd=}, {@code pass=}, {@code secret=}, {@code token=},
 * {@code apikey=}/{@code api_key=}, {@code access_token=}), case-insensitive. User names and host
 * names stay: they are what a reader needs to see which store failed.
 */
public final class Credentials {
  /** What a removed secret is replaced with. */
  public static final String MASK = "***";

  private static final Pattern USER_INFO =
      Pattern.compile("(?<![\\w.+-])([\\w.%+-]*):([^\\s/?#@'\"]*)@");
  private static final Pattern PARAMETER = Pattern.compile(
      "(?i)((?:ssl)?password|passwd|pwd|pass|secret|token|api[_-]?key|access[_-]?token)"
          + "(\\s*[=:]\\s*)([^&;,\\s'\")}\\]]*)");

  private Credentials() {}

  /** {@code text} with every credential replaced by {@value #MASK}; null stays null. */
  public static String redact(String text) {
    if (text == null || text.isEmpty()) {
      return text;
    }
    String withoutUserInfo = USER_INFO.matcher(text).replaceAll(match ->
        match.group(2).isEmpty()
            ? Matcher.quoteReplacement(match.group()) // "user:@host": nothing to hide
            : Matcher.quoteReplacement(match.group(1) + ":" + MASK + "@"));
    return PARAMETER.matcher(withoutUserInfo).replaceAll(match ->
        match.group(3).isEmpty() || match.group(3).equals(MASK)
            ? Matcher.quoteReplacement(match.group())
            : Matcher.quoteReplacement(match.group(1) + match.group(2) + MASK));
  }

  /**
   * {@code failure} and its causes with every message redacted. Where no message needed it, the
   * original exception is returned; otherwise a copy chain of {@link Redacted} exceptions that keep
   * the original class name (in {@code toString}) and stack traces, so {@code --verbose} output
   * still shows where it failed.
   */
  public static Throwable redact(Throwable failure) {
    if (failure == null || !needsRedaction(failure, new IdentityHashMap<>())) {
      return failure;
    }
    return copy(failure, new IdentityHashMap<>());
  }

  private static boolean needsRedaction(Throwable t, Map<Throwable, Boolean> visited) {
    if (t == null || visited.put(t, Boolean.TRUE) != null) {
      return false;
    }
    String message = t.getMessage();
    if (message != null && !message.equals(redact(message))) {
      return true;
    }
    for (Throwable suppressed : t.getSuppressed()) {
      if (needsRedaction(suppressed, visited)) {
        return true;
      }
    }
    return needsRedaction(t.getCause(), visited);
  }

  private static Throwable copy(Throwable t, Map<Throwable, Boolean> onPath) {
    if (t == null || onPath.put(t, Boolean.TRUE) != null) {
      return null; // the end of the chain, or a cycle
    }
    Redacted redacted = new Redacted(t.getClass().getName(), redact(t.getMessage()),
        copy(t.getCause(), onPath));
    redacted.setStackTrace(t.getStackTrace());
    for (Throwable suppressed : t.getSuppressed()) {
      Throwable copied = copy(suppressed, onPath);
      if (copied != null) {
        redacted.addSuppressed(copied);
      }
    }
    return redacted;
  }

  /** A redacted copy of an exception; {@link #toString()} names the original class. */
  public static final class Redacted extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final String originalClass;

    Redacted(String originalClass, String message, Throwable cause) {
      super(message, cause, true, true);
      this.originalClass = originalClass;
    }

    /** The class of the exception this copies. */
    public String originalClass() {
      return originalClass;
    }

    @Override
    public String toString() {
      String message = getLocalizedMessage();
      return message == null ? originalClass : originalClass + ": " + message;
    }
  }
}
