package io.bloomery.server.resp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RespEncoderTest {
  private static String encode(Reply r, int protocol) {
    ByteBuf out = Unpooled.buffer();
    RespEncoder.encode(r, protocol, out);
    return out.toString(StandardCharsets.ISO_8859_1);
  }

  @Test
  void resp3KindsFallBackToTheirResp2Forms() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("Capacity", 100L);
    m.put("Expansion rate", null);
    Reply map = Reply.map(m);
    assertThat(encode(map, 2)).isEqualTo("*4\r\n+Capacity\r\n:100\r\n+Expansion rate\r\n$-1\r\n");
    assertThat(encode(map, 3)).isEqualTo("%2\r\n+Capacity\r\n:100\r\n+Expansion rate\r\n_\r\n");
    assertThat(encode(Reply.bool(true), 2)).isEqualTo(":1\r\n");
    assertThat(encode(Reply.bool(false), 3)).isEqualTo("#f\r\n");
    assertThat(encode(new Reply.Dbl(0.9), 2)).isEqualTo("$3\r\n0.9\r\n");
    assertThat(encode(new Reply.Dbl(0.9), 3)).isEqualTo(",0.9\r\n");
    assertThat(encode(Reply.NIL_ARRAY, 2)).isEqualTo("*-1\r\n");
    assertThat(encode(new Reply.Verbatim("txt", "a"), 3)).isEqualTo("=5\r\ntxt:a\r\n");
    assertThat(encode(new Reply.Verbatim("txt", "a"), 2)).isEqualTo("$1\r\na\r\n");
    assertThat(encode(Reply.error("ERR x\r\ny"), 2)).isEqualTo("-ERR x  y\r\n");
  }

  /** Integers are written as Long.toString spells them: the edges, every length of digits, and a seeded sample. */
  @Test
  void integersAndLengthsAreWrittenAsLongToStringSpellsThem() {
    java.util.List<Long> values = new java.util.ArrayList<>(List.of(0L, 9L, 10L, 15L, 16L, -1L, -9L, -10L,
        Long.MAX_VALUE, Long.MIN_VALUE, Long.MIN_VALUE + 1, (long) Integer.MAX_VALUE, (long) Integer.MIN_VALUE));
    for (long p = 10; p > 0 && p <= Long.MAX_VALUE / 10; p *= 10) {
      values.addAll(List.of(p - 1, p, p + 1, -p + 1, -p, -p - 1));
    }
    long seed = System.nanoTime();
    java.util.SplittableRandom random = new java.util.SplittableRandom(seed);
    for (int i = 0; i < 10_000; i++) {
      values.add(random.nextLong() >> random.nextInt(64));
    }
    for (long v : values) {
      assertThat(encode(Reply.integer(v), 2)).as("seed %d, value %d", seed, v).isEqualTo(":" + v + "\r\n");
      ByteBuf out = Unpooled.buffer(1); // grows as the digits need
      out.writeByte('x');
      RespEncoder.decimal(out, v);
      assertThat(out.toString(StandardCharsets.US_ASCII)).as("seed %d", seed).isEqualTo("x" + v);
    }
    assertThat(encode(Reply.array(List.of(Reply.integer(12345))), 2)).isEqualTo("*1\r\n:12345\r\n");
  }

  /** A constant sends, byte for byte, what the reply it was made from sends, in both protocols. */
  @Test
  void aConstantEncodesExactlyAsItsReply() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("maybe_present", 1L);
    m.put("rate", 0.5);
    m.put("none", null);
    m.put("name", "x\u00e9");
    List<Reply> replies = List.of(Reply.OK, Reply.integer(-12345678901L), Reply.integer(7), Reply.bulk("a\r\nb"),
        Reply.NIL, Reply.NIL_ARRAY, Reply.EMPTY_ARRAY, Reply.bool(true), new Reply.Dbl(1e-5),
        new Reply.Verbatim("txt", "hi"), Reply.map(m), new Reply.SetReply(List.of(Reply.integer(1))),
        Reply.arrayOf(Reply.arrayOf(Reply.integer(0), Reply.integer(1), Reply.integer(0)), Reply.NIL));
    for (Reply r : replies) {
      Reply constant = Reply.constant(r);
      for (int protocol : new int[] {2, 3}) {
        assertThat(encode(constant, protocol)).as("%s in RESP%d", r, protocol).isEqualTo(encode(r, protocol));
      }
      assertThat(Reply.constant(constant)).isSameAs(constant);
    }
    assertThat(encode(Reply.constant(Reply.map(m)), 3))
        .isEqualTo("%4\r\n+maybe_present\r\n:1\r\n+rate\r\n,0.5\r\n+none\r\n_\r\n+name\r\n$3\r\nx\u00c3\u00a9\r\n");
    assertThat(encode(Reply.array(List.of(Reply.constant(Reply.integer(1)), Reply.integer(2))), 2))
        .isEqualTo("*2\r\n:1\r\n:2\r\n");
    assertThatThrownBy(() -> Reply.constant(Reply.error("ERR no"))).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("an error reply cannot be a constant");
  }

  @Test
  void doublesUseTheShortestText() {
    assertThat(RespEncoder.formatDouble(1.0)).isEqualTo("1");
    assertThat(RespEncoder.formatDouble(0.01)).isEqualTo("0.01");
    assertThat(RespEncoder.formatDouble(1e-7)).isEqualTo("1e-07");
    assertThat(RespEncoder.formatDouble(Double.POSITIVE_INFINITY)).isEqualTo("inf");
  }
}
