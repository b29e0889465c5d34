package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * ACL on a real server over the wire: users, key patterns and command rules checked in dispatch with Redis 8's error
 * texts, the ACL log, requirepass as the default user's password, and the ACL file. The expected replies are what
 * Redis 8.0.2 + RedisBloom answered to the same commands.
 */
class AclTest {
  private static final String CRAWLER_HASH = "30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4";
  private static final String WRONGPASS = "-WRONGPASS invalid username-password pair or user is disabled.\r\n";

  private static String bulk(String s) {
    return "$" + s.getBytes(StandardCharsets.ISO_8859_1).length + "\r\n" + s + "\r\n";
  }

  /** The README's crawler worker: only BF.ADD and BF.EXISTS, only on crawl:* keys. */
  @Test
  void aCrawlerWorkerMayOnlyAddAndCheckCrawlKeys() {
    try (BloomeryServer server = TestServer.start();
        RawClient admin = new RawClient(server.port());
        RawClient worker = new RawClient(server.port())) {
      assertThat(admin.call("ACL", "SETUSER", "crawler", "on", ">pw", "~crawl:*", "+bf.add", "+bf.exists"))
          .isEqualTo("+OK\r\n");
      assertThat(worker.call("AUTH", "crawler", "pw")).isEqualTo("+OK\r\n");
      assertThat(worker.call("BF.ADD", "crawl:1", "x")).isEqualTo(":1\r\n");
      assertThat(worker.call("BF.EXISTS", "crawl:1", "x")).isEqualTo(":1\r\n");
      assertThat(worker.call("BF.ADD", "other", "x")).isEqualTo("-NOPERM No permissions to access a key\r\n");
      assertThat(worker.call("BF.RESERVE", "crawl:2", "0.01", "100"))
          .isEqualTo("-NOPERM User crawler has no permissions to run the 'bf.reserve' command\r\n");
      assertThat(worker.call("ACL", "WHOAMI"))
          .isEqualTo("-NOPERM User crawler has no permissions to run the 'acl|whoami' command\r\n");
      assertThat(worker.call("MULTI"))
          .isEqualTo("-NOPERM User crawler has no permissions to run the 'multi' command\r\n");
      assertThat(worker.call("EXEC")).isEqualTo("-EXECABORT Transaction discarded because of: NOPERM User crawler "
          + "has no permissions to run the 'exec' command\r\n");
      assertThat(worker.call("AUTH", "crawler", "bad")).isEqualTo(WRONGPASS);
      assertThat(worker.call("BF.EXISTS", "crawl:1", "x")).as("a failed AUTH keeps the user").isEqualTo(":1\r\n");
      assertThat(worker.call("PING"))
          .isEqualTo("-NOPERM User crawler has no permissions to run the 'ping' command\r\n");
      assertThat(admin.call("EXISTS", "other")).isEqualTo(":0\r\n");

      String log = admin.call("ACL", "LOG", "2");
      assertThat(log).startsWith("*2\r\n").contains(bulk("reason") + bulk("auth"))
          .contains(bulk("object") + bulk("AUTH")).contains(bulk("username") + bulk("crawler"))
          .contains(bulk("reason") + bulk("command")).contains(bulk("object") + bulk("ping"))
          .doesNotContain(bulk("exec"))
          .contains("user=crawler");
      String all = admin.call("ACL", "LOG");
      assertThat(all).contains(bulk("reason") + bulk("key")).contains(bulk("object") + bulk("exec")).contains(bulk("object") + bulk("other"))
          .contains(bulk("object") + bulk("bf.reserve")).contains(bulk("context") + bulk("toplevel"));
      assertThat(admin.call("ACL", "LOG", "RESET")).isEqualTo("+OK\r\n");
      assertThat(admin.call("ACL", "LOG")).isEqualTo("*0\r\n");
    }
  }

  /** A repeated denial counts on one entry instead of adding entries. */
  @Test
  void aRepeatedDenialCountsOnOneLogEntry() {
    try (BloomeryServer server = TestServer.start();
        RawClient admin = new RawClient(server.port());
        RawClient worker = new RawClient(server.port())) {
      admin.call("ACL", "SETUSER", "crawler", "on", ">pw", "~crawl:*", "+bf.add");
      worker.call("AUTH", "crawler", "pw");
      for (int i = 0; i < 3; i++) {
        assertThat(worker.call("BF.ADD", "other", "x" + i)).isEqualTo("-NOPERM No permissions to access a key\r\n");
      }
      String log = admin.call("ACL", "LOG");
      assertThat(log).startsWith("*1\r\n").contains(bulk("count") + ":3\r\n");
    }
  }

