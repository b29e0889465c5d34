package io.bloomery.server.state.acl;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;

/**
 * One ACL user. Its rules are an immutable {@link Rules} value swapped whole by {@code ACL SETUSER}, so a
 * connection authenticated as the user sees the change at its next command and never half of it.
 */
public final class AclUser {
  private final String name;
  private volatile Rules rules;

  /**
   * A user's flags, password hashes (SHA-256, lower-case hex, in the order added) and selectors (the root one first).
   * {@code unrestricted}: every command on every key, the check the dispatcher skips.
   */
  record Rules(boolean enabled, boolean nopass, boolean skipSanitize, List<String> passwords, List<Selector> selectors,
      boolean unrestricted) {}

  AclUser(String name, Rules rules) {
    this.name = name;
    this.rules = rules;
  }

  public String name() {
    return name;
  }

  Rules rules() {
    return rules;
  }

  void rules(Rules value) {
    rules = value;
  }

  /** Whether this user may run every command on every key (the dispatcher then checks nothing). */
  public boolean unrestricted() {
    return rules.unrestricted();
  }

  /** Whether the user needs no password ({@code nopass}). */
  public boolean nopass() {
    return rules.nopass();
  }

  /**
   * Whether the user is on and needs no password (connections then start authenticated as it); {@code false} for
   * the default user of an ACL whose command table is not installed yet (it has no rules, so it opens nothing).
   */
  public boolean openWithoutPassword() {
    Rules r = rules;
    return r != null && r.enabled() && r.nopass();
  }

  /** A fresh user's rules: off, no passwords, no keys, no channels, no commands. */
  static Rules fresh(AclCommands commands) {
    return new Rules(false, false, false, List.of(), List.of(new Selector(commands)), false);
  }

  /** Applies {@code ops} in order to a copy of the rules; the user is unchanged if one fails. */
  Rules applied(List<String> ops) throws Selector.RuleException {
    Rules r = rules;
    boolean enabled = r.enabled();
    boolean nopass = r.nopass();
    boolean skipSanitize = r.skipSanitize();
    List<String> passwords = new ArrayList<>(r.passwords());
    List<Selector> selectors = new ArrayList<>();
    for (Selector s : r.selectors()) {
      selectors.add(s.copy());
    }
    for (String op : ops) {
      String lower = op.toLowerCase(Locale.ROOT);
      if (op.isEmpty()) {
        continue;
      }
      switch (lower) {
        case "on" -> enabled = true;
        case "off" -> enabled = false;
        case "skip-sanitize-payload" -> skipSanitize = true;
        case "sanitize-payload" -> skipSanitize = false;
        case "nopass" -> {
          nopass = true;
          passwords.clear();
        }
        case "resetpass" -> {
          nopass = false;
          passwords.clear();
        }
        case "clearselectors" -> selectors.subList(1, selectors.size()).clear();
        case "reset" -> {
          nopass = false;
          passwords.clear();
          enabled = false;
          skipSanitize = false;
          AclCommands commands = selectors.getFirst().commandsTable();
          selectors.clear();
          selectors.add(new Selector(commands));
        }
        default -> {
          char c0 = op.charAt(0);
          if (c0 == '>' || c0 == '#') {
            String hash = c0 == '>' ? hash(op.substring(1)) : checkedHash(op.substring(1));
            if (!passwords.contains(hash)) {
              passwords.add(hash);
            }
            nopass = false;
          } else if (c0 == '<' || c0 == '!') {
            String hash = c0 == '<' ? hash(op.substring(1)) : checkedHash(op.substring(1));
            if (!passwords.remove(hash)) {
              throw new Selector.RuleException("The password you are trying to remove from the user does not exist");
            }
          } else if (c0 == '(' && op.endsWith(")") && op.length() >= 2) {
            Selector s = new Selector(r.selectors().getFirst().commandsTable());
            for (String inner : op.substring(1, op.length() - 1).trim().split("[ \t]+")) {
              if (!inner.isEmpty()) {
                s.apply(inner);
              }
            }
            selectors.add(s);
          } else {
            selectors.getFirst().apply(op);
          }
        }
      }
    }
    Selector root = selectors.getFirst();
    boolean unrestricted = root.allCommands && root.allKeys;
    return new Rules(enabled, nopass, skipSanitize, List.copyOf(passwords), List.copyOf(selectors), unrestricted);
  }

  /** SHA-256 of a password as lower-case hex, the form Redis stores and shows. */
  static String hash(String password) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(password.getBytes(StandardCharsets.ISO_8859_1));
      return HexFormat.of().formatHex(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from the JDK", e);
    }
  }

  private static String checkedHash(String hash) throws Selector.RuleException {
    boolean ok = hash.length() == 64;
    for (int i = 0; ok && i < hash.length(); i++) {
      char ch = hash.charAt(i);
      ok = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
    }
    if (!ok) {
      throw new Selector.RuleException(
          "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters");
    }
    return hash;
  }

  /** Constant-time check of {@code password} against the user's hashes (every hash compared, none skipped). */
  boolean passwordMatches(byte[] password) {
    Rules r = rules;
    if (r.nopass()) {
      return true;
    }
    byte[] candidate;
    try {
      candidate = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(password))
          .getBytes(StandardCharsets.ISO_8859_1);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from the JDK", e);
    }
    boolean match = false;
    for (String stored : r.passwords()) {
      match |= MessageDigest.isEqual(candidate, stored.getBytes(StandardCharsets.ISO_8859_1));
    }
    return match;
  }

  /** The user as {@code ACL LIST} and the ACL file show it, after {@code user NAME }. */
  String describe() {
    Rules r = rules;
    StringBuilder sb = new StringBuilder();
    sb.append(r.enabled() ? "on " : "off ");
    if (r.nopass()) {
      sb.append("nopass ");
    }
    sb.append(r.skipSanitize() ? "skip-sanitize-payload " : "sanitize-payload ");
    for (String p : r.passwords()) {
      sb.append('#').append(p).append(' ');
    }
    List<Selector> selectors = r.selectors();
    sb.append(selectors.getFirst().describe());
    for (int i = 1; i < selectors.size(); i++) {
      sb.append(" (").append(selectors.get(i).describe()).append(')');
    }
    return sb.toString();
  }
}
