package io.bloomery.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.sql.SQLException;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Every credential leaves a message, whatever its shape; everything else stays readable. */
class CredentialsTest {
  @Test
  void userInfoPasswordsAreMaskedAndUserAndHostStay() {
    assertThat(Credentials.redact("jdbc:postgresql://crawler:s3cr3t@db.internal:5432/crawl"))
        .isEqualTo("jdbc:postgresql://crawler:***@db.internal:5432/crawl");
    assertThat(Credentials.redact("redis://:hunter2@cache:6379/0"))
        .doesNotContain("hunter2"); // the empty user of Redis URLs
    assertThat(Credentials.redact("cannot resolve host crawler:s3cr3t@db.internal"))
        .isEqualTo("cannot resolve host crawler:***@db.internal");
    assertThat(Credentials.redact("jdbc:postgresql://db/crawl?user=crawler"))
        .isEqualTo("jdbc:postgresql://db/crawl?user=crawler");
    assertThat(Credentials.redact("sqlite:/data/seen.db#bloomery_seen"))
        .isEqualTo("sqlite:/data/seen.db#bloomery_seen");
  }

  @Test
  void passwordParametersAreMaskedInQueriesAndPropertyLists() {
    assertThat(Credentials.redact("jdbc:postgresql://db/c?user=u&password=p%40ss&ssl=true"))
        .isEqualTo("jdbc:postgresql://db/c?user=u&password=***&ssl=true");
    assertThat(Credentials.redact("jdbc:postgresql://db/c?PASSWORD=x;sslpassword=y"))
        .isEqualTo("jdbc:postgresql://db/c?PASSWORD=***;sslpassword=***");
    assertThat(Credentials.redact("{user=u, password=abc, pwd=def}"))
        .isEqualTo("{user=u, password=***, pwd=***}");
    assertThat(Credentials.redact("token: abc123 and api_key=k and access-token=t"))
        .doesNotContain("abc123").doesNotContain("=k").doesNotContain("=t");
    assertThat(Credentials.redact("password authentication failed for user \"u\""))
        .isEqualTo("password authentication failed for user \"u\"");
  }

  @Test
  void redactionIsIdempotentAndSafeOnHostileText() {
    assertThat(Credentials.redact((String) null)).isNull();
    assertThat(Credentials.redact("")).isEmpty();
    String once = Credentials.redact("x://a:b@h?password=$1\\&pass=\\$");
    assertThat(once).doesNotContain("b@").doesNotContain("$1");
    assertThat(Credentials.redact(once)).isEqualTo(once);
    long seed = new Random().nextLong();
    Random random = new Random(seed);
    for (int i = 0; i < 2_000; i++) {
      StringBuilder text = new StringBuilder();
      for (int j = random.nextInt(60); j > 0; j--) {
        String alphabet = ":@/?=&;$\\ apswordk";
        text.append(alphabet.charAt(random.nextInt(alphabet.length())));
      }
      String secret = "S" + random.nextInt(1_000_000) + "Z";
      String url = text + "jdbc:postgresql://u:" + secret + "@h/db?password=" + secret + text;
      assertThat(Credentials.redact(url)).as("seed %d: %s", seed, url).doesNotContain(secret);
    }
  }

  @Test
  void exceptionChainsAreCopiedWithRedactedMessagesAndTheirStackTraces() {
    SQLException root = new SQLException("FATAL: password=topsecret rejected", "28P01");
    RuntimeException top = new RuntimeException("pool for jdbc:postgresql://u:topsecret@h/db", root);
    top.addSuppressed(new IllegalStateException("sslpassword=topsecret"));
    Throwable redacted = Credentials.redact(top);
    StringWriter trace = new StringWriter();
    redacted.printStackTrace(new PrintWriter(trace));
    assertThat(trace.toString()).doesNotContain("topsecret")
        .contains("java.lang.RuntimeException: pool for jdbc:postgresql://u:***@h/db")
        .contains("java.sql.SQLException: FATAL: password=*** rejected")
        .contains("Suppressed: java.lang.IllegalStateException: sslpassword=***")
        .contains("CredentialsTest.exceptionChainsAreCopied"); // where it was thrown
    RuntimeException clean = new RuntimeException("nothing secret");
    assertThat(Credentials.redact(clean)).isSameAs(clean);
  }

  @Test
  void storeMessagesNeverCarryThePassword() {
    // A closed port: the pool fails to connect, and every message about it is redacted.
    int port = 1;
    assertThatThrownBy(() -> PostgresStore.open(
        "jdbc:postgresql://127.0.0.1:" + port + "/db?user=u&password=hunter2&connectTimeout=2"))
        .isInstanceOf(StoreUnavailableException.class)
        .satisfies(e -> {
          StringWriter trace = new StringWriter();
          e.printStackTrace(new PrintWriter(trace));
          assertThat(trace.toString()).doesNotContain("hunter2");
        });
    assertThatThrownBy(() -> PostgresStore.open("jdbc:postgresql://u:hunter2@127.0.0.1:" + port
        + "/db"))
        .satisfies(e -> {
          StringWriter trace = new StringWriter();
          e.printStackTrace(new PrintWriter(trace));
          assertThat(trace.toString()).doesNotContain("hunter2");
        });
  }
}
