package io.bloomery.server.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The replay harness's own parsers: the recording format, the escapes and the RESP reply reader. */
class RecordingFormatTest {

  private static final String GOOD = """
      # comment
      case a/b@resp3
      proto 3
      mode pipelined
      why because
      > "BF.ADD" "k" "\\x00\\xff"
      < "#t\\r\\n"
      >raw "PING\\r\\n"
      <any "varies" "+PONG\\r\\n"
      > "HELLO" "3"
      <fields "proto" "server differs" "%1\\r\\n$5\\r\\nproto\\r\\n:3\\r\\n"
      end
      """;

  @Test
  void parsesEveryLineKind() {
    Recording r = Recording.parse(GOOD, "good");
    assertThat(r.cases()).hasSize(1);
    Recording.Case c = r.cases().get(0);
    assertThat(c.name()).isEqualTo("a/b@resp3");
    assertThat(c.proto()).isEqualTo(3);
    assertThat(c.pipelined()).isTrue();
    assertThat(c.why()).isEqualTo("because");
    assertThat(c.steps()).hasSize(3);
    assertThat(new String(c.steps().get(0).sent(), StandardCharsets.ISO_8859_1))
        .isEqualTo("*3\r\n$6\r\nBF.ADD\r\n$1\r\nk\r\n$2\r\n\u0000\u00ff\r\n");
    assertThat(c.steps().get(0).expected()).isInstanceOf(Recording.Exact.class);
    assertThat(c.steps().get(1).sent()).isEqualTo("PING\r\n".getBytes(StandardCharsets.US_ASCII));
    assertThat(c.steps().get(1).expected()).isInstanceOf(Recording.AnyOfType.class);
    assertThat(((Recording.Fields) c.steps().get(2).expected()).names()).containsExactly("proto");
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "> \"PING\"\n",                                          // a step before any case
      "case x\nproto 4\nmode sequential\n> \"PING\"\n< \"+PONG\\r\\n\"\nend\n",
      "case x\nproto 2\nmode sideways\n> \"PING\"\n< \"+PONG\\r\\n\"\nend\n",
      "case x\nproto 2\nmode sequential\n< \"+PONG\\r\\n\"\nend\n",   // reply without a step
      "case x\nproto 2\nmode sequential\n> \"PING\"\n> \"PING\"\nend\n", // step without a reply
      "case x\nproto 2\nmode sequential\n> \"PING\"\n< \"+PONG\\r\\n\"\n",   // no end
      "case x\nproto 2\nmode sequential\nend\n",                          // no steps
      "case x\nmode sequential\n> \"PING\"\n< \"+PONG\\r\\n\"\nend\n",     // no proto
      "case x\nproto 2\nmode sequential\n> \"PING\n< \"+PONG\\r\\n\"\nend\n", // unterminated
      "case x\nproto 2\nmode sequential\n> \"PI\\qNG\"\n< \"+PONG\\r\\n\"\nend\n", // bad escape
      "case x\nproto 2\nmode sequential\n> \"\\x4\"\n< \"+PONG\\r\\n\"\nend\n",    // short \\x
      "case x\nproto 2\nmode sequential\n> \"\\xzz\"\n< \"+PONG\\r\\n\"\nend\n",   // bad hex
      "case x\nproto 2\nmode sequential\n> \"PING\"  \"x\"\n< \"+PONG\\r\\n\"\nend\n", // two spaces
      "case x\nproto 2\nmode sequential\n> \"PING\"\n< \"+PONG\\r\\n\" \"extra\"\nend\n",
      "case x\nproto 2\nmode sequential\n> \"PING\"\n< +PONG\nend\n",      // unquoted
      "case x\nproto 2\nmode sequential\n> \"PING\"\n< \"+PONG\\r\\n\"\nend\ncase x\nproto 2\nmode sequential\n"
          + "> \"PING\"\n< \"+PONG\\r\\n\"\nend\n",                           // duplicate name
      "case bad name\n",
      "case x\nproto 2\nmode sequential\n> \"PING\"\n< \"+PONG\\r\\n\"\nproto 3\nend\n",
      "case x\nproto 2\nmode sequential\n> \"caf\u00e9\"\n< \"+PONG\\r\\n\"\nend\n", // unescaped non-ASCII
      "case x\nproto 2\nmode sequential\nbogus\nend\n",
  })
  void refusesMalformedRecordingsWithTheLine(String text) {
    assertThatThrownBy(() -> Recording.parse(text, "bad"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("bad");
  }

  @Test
  void escapingRoundTripsEveryByte() {
    byte[] all = new byte[256];
    for (int i = 0; i < 256; i++) {
      all[i] = (byte) i;
    }
    String shown = Escaped.of(all);
    assertThat(Escaped.parse(shown, 0).bytes()).isEqualTo(all);
    assertThat(Escaped.parse(shown, 0).end()).isEqualTo(shown.length());
  }

  @Test
  void readsEveryRespTypeExactly() throws IOException {
    String[] replies = {
        "+OK\r\n", "-ERR x\r\n", ":-5\r\n", "$3\r\na\r\n\r\n", "$-1\r\n", "*-1\r\n", "_\r\n", "#f\r\n",
        ",0.9\r\n", "(123\r\n", "!3\r\nerr\r\n", "=7\r\ntxt:abc\r\n", "*2\r\n:1\r\n$-1\r\n", "~1\r\n+a\r\n",
        "%1\r\n+k\r\n*1\r\n_\r\n", ">2\r\n+m\r\n:1\r\n", "*0\r\n",
    };
    for (String reply : replies) {
      byte[] bytes = reply.getBytes(StandardCharsets.ISO_8859_1);
      byte[] twice = (reply + reply).getBytes(StandardCharsets.ISO_8859_1);
      InputStream in = new ByteArrayInputStream(twice);
      assertThat(RespReply.read(in).raw()).as(reply).isEqualTo(bytes);
      assertThat(RespReply.read(in).raw()).as(reply).isEqualTo(bytes);
    }
    RespReply attributed = RespReply.parse("|1\r\n+ttl\r\n:3\r\n:42\r\n".getBytes(StandardCharsets.US_ASCII));
    assertThat(attributed.type()).isEqualTo((byte) ':');
    RespReply map = RespReply.parse("%2\r\n+a\r\n:1\r\n+proto\r\n:3\r\n".getBytes(StandardCharsets.US_ASCII));
    assertThat(map.field("proto").raw()).isEqualTo(":3\r\n".getBytes(StandardCharsets.US_ASCII));
    assertThat(map.field("none")).isNull();
  }

  @Test
  void everyTruncationOfAReplyIsAnEofNotAHang() throws IOException {
    byte[] reply = "*3\r\n$5\r\nhello\r\n%1\r\n+k\r\n:7\r\n:-1\r\n".getBytes(StandardCharsets.US_ASCII);
    assertThat(RespReply.parse(reply).raw()).isEqualTo(reply);
    for (int cut = 0; cut < reply.length; cut++) {
      byte[] prefix = java.util.Arrays.copyOf(reply, cut);
      assertThatThrownBy(() -> RespReply.parse(prefix)).as("cut at %d", cut).isInstanceOf(EOFException.class);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "?x\r\n", "$abc\r\n", "$-2\r\n", "*99999999999\r\n", "$999999999\r\n", "$3\r\nabcde", "+OK\rX",
      "$1\r\nab\r\n", "*1\r\n+a\r\n+extra\r\n",
  })
  void refusesHostileReplies(String reply) {
    assertThatThrownBy(() -> RespReply.parse(reply.getBytes(StandardCharsets.ISO_8859_1)))
        .isInstanceOf(IOException.class);
  }

  @Test
  void refusesDeepNestingAndRandomBytesCleanly() {
    byte[] deep = "*1\r\n".repeat(100).getBytes(StandardCharsets.US_ASCII);
    assertThatThrownBy(() -> RespReply.parse(deep)).isInstanceOf(IOException.class).hasMessageContaining("deeper");
    long seed = new Random().nextLong();
    Random random = new Random(seed);
    for (int i = 0; i < 2000; i++) {
      byte[] junk = new byte[random.nextInt(40)];
      random.nextBytes(junk);
      try {
        RespReply.parse(junk);
      } catch (IOException expected) {
        // the only allowed failure
      } catch (RuntimeException e) {
        throw new AssertionError("seed " + seed + ": " + Escaped.of(junk) + " threw " + e, e);
      }
    }
  }
}
