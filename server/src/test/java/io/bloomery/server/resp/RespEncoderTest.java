package io.bloomery.server.resp;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
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

  @Test
  void doublesUseTheShortestText() {
    assertThat(RespEncoder.formatDouble(1.0)).isEqualTo("1");
    assertThat(RespEncoder.formatDouble(0.01)).isEqualTo("0.01");
    assertThat(RespEncoder.formatDouble(1e-7)).isEqualTo("1e-07");
    assertThat(RespEncoder.formatDouble(Double.POSITIVE_INFINITY)).isEqualTo("inf");
  }
}
