package io.bloomery.server.state.acl;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * The server's ACL users, as Redis 8 defines them: the {@code default} user (whose password is {@code requirepass}),
 * users made by {@code ACL SETUSER} or read from the ACL file, the permission check the dispatcher runs for a user
 * that is not unrestricted, and the ACL log of denials. Thread-safe: changes are serialised on this object, and
 * readers see a user's rules whole.
 */
public final class Acl {
  /** How many entries {@code ACL LOG} keeps (Redis's {@code acllog-max-len} default). */
  static final int LOG_MAX = 128;
  /** Denials this close together (ms) with the same reason, context, object and user are one entry. */
  static final long LOG_MERGE_MILLIS = 60_000;

  /** Why a command was refused. */
  public enum Reason {
    COMMAND("command"), KEY("key"), AUTH("auth");

    final String text;

    Reason(String text) {
      this.text = text;
    }
  }

  /** One {@code ACL LOG} entry; {@code count}, {@code clientInfo} and {@code updatedMillis} change as it repeats. */
  public static final class LogEntry {
    public final long id;
    public final Reason reason;
    public final String context;
    public final String object;
    public final String username;
    public final long createdMillis;
    long count = 1;
    String clientInfo;
    long updatedMillis;

    LogEntry(long id, Reason reason, String context, String object, String username, String clientInfo, long now) {
      this.id = id;
      this.reason = reason;
      this.context = context;
      this.object = object;
      this.username = username;
      this.clientInfo = clientInfo;
      this.createdMillis = now;
      this.updatedMillis = now;
    }

    public long count() {
      return count;
    }

    public String reasonText() {
      return reason.text;
    }

    public String clientInfo() {
      return clientInfo;
    }

    public long updatedMillis() {
      return updatedMillis;
    }
  }

  private volatile AclCommands commands;
  private final Path file;
  private final Map<String, AclUser> users = new TreeMap<>();
  private final AclUser defaultUser = new AclUser("default", null);
  private final Deque<LogEntry> log = new ArrayDeque<>();
  private long nextLogId;
  private String requirepass;

  /**
   * An ACL whose users come from {@code file} ({@code --aclfile}; {@code null}: none) once the command table is
   * {@linkplain #install installed}; until then only the default user exists, without rules.
   */
  public Acl(Path file) {
    this.file = file;
    users.put("default", defaultUser);
  }

  /**
   * Gives the ACL its command table (once; later calls, from another dispatcher over the same families, change
   * nothing): the default user gets every command and key, {@code requirepass} as its password, and the ACL file's
   * users are loaded.
   *
   * @throws IllegalArgumentException with Redis's text when the ACL file cannot be read or has an error
   */
  public synchronized void install(AclCommands table) {
    if (commands != null) {
      return;
    }
    commands = table;
    defaultUser.rules(defaultRules());
    requirepass(requirepass);
    if (file != null) {
      load();
    }
  }

  private AclUser.Rules defaultRules() {
    try {
      return new AclUser("default", AclUser.fresh(commands))
          .applied(List.of("+@all", "~*", "&*", "on", "nopass"));
    } catch (Selector.RuleException e) {
      throw new IllegalStateException(e);
    }
  }

  public AclCommands commands() {
    return commands;
  }

  /** The ACL file ({@code --aclfile}), or {@code null}. */
  public Path file() {
    return file;
  }

  public AclUser defaultUser() {
    return defaultUser;
  }

  /** The user called {@code name}, or {@code null}. */
  public synchronized AclUser user(String name) {
    return users.get(name);
  }

