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
  private static void assertRedacts(String... inputThenExpected) {
    for (int i = 0; i < inputThenExpected.length; i += 2) {
      assertThat(Credentials.redact(inputThenExpected[i])).isEqualTo(inputThenExpected[i + 1]);
    }
  }

  @Test
  void userInfoPasswordsAreMaskedAndUserAndHostStay() {
    assertRedacts(
        "jdbc:postgresql://crawler:s3cr3t@db.internal:5432/crawl",
        "jdbc:postgresql://crawler:***@db.internal:5432/crawl",
        "redis://:hunter2@cache:6379/0", "redis://:***@cache:6379/0", // Redis: no user
        "cannot resolve host crawler:s3cr3t@db.internal", "cannot resolve host crawler:***@db.internal",
        "jdbc:postgresql://db/crawl?user=crawler", "jdbc:postgresql://db/crawl?user=crawler",
        "sqlite:/data/seen.db#bloomery_seen", "sqlite:/data/seen.db#bloomery_seen");
  }

  @Test
  void passwordParametersAreMaskedInQueriesAndPropertyLists() {
    assertRedacts(
        "jdbc:postgresql://db/c?user=u&password=p%40ss&ssl=true",
        "jdbc:postgresql://db/c?user=u&password=***&ssl=true",
        "jdbc:postgresql://db/c?PASSWORD=x;sslpassword=y", "jdbc:postgresql://db/c?PASSWORD=***;sslpassword=***",
        "{user=u, password=abc, pwd=def}", "{user=u, password=***, pwd=***}",
        "token:abc123 and api_key=k and access-token=t", "token:*** and api_key=*** and access-token=***",
        "password authentication failed for user \"u\"", "password authentication failed for user \"u\"");
  }

  /** A parameter's name in a sentence is a word, not a credential: only values are masked. */
  @Test
  void wordsAfterAParameterNameInProseStay() {
    assertRedacts(
        "listening on [0.0.0.0] without a password: protected mode refuses clients that are not on loopback",
        "listening on [0.0.0.0] without a password: protected mode refuses clients that are not on loopback",
        "token: see the docs", "token: see the docs");
  }

  /** A remembered value is masked wherever it appears, whatever surrounds it; short ones are not remembered. */
  @Test
  void rememberedSecretsAreMaskedAnywhere() {
    Credentials.remember("Zq7-remembered-secret");
    Credentials.remember("Zq7-remembered-secret-longer");
    Credentials.remember("abc");
    Credentials.remember(null);
    Credentials.remember("   ");
    assertRedacts(
        "AUTH failed: Zq7-remembered-secret given", "AUTH failed: *** given",
        "a password: Zq7-remembered-secret-longer.", "a password: ***.",
        "abc stays", "abc stays");
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
          // The URL once, as given (without its query), then the table: never "postgresql:jdbc:postgresql:".
          assertThat(e.getMessage()).startsWith("PostgreSQL store jdbc:postgresql://127.0.0.1:" + port
              + "/db (table bloomery_seen, column item): cannot connect: ").doesNotContain("postgresql:jdbc");
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