  /** The README's dashboard user: every read command on every key, no write. */
  @Test
  void aReadOnlyUserReadsButCannotWrite() {
    try (BloomeryServer server = TestServer.start();
        RawClient admin = new RawClient(server.port());
        RawClient dash = new RawClient(server.port())) {
      admin.call("BF.ADD", "k", "x");
      assertThat(admin.call("ACL", "SETUSER", "dashboard", "on", ">dpw", "~*", "+@read", "-@dangerous"))
          .isEqualTo("+OK\r\n");
      assertThat(dash.call("HELLO", "3", "AUTH", "dashboard", "dpw")).startsWith("%");
      assertThat(dash.call("BF.EXISTS", "k", "x")).isEqualTo("#t\r\n");
      assertThat(dash.call("BF.INFO", "k", "ITEMS")).startsWith("%1\r\n");
      assertThat(dash.call("BF.ADD", "k", "y"))
          .isEqualTo("-NOPERM User dashboard has no permissions to run the 'bf.add' command\r\n");
      assertThat(dash.call("KEYS", "*"))
          .isEqualTo("-NOPERM User dashboard has no permissions to run the 'keys' command\r\n");
      assertThat(dash.call("FLUSHALL"))
          .isEqualTo("-NOPERM User dashboard has no permissions to run the 'flushall' command\r\n");
      assertThat(admin.call("BF.EXISTS", "k", "y")).isEqualTo(":0\r\n");
    }
  }

  /** ACL LIST and GETUSER describe users exactly as Redis does, rules in the order given. */
  @Test
  void listAndGetUserDescribeUsersAsRedisDoes() {
    try (BloomeryServer server = TestServer.start();
        RawClient admin = new RawClient(server.port())) {
      admin.call("ACL", "SETUSER", "crawler", "on", ">pw", "~crawl:*", "+bf.add", "+bf.exists");
      admin.call("ACL", "SETUSER", "w", "%RW~x:*", "%R~y:*", "(~z:* +get)", "-@all", "+@bloom", "-bf.add",
          "+bf.add", "+config|get");
      assertThat(admin.call("ACL", "LIST")).isEqualTo("*3\r\n"
          + bulk("user crawler on sanitize-payload #" + CRAWLER_HASH
              + " ~crawl:* resetchannels -@all +bf.add +bf.exists")
          + bulk("user default on nopass sanitize-payload ~* &* +@all")
          + bulk("user w off sanitize-payload ~x:* %R~y:* resetchannels -@all +@bloom +bf.add +config|get "
              + "(~z:* resetchannels -@all +get)"));
      assertThat(admin.call("ACL", "USERS")).isEqualTo("*3\r\n" + bulk("crawler") + bulk("default") + bulk("w"));
      assertThat(admin.call("ACL", "GETUSER", "w")).isEqualTo("*12\r\n" + bulk("flags") + "*2\r\n" + bulk("off")
          + bulk("sanitize-payload") + bulk("passwords") + "*0\r\n" + bulk("commands")
          + bulk("-@all +@bloom +bf.add +config|get") + bulk("keys") + bulk("~x:* %R~y:*") + bulk("channels")
          + bulk("") + bulk("selectors") + "*1\r\n*6\r\n" + bulk("commands") + bulk("-@all +get") + bulk("keys")
          + bulk("~z:*") + bulk("channels") + bulk(""));
      assertThat(admin.call("ACL", "GETUSER", "nobody")).isEqualTo("$-1\r\n");
      assertThat(admin.call("ACL", "DRYRUN", "crawler", "bf.add", "other", "x"))
          .isEqualTo(bulk("User crawler has no permissions to access the 'other' key"));
      assertThat(admin.call("ACL", "DRYRUN", "crawler", "bf.info", "crawl:1"))
          .isEqualTo(bulk("User crawler has no permissions to run the 'bf.info' command"));
      assertThat(admin.call("ACL", "DRYRUN", "crawler", "bf.add", "crawl:1", "x")).isEqualTo("+OK\r\n");
      assertThat(admin.call("ACL", "DELUSER", "w", "nope")).isEqualTo(":1\r\n");
      assertThat(admin.call("ACL", "DELUSER", "default")).isEqualTo("-ERR The 'default' user cannot be removed\r\n");
    }
  }

  /** A rule Redis refuses is refused with Redis's text, and none of the rules given with it applies. */
  @Test
  void aBadRuleIsRefusedWithRedisTextAndChangesNothing() {
    try (BloomeryServer server = TestServer.start();
        RawClient admin = new RawClient(server.port())) {
      admin.call("ACL", "SETUSER", "crawler", "on", ">pw", "~crawl:*", "+bf.add");
      assertThat(admin.call("ACL", "SETUSER", "crawler", "+bf.exists", "+nosuch")).isEqualTo(
          "-ERR Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL\r\n");
      assertThat(admin.call("ACL", "SETUSER", "crawler", "%X~a"))
          .isEqualTo("-ERR Error in ACL SETUSER modifier '%X~a': Syntax error\r\n");
      assertThat(admin.call("ACL", "SETUSER", "crawler", "#abc")).isEqualTo("-ERR Error in ACL SETUSER modifier "
          + "'#abc': The password hash must be exactly 64 characters and contain only lowercase hexadecimal "
          + "characters\r\n");
      assertThat(admin.call("ACL", "SETUSER", "crawler", "~a", "(~b", "+get"))
          .isEqualTo("-ERR Unmatched parenthesis in acl selector starting at '(~b'.\r\n");
      assertThat(admin.call("ACL", "GETUSER", "crawler")).contains(bulk("-@all +bf.add"))
          .contains(bulk("~crawl:*"));
    }
  }

