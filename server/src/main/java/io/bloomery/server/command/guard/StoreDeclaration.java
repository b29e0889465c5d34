package io.bloomery.server.command.guard;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A store the operator declared ({@code --store NAME=URL}, optionally {@code --store-table NAME=TABLE.COLUMN}):
 * clients name it in GUARD.RESERVE and never see its URL. The URL is a JDBC PostgreSQL URL or {@code sqlite:FILE};
 * credentials come from the URL, the config file or the environment ({@code BLOOMERY_STORE_<NAME>_USER},
 * {@code BLOOMERY_STORE_<NAME>_PASSWORD}, added to the URL when it names none).
 *
 * <p>Without a table each guarded key gets its own table of the guard's layout in the store. With
 * {@code TABLE.COLUMN} the keys read someone else's table, read-only; with {@code TABLE} alone (no column) the keys
 * write that table, which then has the guard's layout ({@code id, digest, item}).
 *
 * @param name the name clients use ({@code [A-Za-z0-9_-]{1,64}})
 * @param url the connection URL with its credentials; never shown (see {@link #redacted()})
 * @param table the declared table, or {@code null} for one table per key
 * @param column the read-only source's column, or {@code null}
 * @param secrets the credential values to blank out of any text shown
 */
public record StoreDeclaration(String name, String url, String table, String column, List<String> secrets) {
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");
  private static final Pattern PASSWORD_PARAM = Pattern.compile("(?i)([?&;](?:password|pass|pwd)=)([^&;]*)");
  private static final Pattern USER_INFO = Pattern.compile("(//[^/@:?]*:)([^@/?]*)(@)");

  public StoreDeclaration {
    secrets = List.copyOf(secrets);
  }

  /** Whether this is a SQLite file ({@code sqlite:FILE}); else PostgreSQL. */
  public boolean sqlite() {
    return url.startsWith("sqlite:");
  }

  /** Whether keys on this store only read (someone else's table). */
  public boolean readOnly() {
    return column != null;
  }

  /** The URL with every credential replaced by {@code ***}. */
  public String redacted() {
    return redact(url);
  }

  /** {@code text} with this store's credentials (and any password-looking URL part) replaced by {@code ***}. */
  public String redact(String text) {
    if (text == null) {
      return "";
    }
    String out = text;
    for (String s : secrets) {
      if (!s.isEmpty()) {
        out = out.replace(s, "***");
      }
    }
    out = PASSWORD_PARAM.matcher(out).replaceAll(m -> Matcher.quoteReplacement(m.group(1) + "***"));
    return USER_INFO.matcher(out).replaceAll(m -> Matcher.quoteReplacement(m.group(1) + "***" + m.group(3)));
  }

  /**
   * Parses the {@code store} and {@code store-table} values with the environment's credentials.
   *
   * @throws IllegalArgumentException with a one-line message (that never contains the URL) for a bad declaration
   */
  public static List<StoreDeclaration> parse(List<String> stores, List<String> tables, Map<String, String> env) {
    Map<String, String> urls = new java.util.LinkedHashMap<>();
    for (String s : stores) {
      String[] nv = pair(s, "store", "NAME=URL");
      if (!nv[1].startsWith("jdbc:postgresql:") && !nv[1].startsWith("sqlite:")) {
        throw new IllegalArgumentException("store '" + nv[0] + "': the URL must be a JDBC PostgreSQL URL"
            + " (jdbc:postgresql://host:port/db?user=...) or sqlite:FILE");
      }
      if (nv[1].equals("sqlite:")) {
        throw new IllegalArgumentException("store '" + nv[0] + "': sqlite: needs a file name");
      }
      if (urls.putIfAbsent(nv[0], nv[1]) != null) {
        throw new IllegalArgumentException("store '" + nv[0] + "' is declared twice");
      }
    }
    Map<String, String[]> tableOf = new java.util.HashMap<>();
    for (String t : tables) {
      String[] nv = pair(t, "store-table", "NAME=TABLE.COLUMN");
      if (!urls.containsKey(nv[0])) {
        throw new IllegalArgumentException("store-table names store '" + nv[0] + "', which no --store declares");
      }
      String spec = nv[1];
      int dot = spec.lastIndexOf('.');
      String[] tc = dot < 0 ? new String[] {spec, null}
          : new String[] {spec.substring(0, dot), spec.substring(dot + 1)};
      if (tc[0].isEmpty() || (tc[1] != null && tc[1].isEmpty())) {
        throw new IllegalArgumentException("store-table '" + t.split("=", 2)[0] + "': expected TABLE.COLUMN"
            + " (read-only) or TABLE (the guard's own layout), not '" + spec + "'");
      }
      if (tableOf.putIfAbsent(nv[0], tc) != null) {
        throw new IllegalArgumentException("store-table for store '" + nv[0] + "' is given twice");
      }
    }
    List<StoreDeclaration> out = new ArrayList<>();
    for (Map.Entry<String, String> e : urls.entrySet()) {
      String name = e.getKey();
      String url = e.getValue();
      List<String> secrets = new ArrayList<>();
      String prefix = "BLOOMERY_STORE_" + name.toUpperCase(Locale.ROOT).replace('-', '_') + "_";
      String user = env.get(prefix + "USER");
      String password = env.get(prefix + "PASSWORD");
      if (!url.startsWith("sqlite:")) {
        if (user != null && !url.matches("(?i).*[?&]user=.*")) {
          url = url + (url.contains("?") ? "&" : "?") + "user=" + user;
        }
        if (password != null && !url.matches("(?i).*[?&]password=.*")) {
          url = url + (url.contains("?") ? "&" : "?") + "password=" + password;
        }
        Matcher m = PASSWORD_PARAM.matcher(url);
        while (m.find()) {
          secrets.add(m.group(2));
        }
        Matcher u = USER_INFO.matcher(url);
        while (u.find()) {
          secrets.add(u.group(2));
        }
      }
      if (password != null) {
        secrets.add(password);
      }
      secrets.removeIf(s -> s.length() < 3); // too short to replace without mangling text; the patterns still do
      String[] tc = tableOf.get(name);
      out.add(new StoreDeclaration(name, url, tc == null ? null : tc[0], tc == null ? null : tc[1], secrets));
    }
    return out;
  }

  private static String[] pair(String value, String option, String form) {
    int eq = value.indexOf('=');
    if (eq <= 0 || eq == value.length() - 1) {
      throw new IllegalArgumentException(option + " expects " + form + ", not '" + before(value) + "...'");
    }
    String name = value.substring(0, eq);
    if (!NAME.matcher(name).matches()) {
      throw new IllegalArgumentException(option + ": store name '" + before(name)
          + "' must be 1-64 of A-Z a-z 0-9 _ -");
    }
    return new String[] {name, value.substring(eq + 1)};
  }

  /** The start of a value, short enough never to reach a URL's credentials. */
  private static String before(String s) {
    int cut = Math.min(s.length(), 24);
    int eq = s.indexOf('=');
    if (eq >= 0 && eq < cut) {
      cut = eq;
    }
    return s.substring(0, cut);
  }

  @Override
  public String toString() {
    return "store '" + name + "' " + redacted() + (table == null ? "" : " table " + table
        + (column == null ? "" : "." + column + " (read-only)"));
  }
}
