package io.bloomery.server.state.acl;

import io.bloomery.server.keyspace.Glob;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One ACL selector as Redis keeps it: the commands it allows (a bit per {@link AclCommands} id, plus the "future
 * commands" bit that {@code +@all} sets), the command rules in the order given (what {@code ACL LIST} shows), key
 * patterns with their read/write permissions, and channel patterns. Mutable while a rule list is applied to a copy;
 * a published user's selectors are never changed.
 */
final class Selector {
  /** A key pattern and the access it grants ({@link AclCommands#READ} | {@link AclCommands#WRITE}). */
  record KeyPattern(String pattern, byte[] bytes, int access) {
    String describe() {
      return switch (access) {
        case AclCommands.READ -> "%R~" + pattern;
        case AclCommands.WRITE -> "%W~" + pattern;
        default -> "~" + pattern;
      };
    }
  }

  /** Why a rule was refused; the message is Redis's. */
  static final class RuleException extends Exception {
    RuleException(String message) {
      super(message, null, false, false);
    }
  }

  static final String SYNTAX = "Syntax error";
  static final String UNKNOWN = "Unknown command or category name in ACL";

  private final AclCommands commands;
  boolean allKeys;
  boolean allChannels;
  boolean allCommands;
  private boolean future;
  private long[] allowed;
  private String rules = "";
  final List<KeyPattern> keys = new ArrayList<>();
  final List<String> channels = new ArrayList<>();
  private Map<Integer, List<String>> firstArgs;

  Selector(AclCommands commands) {
    this.commands = commands;
    this.allowed = new long[(commands.count() + 63) / 64];
  }

  AclCommands commandsTable() {
    return commands;
  }

  Selector copy() {
    Selector s = new Selector(commands);
    s.allKeys = allKeys;
    s.allChannels = allChannels;
    s.allCommands = allCommands;
    s.future = future;
    s.allowed = allowed.clone();
    s.rules = rules;
    s.keys.addAll(keys);
    s.channels.addAll(channels);
    if (firstArgs != null) {
      s.firstArgs = new HashMap<>();
      firstArgs.forEach((k, v) -> s.firstArgs.put(k, new ArrayList<>(v)));
    }
    return s;
  }

  /** Applies one selector rule ({@code ~pattern}, {@code +cmd}, {@code -@cat}, {@code allkeys}, ...). */
  void apply(String op) throws RuleException {
    String lower = op.toLowerCase(Locale.ROOT);
    switch (lower) {
      case "allkeys", "~*" -> {
        allKeys = true;
        keys.clear();
        return;
      }
      case "resetkeys" -> {
        allKeys = false;
        keys.clear();
        return;
      }
      case "allchannels", "&*" -> {
        allChannels = true;
        channels.clear();
        return;
      }
      case "resetchannels" -> {
        allChannels = false;
        channels.clear();
        return;
      }
      case "allcommands", "+@all" -> {
        Arrays.fill(allowed, -1L);
        allCommands = true;
        future = true;
        rules = "";
        firstArgs = null;
        return;
      }
      case "nocommands", "-@all" -> {
        Arrays.fill(allowed, 0L);
        allCommands = false;
        future = false;
        rules = "";
        firstArgs = null;
        return;
      }
      default -> {
      }
    }
    if (op.isEmpty()) {
      throw new RuleException(SYNTAX);
    }
    char c0 = op.charAt(0);
    if (c0 == '~' || c0 == '%') {
      addKeyPattern(op);
    } else if (c0 == '&') {
      if (allChannels) {
        throw new RuleException("Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and "
            + "does not have any effect. Try 'resetchannels' to start with an empty list of channels");
      }
      String pattern = op.substring(1);
      if (hasSpaces(pattern)) {
        throw new RuleException(SYNTAX);
      }
      if (!channels.contains(pattern)) {
        channels.add(pattern);
      }
    } else if ((c0 == '+' || c0 == '-') && op.length() > 1 && op.charAt(1) == '@') {
      long bit = AclCommands.categoryBit(op.substring(2));
      if (bit == 0) {
        throw new RuleException(UNKNOWN);
      }
      updateRules(lower, c0 == '+');
      for (int id = 0; id < commands.count(); id++) {
        if ((commands.categories(id) & bit) != 0) {
          change(id, c0 == '+');
        }
      }
    } else if (c0 == '+') {
      allowCommand(op.substring(1));
    } else if (c0 == '-') {
      int id = commands.id(op.substring(1));
      if (id < 0) {
        throw new RuleException(UNKNOWN);
      }
      change(id, false);
      updateRules("-" + commands.name(id), false);
    } else {
      throw new RuleException(SYNTAX);
    }
  }

  private void addKeyPattern(String op) throws RuleException {
    if (allKeys) {
      throw new RuleException("Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does "
          + "not have any effect. Try 'resetkeys' to start with an empty list of patterns");
    }
    int access = 0;
    int offset = 1;
    if (op.charAt(0) == '%') {
      boolean ok = true;
      for (; offset < op.length(); offset++) {
        char ch = Character.toUpperCase(op.charAt(offset));
        if (ch == 'R' && (access & AclCommands.READ) == 0) {
          access |= AclCommands.READ;
        } else if (ch == 'W' && (access & AclCommands.WRITE) == 0) {
          access |= AclCommands.WRITE;
        } else if (op.charAt(offset) == '~') {
          offset++;
          break;
        } else {
          ok = false;
          break;
        }
      }
      if (access == 0 || !ok) {
        throw new RuleException(SYNTAX);
      }
    } else {
      access = AclCommands.READ | AclCommands.WRITE;
    }
    String pattern = op.substring(offset);
    if (hasSpaces(pattern)) {
      throw new RuleException(SYNTAX);
    }
    for (int i = 0; i < keys.size(); i++) {
      if (keys.get(i).pattern().equals(pattern)) {
        keys.set(i, new KeyPattern(pattern, keys.get(i).bytes(), keys.get(i).access() | access));
        allKeys = false;
        return;
      }
    }
    keys.add(new KeyPattern(pattern, pattern.getBytes(StandardCharsets.ISO_8859_1), access));
    allKeys = false;
  }

  private void allowCommand(String name) throws RuleException {
    int bar = name.lastIndexOf('|');
    if (bar < 0) {
      int id = commands.id(name);
      if (id < 0) {
        throw new RuleException(UNKNOWN);
      }
      change(id, true);
      updateRules("+" + commands.name(id), true);
      return;
    }
    int id = commands.id(name.substring(0, bar));
    if (id < 0) {
      throw new RuleException(UNKNOWN);
    }
    if (commands.parent(id) >= 0) {
      throw new RuleException("Allowing first-arg of a subcommand is not supported");
    }
    String sub = name.substring(bar + 1);
    if (sub.isEmpty()) {
      throw new RuleException(SYNTAX);
    }
    if (commands.container(id)) {
      int subId = commands.id(name);
      if (subId < 0) {
        throw new RuleException(UNKNOWN);
      }
      change(subId, true);
    } else {
      if (firstArgs == null) {
        firstArgs = new HashMap<>();
      }
      List<String> args = firstArgs.computeIfAbsent(id, k -> new ArrayList<>());
      if (args.stream().noneMatch(sub::equalsIgnoreCase)) {
        args.add(sub);
      }
    }
    updateRules("+" + name.toLowerCase(Locale.ROOT), true);
  }

  /** Sets a command's bit and its subcommands' (Redis's ACLChangeSelectorPerm). */
  private void change(int id, boolean allow) {
    set(id, allow);
    if (firstArgs != null) {
      firstArgs.remove(id);
    }
    for (int sub : commands.subcommandsOf(id)) {
      set(sub, allow);
    }
  }

  private void set(int id, boolean allow) {
    if (allow) {
      allowed[id >>> 6] |= 1L << id;
    } else {
      allowed[id >>> 6] &= ~(1L << id);
      allCommands = false;
    }
  }

  /**
   * Appends {@code rule} (lower case, with its sign) to the rule list after removing earlier rules for the same
   * command or category, and the earlier rules for its subcommands (Redis's ACLUpdateCommandRules).
   */
  private void updateRules(String rule, boolean allow) {
    String body = rule.substring(1);
    StringBuilder kept = new StringBuilder();
    if (!rules.isEmpty()) {
      for (String existing : rules.split(" ")) {
        String e = existing.substring(1);
        boolean same = e.equals(body) || (e.length() > body.length() && e.startsWith(body)
            && e.charAt(body.length()) == '|');
        if (!same) {
          kept.append(kept.isEmpty() ? "" : " ").append(existing);
        }
      }
    }
    kept.append(kept.isEmpty() ? "" : " ").append(allow ? '+' : '-').append(body);
    rules = kept.toString();
  }

  /** The command rules as ACL GETUSER shows them: {@code +@all} or {@code -@all}, then the rules in order. */
  String describeCommands() {
    return (future ? "+@all" : "-@all") + (rules.isEmpty() ? "" : " " + rules);
  }

  /** Key, channel and command rules as ACL LIST shows them. */
  String describe() {
    StringBuilder sb = new StringBuilder();
    if (allKeys) {
      sb.append("~* ");
    } else {
      for (KeyPattern k : keys) {
        sb.append(k.describe()).append(' ');
      }
    }
    if (allChannels) {
      sb.append("&* ");
    } else {
      sb.append("resetchannels ");
      for (String ch : channels) {
        sb.append('&').append(ch).append(' ');
      }
    }
    return sb.append(describeCommands()).toString();
  }

  /** The key patterns as ACL GETUSER's {@code keys} field shows them. */
  String describeKeys() {
    if (allKeys) {
      return "~*";
    }
    StringBuilder sb = new StringBuilder();
    for (KeyPattern k : keys) {
      sb.append(sb.isEmpty() ? "" : " ").append(k.describe());
    }
    return sb.toString();
  }

  /** The channel patterns as ACL GETUSER's {@code channels} field shows them. */
  String describeChannels() {
    if (allChannels) {
      return "&*";
    }
    StringBuilder sb = new StringBuilder();
    for (String ch : channels) {
      sb.append(sb.isEmpty() ? "" : " ").append('&').append(ch);
    }
    return sb.toString();
  }

  /** Whether the selector allows command {@code id} whose arguments are {@code argv} (first-arg rules). */
  boolean allowsCommand(int id, List<byte[]> argv) {
    if (allCommands || commands.noAuth(id) || (allowed[id >>> 6] & (1L << id)) != 0) {
      return true;
    }
    List<String> args = firstArgs == null ? null : firstArgs.get(id);
    if (args == null || argv.size() < 2) {
      return false;
    }
    String first = new String(argv.get(commands.parent(id) >= 0 ? 2 : 1), StandardCharsets.ISO_8859_1);
    return args.stream().anyMatch(first::equalsIgnoreCase);
  }

  /** Whether the selector allows {@code access} ({@link AclCommands#READ}/{@code WRITE} bits) to {@code key}. */
  boolean allowsKey(byte[] key, int access) {
    if (allKeys) {
      return true;
    }
    for (KeyPattern k : keys) {
      if ((k.access() & access) == access && Glob.matches(k.bytes(), key)) {
        return true;
      }
    }
    return false;
  }

  static boolean hasSpaces(String s) {
    for (int i = 0; i < s.length(); i++) {
      char ch = s.charAt(i);
      if (ch == 0 || ch == ' ' || (ch >= '\t' && ch <= '\r')) {
        return true;
      }
    }
    return false;
  }
}
