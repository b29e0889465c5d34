package io.bloomery.guard;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one place credentials are taken out of text before it reaches a message, a log line or an
 * exception: every store URL, driver message and pool message passes through {@link #redact}.
 *
 * <p>Redacted, whatever the scheme: every value {@linkplain #remember remembered} as a secret (the
 * server's password, the stores' credentials) wherever it appears; the password of URL user info
 * ({@code scheme://user:secret@host} and the bare {@code user:secret@host} that drivers echo); and
 * the values of password-like parameters in a query string or a property list ({@code password=},
 * {@code sslpassword=}, {@code pwd=}, {@code passwd=}, {@code pass=}, {@code secret=}, {@code
 * token=}, {@code apikey=}/{@code api_key=}, {@code access_token=}, or {@code :} directly before
 * the value), case-insensitive. A parameter name followed by a colon and a space is prose ("without
 * a password: protected mode ...") and stays. User names and host names stay: they are what a
 * reader needs to see which store failed.
 */
public final class Credentials {
  /** What a removed secret is replaced with. */
  public static final String MASK = "***";

  private static final Pattern USER_INFO =
      Pattern.compile("(?<![\\w.+-])([\\w.%+-]*):([^\\s/?#@'\"]*)@");
  private static final Pattern PARAMETER = Pattern.compile(
      "(?i)((?:ssl)?password|passwd|pwd|pass|secret|token|api[_-]?key|access[_-]?token)"
          + "(\\s*=\\s*|:(?=\\S))([^&;,\\s'\")}\\]]*)");
  /** Values shorter than this are not remembered: masking them everywhere would mask ordinary words. */
  static final int SHORTEST_REMEMBERED = 4;
  private static final Set<String> REMEMBERED = ConcurrentHashMap.newKeySet();

  private Credentials() {}

  /**
   * Masks {@code secret} wherever it appears in text redacted from now on (a configured password, a
   * store's credential); values shorter than {@value #SHORTEST_REMEMBERED} characters, null or blank
   * ones are ignored.
   */
  public static void remember(String secret) {
    if (secret != null && !secret.isBlank() && secret.length() >= SHORTEST_REMEMBERED) {
      REMEMBERED.add(secret);
    }
  }

  /** {@code text} with every credential replaced by {@value #MASK}; null stays null. */
  public static String redact(String text) {
    if (text == null || text.isEmpty()) {
      return text;
    }
    String withoutValues = text;
    if (!REMEMBERED.isEmpty()) {
      List<String> longestFirst = new ArrayList<>(REMEMBERED);
      longestFirst.sort(Comparator.comparingInt(String::length).reversed()); // a secret inside another
      for (String secret : longestFirst) {
        withoutValues = withoutValues.replace(secret, MASK);
      }
    }
    String withoutUserInfo = USER_INFO.matcher(withoutValues).replaceAll(match ->
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
