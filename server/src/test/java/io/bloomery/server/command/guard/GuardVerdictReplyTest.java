package io.bloomery.server.command.guard;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.guard.Verdict;
import io.bloomery.server.resp.RespEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The verdict replies, encoded once per kind ({@code Reply.constant}), byte for byte in RESP2 and RESP3. */
class GuardVerdictReplyTest {
  private static String encode(Verdict v, int protocol) {
    ByteBuf out = Unpooled.buffer();
    RespEncoder.encode(GuardCommands.verdict(v, protocol), protocol, out);
    return out.toString(StandardCharsets.US_ASCII);
  }

  @Test
  void everyVerdictIsThreeIntegersInRespTwoAndAMapInRespThree() {
    int[][] valid = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {1, 1, 1}}; // what Verdict admits
    for (int[] bits : valid) {
      int maybe = bits[0];
      int checked = bits[1];
      int duplicate = bits[2];
      Verdict v = new Verdict(maybe == 1, checked == 1, duplicate == 1);
      assertThat(encode(v, 2)).as("%s in RESP2", v)
          .isEqualTo("*3\r\n:" + maybe + "\r\n:" + checked + "\r\n:" + duplicate + "\r\n");
      assertThat(encode(v, 3)).as("%s in RESP3", v).isEqualTo("%3\r\n+maybe_present\r\n:" + maybe
          + "\r\n+exact_checked\r\n:" + checked + "\r\n+duplicate\r\n:" + duplicate + "\r\n");
    }
  }
}
