package io.bloomery.cluster.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.server.resp.Reply;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReplyCodecTest {
  private static final Reply EVERY_KIND = new Reply.Array(List.of(
      new Reply.Simple("OK"), new Reply.Error("ERR not found"), new Reply.Int(-42), new Reply.Int(Long.MAX_VALUE),
      new Reply.Bulk("é\r\n\0".getBytes(StandardCharsets.UTF_8)), new Reply.Bulk(new byte[0]), Reply.NIL,
      Reply.NIL_ARRAY, Reply.EMPTY_ARRAY,
      new Reply.MapReply(List.of(new Reply.Bulk("Capacity".getBytes(StandardCharsets.UTF_8)), new Reply.Int(100))),
      new Reply.SetReply(List.of(new Reply.Int(1))), new Reply.Bool(true), new Reply.Bool(false),
      new Reply.Dbl(0.125), new Reply.Dbl(Double.NEGATIVE_INFINITY), new Reply.Verbatim("txt", "info\r\nline"),
      new Reply.Array(List.of(new Reply.Array(List.of(Reply.OK))))));

  @Test
  void everyFrameKindRoundTrips() {
    Reply back = ReplyCodec.decode(ByteBuffer.wrap(ReplyCodec.encode(EVERY_KIND)));
    assertThat(back).usingRecursiveComparison().isEqualTo(EVERY_KIND);
  }

  @Test
  void aConstantTravelsAsTheFramesItWasMadeFrom() {
    assertThat(ReplyCodec.decode(ByteBuffer.wrap(ReplyCodec.encode(Reply.OK)))).isEqualTo(new Reply.Simple("OK"));
  }

  @Test
  void truncatedOrPaddedRepliesAreRefused() {
    byte[] good = ReplyCodec.encode(EVERY_KIND);
    for (int cut = 0; cut < good.length; cut++) {
      byte[] truncated = Arrays.copyOf(good, cut);
      assertThatThrownBy(() -> ReplyCodec.decode(ByteBuffer.wrap(truncated)))
          .isInstanceOf(IllegalArgumentException.class);
    }
    assertThatThrownBy(() -> ReplyCodec.decode(ByteBuffer.wrap(Arrays.copyOf(good, good.length + 1))))
        .hasMessage("1 bytes after the reply");
    assertThatThrownBy(() -> ReplyCodec.decode(ByteBuffer.wrap(new byte[] {99}))).hasMessage("unknown reply tag 99");
    byte[] deep = new byte[5 * 100];
    for (int i = 0; i < 100; i++) {
      ByteBuffer.wrap(deep, 5 * i, 5).put((byte) 7).putInt(1);
    }
    assertThatThrownBy(() -> ReplyCodec.decode(ByteBuffer.wrap(deep))).hasMessage("reply nested deeper than 64");
  }
}