  /** {@code requirepass}: the default user's only password, or none ({@code nopass}) when empty or null. */
  public synchronized void requirepass(String password) {
    requirepass = password;
    if (commands == null) {
      return;
    }
    List<String> ops = password == null || password.isEmpty() ? List.of("resetpass", "nopass")
        : List.of("resetpass", ">" + password);
    try {
      defaultUser.rules(defaultUser.applied(ops));
    } catch (Selector.RuleException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * ACL SETUSER: applies {@code ops} to the user (made if missing) all or nothing. Returns {@code null}, or Redis's
   * error text (without the {@code ERR } prefix).
   */
  public synchronized String setUser(String name, List<String> ops) {
    if (Selector.hasSpaces(name)) {
      return "Usernames can't contain spaces or null characters";
    }
    List<String> merged = mergeSelectors(ops);
    if (merged == null) {
      return "Unmatched parenthesis in acl selector starting at '" + firstUnmatched(ops) + "'.";
    }
    AclUser existing = users.get(name);
    AclUser target = existing != null ? existing : new AclUser(name, AclUser.fresh(commands));
    AclUser.Rules rules = target.rules();
    for (String op : merged) {
      try {
        rules = withRules(target, rules).applied(List.of(op));
      } catch (Selector.RuleException e) {
        return "Error in ACL SETUSER modifier '" + op + "': " + e.getMessage();
      }
    }
    target.rules(rules);
    users.putIfAbsent(name, target);
    return null;
  }

  private static AclUser withRules(AclUser user, AclUser.Rules rules) {
    return new AclUser(user.name(), rules);
  }

  /**
   * Joins arguments that a selector's parentheses span ({@code "(~a" "+get)"}) into one, as Redis does;
   * {@code null} when a parenthesis is not closed.
   */
  static List<String> mergeSelectors(List<String> ops) {
    List<String> out = new ArrayList<>();
    StringBuilder open = null;
    for (String op : ops) {
      if (open == null && op.startsWith("(") && !op.endsWith(")")) {
        open = new StringBuilder(op);
      } else if (open != null) {
        open.append(' ').append(op);
        if (op.endsWith(")")) {
          out.add(open.toString());
          open = null;
        }
      } else {
        out.add(op);
      }
    }
    return open == null ? out : null;
  }

  private static String firstUnmatched(List<String> ops) {
    for (String op : ops) {
      if (op.startsWith("(") && !op.endsWith(")")) {
        return op;
      }
    }
    return "";
  }

  /** ACL DELUSER: removes the named users (never {@code default}); returns those removed. */
  public synchronized List<AclUser> delUsers(List<String> names) {
    List<AclUser> removed = new ArrayList<>();
    for (String name : names) {
      if (!name.equals("default")) {
        AclUser u = users.remove(name);
        if (u != null) {
          removed.add(u);
        }
      }
    }
    return removed;
  }

  /** The user names, in Redis's (byte) order. */
  public synchronized List<String> userNames() {
    return new ArrayList<>(users.keySet());
  }

  /** ACL LIST: one {@code user NAME rules} line per user. */
  public synchronized List<String> list() {
    List<String> out = new ArrayList<>();
    users.forEach((name, u) -> out.add("user " + name + " " + u.describe()));
    return out;
  }

  /** ACL GETUSER's fields for a user, in Redis's order: name, value (String, or List of String). */
  public synchronized List<Object> getUser(String name) {
    AclUser u = users.get(name);
    if (u == null) {
      return null;
    }
    AclUser.Rules r = u.rules();
    List<String> flags = new ArrayList<>();
    flags.add(r.enabled() ? "on" : "off");
    if (r.nopass()) {
      flags.add("nopass");
    }
    flags.add(r.skipSanitize() ? "skip-sanitize-payload" : "sanitize-payload");
    List<Object> out = new ArrayList<>(List.of("flags", flags, "passwords", r.passwords()));
    Selector root = r.selectors().getFirst();
    out.addAll(List.of("commands", root.describeCommands(), "keys", root.describeKeys(), "channels",
        root.describeChannels()));
    List<Object> selectors = new ArrayList<>();
    for (Selector s : r.selectors().subList(1, r.selectors().size())) {
      selectors.add(List.of("commands", s.describeCommands(), "keys", s.describeKeys(), "channels",
          s.describeChannels()));
    }
    out.addAll(List.of("selectors", selectors));
    return out;
  }

  /** The user {@code name} if it is on and {@code password} is one of its passwords (constant time), else null. */
  public AclUser authenticate(String name, byte[] password) {
    AclUser u = user(name);
    if (u == null) {
      u = defaultUser; // compare anyway, so a missing user answers in the time a wrong password does
      u.passwordMatches(password);
      return null;
    }
    boolean matches = u.passwordMatches(password);
    return matches && u.rules().enabled() ? u : null;
  }

  /**
   * Checks whether {@code user} may run command {@code name} with {@code argv}, whose keys are at {@code firstKey}
   * to {@code lastKey} by {@code step} (Redis's legacy key range; {@code firstKey} 0: none). Returns {@code null}
   * when allowed; otherwise logs the denial and returns the {@code -NOPERM} text.
   */
  public String check(AclUser user, String name, List<byte[]> argv, int firstKey, int lastKey, int step,
      String context, Supplier<String> clientInfo) {
    AclUser.Rules r = user.rules();
    if (r.unrestricted()) {
      return null;
    }
    int id = commands.id(name);
    if (id < 0) {
      return null; // a command outside the ACL table (none is registered so)
    }
    if (argv.size() > 1) {
      id = commands.subcommand(id, argv.get(1));
    }
    Reason worst = Reason.COMMAND;
    int worstKey = 0;
    for (Selector s : r.selectors()) {
      if (!s.allowsCommand(id, argv)) {
        continue;
      }
      int denied = deniedKey(s, id, argv, firstKey, lastKey, step);
      if (denied == 0) {
        return null;
      }
      if (worst == Reason.COMMAND || denied > worstKey) {
        worst = Reason.KEY;
        worstKey = denied;
      }
    }
    if (worst == Reason.COMMAND) {
      log(Reason.COMMAND, context, commands.name(id), user.name(), clientInfo);
      return "NOPERM User " + user.name() + " has no permissions to run the '" + commands.name(id) + "' command";
    }
    log(Reason.KEY, context, new String(argv.get(worstKey), StandardCharsets.ISO_8859_1), user.name(), clientInfo);
    return "NOPERM No permissions to access a key";
  }

  /**
   * ACL DRYRUN: {@code null} when {@code user} may run the command, else Redis's verbose reason (nothing logged).
   */
  public String dryRun(AclUser user, String name, List<byte[]> argv, int firstKey, int lastKey, int step) {
    AclUser.Rules r = user.rules();
    int id = commands.id(name);
    if (r.unrestricted() || id < 0) {
      return null;
    }
    if (argv.size() > 1) {
      id = commands.subcommand(id, argv.get(1));
    }
    boolean commandOk = false;
    int worstKey = 0;
    for (Selector s : r.selectors()) {
      if (s.allowsCommand(id, argv)) {
        commandOk = true;
        int denied = deniedKey(s, id, argv, firstKey, lastKey, step);
        if (denied == 0) {
          return null;
        }
        worstKey = Math.max(worstKey, denied);
      }
    }
    if (!commandOk) {
      return "User " + user.name() + " has no permissions to run the '" + commands.name(id) + "' command";
    }
    return "User " + user.name() + " has no permissions to access the '"
        + new String(argv.get(worstKey), StandardCharsets.ISO_8859_1) + "' key";
  }

  /** The position of the first key {@code s} does not allow, or 0. */
  private int deniedKey(Selector s, int id, List<byte[]> argv, int firstKey, int lastKey, int step) {
    if (s.allKeys || firstKey <= 0) {
      return 0;
    }
    int last = lastKey < 0 ? argv.size() + lastKey : Math.min(lastKey, argv.size() - 1);
    int ordinal = 0;
    for (int i = firstKey; i <= last; i += Math.max(1, step), ordinal++) {
      if (!s.allowsKey(argv.get(i), commands.keyAccess(id, ordinal))) {
        return i;
      }
    }
    return 0;
  }

  /** Records a denial: a repeat of one of the 10 latest entries within a minute counts on that entry. */
  public synchronized void log(Reason reason, String context, String object, String username,
      Supplier<String> clientInfo) {
    long now = System.currentTimeMillis();
    int scanned = 0;
    for (var it = log.iterator(); it.hasNext() && scanned < 10; scanned++) {
      LogEntry e = it.next();
      if (e.reason == reason && e.context.equals(context) && e.object.equals(object) && e.username.equals(username)
          && now - e.updatedMillis < LOG_MERGE_MILLIS) {
        it.remove();
        e.count++;
        e.clientInfo = clientInfo.get();
        e.updatedMillis = now;
        log.addFirst(e);
        return;
      }
    }
    log.addFirst(new LogEntry(nextLogId++, reason, context, object, username, clientInfo.get(), now));
    while (log.size() > LOG_MAX) {
      log.removeLast();
    }
  }

  /** The newest {@code count} log entries, newest first. */
  public synchronized List<LogEntry> logEntries(long count) {
    List<LogEntry> out = new ArrayList<>();
    for (LogEntry e : log) {
      if (out.size() >= count) {
        break;
      }
      out.add(e);
    }
    return out;
  }

  public synchronized void resetLog() {
    log.clear();
  }

  // ------------------------------------------------------------------------------------------------ ACL file

  /** The ACL file's text for the current users ({@code ACL SAVE}). */
  public synchronized String fileText() {
    StringBuilder sb = new StringBuilder();
    for (String line : list()) {
      sb.append(line).append('\n');
    }
    return sb.toString();
  }

  /** ACL SAVE: writes every user to the ACL file through a temporary file and an atomic rename. */
  public synchronized void save() throws IOException {
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp-" + ProcessHandle.current().pid() + "-"
        + System.currentTimeMillis());
    try {
      Files.writeString(tmp, fileText(), StandardCharsets.ISO_8859_1);
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  /**
   * ACL LOAD (and start-up with {@code --aclfile}): replaces every user with the file's, all or nothing. The default
   * user keeps its identity (connections authenticated as it stay so) and takes the file's rules, or the fresh
   * default's when the file does not name it. Returns the users that no longer exist, whose connections the
   * caller closes. The error's message is Redis's.
   *
   * @throws IllegalArgumentException with Redis's text when the file cannot be read or has an error
   */
  public synchronized List<AclUser> load() {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.ISO_8859_1);
    } catch (IOException e) {
      throw new IllegalArgumentException("Error loading ACLs, opening file '" + file + "': "
          + (e instanceof java.nio.file.NoSuchFileException ? "No such file or directory" : e.getMessage()));
    }
    Map<String, AclUser> loaded = parse(text, file.toString());
    List<AclUser> gone = new ArrayList<>();
    for (AclUser u : users.values()) {
      if (u != defaultUser && !loaded.containsKey(u.name())) {
        gone.add(u);
      }
    }
    AclUser fileDefault = loaded.remove("default");
    defaultUser.rules(fileDefault == null ? defaultRules() : fileDefault.rules());
    Map<String, AclUser> next = new TreeMap<>();
    next.put("default", defaultUser);
    loaded.forEach((name, u) -> {
      AclUser kept = users.get(name);
      if (kept != null) {
        kept.rules(u.rules()); // connections authenticated as the user keep it, with the file's rules
        next.put(name, kept);
      } else {
        next.put(name, u);
      }
    });
    users.clear();
    users.putAll(next);
    return gone;
  }

  /**
   * Parses an ACL file's text: one {@code user NAME rule...} per non-blank line.
   *
   * @throws IllegalArgumentException with every error found, in Redis's words
   */
  Map<String, AclUser> parse(String text, String fileName) {
    StringBuilder errors = new StringBuilder();
    Map<String, AclUser> out = new TreeMap<>();
    String[] lines = text.split("\n", -1);
    for (int i = 0; i < lines.length; i++) {
      int lineNo = i + 1;
      String line = lines[i].strip();
      if (line.isEmpty()) {
        continue;
      }
      List<String> argv = new ArrayList<>(Arrays.asList(line.split(" ", -1)));
      if (!argv.getFirst().equals("user") || argv.size() < 2) {
        errors.append(fileName).append(':').append(lineNo)
            .append(" should start with user keyword followed by the username. ");
        continue;
      }
      String name = argv.get(1);
      if (Selector.hasSpaces(name)) {
        errors.append("'").append(fileName).append(':').append(lineNo).append(": username '").append(name)
            .append("' contains invalid characters. ");
        continue;
      }
      if (out.containsKey(name)) {
        errors.append("WARNING: Duplicate user '").append(name).append("' found on line ").append(lineNo)
            .append(". ");
        continue;
      }
      List<String> ops = mergeSelectors(argv.subList(2, argv.size()));
      if (ops == null) {
        errors.append(fileName).append(':').append(lineNo).append(": Unmatched parenthesis in selector definition.");
        continue;
      }
      AclUser u = new AclUser(name, AclUser.fresh(commands));
      boolean syntaxError = false;
      for (String op : ops) {
        op = op.strip();
        try {
          u.rules(u.applied(List.of(op)));
        } catch (Selector.RuleException e) {
          if (e.getMessage().equals(Selector.UNKNOWN)) {
            errors.append(fileName).append(':').append(lineNo).append(": Error in applying operation '").append(op)
                .append("': ").append(e.getMessage()).append(". ");
          } else if (!syntaxError) {
            errors.append(fileName).append(':').append(lineNo).append(": ").append(e.getMessage()).append(". ");
            syntaxError = true;
          }
        }
      }
      out.put(name, u);
    }
    if (!errors.isEmpty()) {
      throw new IllegalArgumentException(errors
          + "WARNING: ACL errors detected, no change to the previously active ACL rules was performed");
    }
    return out;
  }
}