  /** requirepass is the default user's password, and CONFIG SET requirepass changes it. */
  @Test
  void requirepassIsTheDefaultUsersPassword() {
    try (BloomeryServer server = TestServer.start("--requirepass", "secret");
        RawClient c = new RawClient(server.port())) {
      assertThat(c.call("PING")).isEqualTo("-NOAUTH Authentication required.\r\n");
      assertThat(c.call("AUTH", "default", "secret")).isEqualTo("+OK\r\n");
      assertThat(c.call("ACL", "LIST")).isEqualTo("*1\r\n" + bulk("user default on sanitize-payload #"
          + "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b ~* &* +@all"));
      assertThat(c.call("CONFIG", "SET", "requirepass", "other")).isEqualTo("+OK\r\n");
      try (RawClient d = new RawClient(server.port())) {
        assertThat(d.call("AUTH", "secret")).isEqualTo(WRONGPASS);
        assertThat(d.call("AUTH", "other")).isEqualTo("+OK\r\n");
      }
    }
  }

  /** A disabled user cannot log in; deleting a user closes its connections. */
  @Test
  void disabledUsersCannotLogInAndDeletedUsersAreDisconnected() {
    try (BloomeryServer server = TestServer.start();
        RawClient admin = new RawClient(server.port());
        RawClient worker = new RawClient(server.port())) {
      admin.call("ACL", "SETUSER", "crawler", "off", ">pw", "allkeys", "allcommands");
      assertThat(worker.call("AUTH", "crawler", "pw")).isEqualTo(WRONGPASS);
      admin.call("ACL", "SETUSER", "crawler", "on");
      assertThat(worker.call("AUTH", "crawler", "pw")).isEqualTo("+OK\r\n");
      assertThat(worker.call("ACL", "WHOAMI")).isEqualTo(bulk("crawler"));
      assertThat(admin.call("ACL", "DELUSER", "crawler")).isEqualTo(":1\r\n");
      assertThat(worker.closedByServer()).isTrue();
    }
  }

  /** Users come from --aclfile; ACL SAVE writes them back; ACL LOAD of a bad file changes nothing. */
  @Test
  void usersComeFromTheAclFileAndGoBackToIt(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("users.acl");
    Files.writeString(file, "user crawler on #" + CRAWLER_HASH + " ~crawl:* +bf.add\n\n"
        + "user default on nopass ~* &* +@all\n");
    try (BloomeryServer server = TestServer.start("--aclfile", file.toString());
        RawClient admin = new RawClient(server.port());
        RawClient worker = new RawClient(server.port())) {
      assertThat(worker.call("AUTH", "crawler", "pw")).isEqualTo("+OK\r\n");
      assertThat(worker.call("BF.ADD", "crawl:a", "x")).isEqualTo(":1\r\n");
      admin.call("ACL", "SETUSER", "dash", "on", ">dpw", "~*", "+@read");
      assertThat(admin.call("ACL", "SAVE")).isEqualTo("+OK\r\n");
      assertThat(Files.readString(file)).isEqualTo("user crawler on sanitize-payload #" + CRAWLER_HASH
          + " ~crawl:* resetchannels -@all +bf.add\n"
          + "user dash on sanitize-payload #6e73de19be339f23d11536e634820a7952a76daddb1e20b59df06c00d298a83b ~* "
          + "resetchannels -@all +@read\n"
          + "user default on nopass sanitize-payload ~* &* +@all\n");
      Files.writeString(file, "user crawler on +nosuch\nuser x %Q~y\nnot a user line\n");
      assertThat(admin.call("ACL", "LOAD")).isEqualTo("-ERR " + file + ":1: Error in applying operation '+nosuch': "
          + "Unknown command or category name in ACL. " + file + ":2: Syntax error. " + file
          + ":3 should start with user keyword followed by the username. WARNING: ACL errors detected, no change "
          + "to the previously active ACL rules was performed\r\n");
      assertThat(admin.call("ACL", "USERS")).isEqualTo("*3\r\n" + bulk("crawler") + bulk("dash") + bulk("default"));
      Files.writeString(file, "user crawler on #" + CRAWLER_HASH + " ~crawl:* +bf.add +bf.exists\n");
      assertThat(admin.call("ACL", "LOAD")).isEqualTo("+OK\r\n");
      assertThat(admin.call("ACL", "USERS")).isEqualTo("*2\r\n" + bulk("crawler") + bulk("default"));
      assertThat(worker.call("BF.EXISTS", "crawl:a", "x")).as("the connection keeps its user, with the new rules")
          .isEqualTo(":1\r\n");
    }
  }

  /** Without --aclfile, ACL SAVE and LOAD answer Redis's error. */
  @Test
  void saveAndLoadNeedAnAclFile() {
    try (BloomeryServer server = TestServer.start();
        RawClient admin = new RawClient(server.port())) {
      assertThat(admin.call("ACL", "SAVE")).startsWith("-ERR This Redis instance is not configured to use an ACL "
          + "file.");
    }
  }
}
