package io.bloomery.server.state.acl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Hostile input for the ACL rule language and the ACL file: any rule list is either applied whole or refused with
 * one of Redis's messages and changes nothing; what ACL LIST shows reads back as the same user; a file with any
 * content either loads or is refused with Redis's summary and leaves the users as they were.
 */
class AclRulesPropertyTest {
  private static final List<String> COMMANDS = List.of("bf.add", "bf.exists", "bf.reserve", "cf.add", "get",
      "config", "config|get", "keys", "ping", "acl", "acl|whoami");

  private static Acl acl(Path file) {
    AclCommands commands = new AclCommands();
    commands.add("bf.add", true, false, true, false, "bf");
    commands.add("bf.exists", false, true, true, false, "bf");
    commands.add("bf.reserve", true, false, true, false, "bf");
    commands.add("config", false, false, false, false, "server");
    commands.add("acl", false, false, false, false, "server");
    commands.add("auth", false, false, true, true, "connection");
    Acl acl = new Acl(file);
    acl.install(commands.complete());
    return acl;
  }

  /** Rule words Redis knows, broken variants of them, and junk. */
  @Provide
  Arbitrary<String> rule() {
    Arbitrary<String> word = Arbitraries.of("on", "off", "nopass", "resetpass", "reset", "allkeys", "resetkeys",
        "allcommands", "nocommands", "allchannels", "resetchannels", "clearselectors", "sanitize-payload",
        "skip-sanitize-payload", "~*", "&*", "+@all", "-@all", "+@read", "-@write", "+@bloom", "-@nosuch", "+bf.add",
        "-bf.exists", "+config|get", "+config|", "+acl|whoami|x", "+bf.add|1", "-config|get", "+nosuch", "~crawl:*",
        "%R~r:*", "%W~w:*", "%RW~x", "%~y", "%X~z", "%RR~z", "&chan", ">pw", "<pw", "<nope", "#abc",
        "#" + "a".repeat(64), "!" + "b".repeat(64), "(~z:* +get)", "(~a", "+get)", "()", "(", ")", "+", "-", "~",
        "%", "&", "#", ">", "", "@", "+@", "|");
    Arbitrary<String> junk = Arbitraries.strings().withChars("~%&#<>!+-@|()*?[]^\\ \t\n\0RWabc:").ofMaxLength(12);
    return Arbitraries.oneOf(word, word, word, junk);
  }

  @Provide
  Arbitrary<List<String>> rules() {
    return rule().list().ofMaxSize(8);
  }

  @Property(tries = 200)
  void anyRuleListAppliesWholeOrIsRefusedWithRedisTextAndChangesNothing(@ForAll("rules") List<String> first,
      @ForAll("rules") List<String> second) {
    Acl acl = acl(null);
    String created = acl.setUser("u", first);
    List<String> before = acl.list();
    String error = acl.setUser("u", second);
    if (error != null) {
      assertThat(error).matches("(?s)(Error in ACL SETUSER modifier '.*': .+|Unmatched parenthesis in acl selector "
          + "starting at '.*'\\.)");
      assertThat(acl.list()).as("a refused SETUSER changes nothing").isEqualTo(before);
    }
    if (created == null || error == null) {
      assertThat(acl.userNames()).contains("u");
    }
  }

  @Property(tries = 200)
  void whatListShowsReadsBackAsTheSameUser(@ForAll("rules") List<String> rules) throws IOException {
    Acl acl = acl(null);
    if (acl.setUser("u", rules) != null) {
      return;
    }
    Path file = Files.createTempFile("acl", ".acl");
    try {
      Files.writeString(file, acl.fileText(), StandardCharsets.ISO_8859_1);
      Acl reread = acl(file);
      assertThat(reread.list()).isEqualTo(acl.list());
      AclUser original = acl.user("u");
      AclUser copy = reread.user("u");
      for (String command : COMMANDS) {
        String name = command.contains("|") ? command.substring(0, command.indexOf('|')) : command;
        List<byte[]> argv = new ArrayList<>();
        argv.add(name.getBytes(StandardCharsets.ISO_8859_1));
        if (command.contains("|")) {
          argv.add(command.substring(command.indexOf('|') + 1).getBytes(StandardCharsets.ISO_8859_1));
        }
        argv.add("crawl:1".getBytes(StandardCharsets.ISO_8859_1));
        assertThat(reread.dryRun(copy, name, argv, 1, 1, 1)).as(command)
            .isEqualTo(acl.dryRun(original, name, argv, 1, 1, 1));
      }
    } finally {
      Files.deleteIfExists(file);
    }
  }

  @Provide
  Arbitrary<String> aclFile() {
    Arbitrary<String> line = Combinators.combine(Arbitraries.of("user", "user", "User", "", "#", "usr"),
        Arbitraries.of("crawler", "default", "a b", "x\0", "", "dup"), rules())
        .as((kw, name, rules) -> (kw + " " + name + " " + String.join(" ", rules)).strip());
    return line.list().ofMaxSize(5).map(lines -> String.join("\n", lines));
  }

  @Property(tries = 200)
  void anAclFileLoadsOrIsRefusedWithoutChangingTheUsers(@ForAll("aclFile") String text) throws IOException {
    Path file = Files.createTempFile("acl", ".acl");
    try {
      Acl acl = acl(file);
      Files.writeString(file, "user keep on >pw ~k:* +bf.add\n", StandardCharsets.ISO_8859_1);
      acl.load();
      List<String> before = acl.list();
      Files.writeString(file, text, StandardCharsets.ISO_8859_1);
      try {
        acl.load();
        assertThat(acl.userNames()).contains("default");
      } catch (IllegalArgumentException e) {
        assertThat(e.getMessage())
            .endsWith("WARNING: ACL errors detected, no change to the previously active ACL rules was performed");
        assertThat(acl.list()).isEqualTo(before);
      }
    } finally {
      Files.deleteIfExists(file);
    }
  }

  @Example
  void aMissingFileIsRefusedWithRedisText() {
    Path missing = Path.of("/nonexistent-dir/users.acl");
    Acl acl = new Acl(missing);
    AclCommands commands = new AclCommands();
    commands.add("ping", false, false, true, false, "connection");
    assertThatThrownBy(() -> acl.install(commands.complete())).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("Error loading ACLs, opening file '/nonexistent-dir/users.acl': No such file or directory");
  }
}
