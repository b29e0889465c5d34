package io.bloomery.server.resp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/** The request decoder, fed bytes whole, split at every byte, and hostile. */
class RespDecoderTest {
  private static final RespLimits LIMITS = RespLimits.DEFAULT;

  private static EmbeddedChannel channel(boolean authenticated) {
    return new EmbeddedChannel(new RespDecoder(LIMITS, () -> authenticated));
  }

  private static List<String> decode(EmbeddedChannel ch) {
    List<String> out = new ArrayList<>();
    RespRequest r;
    while ((r = ch.readInbound()) != null) {
      List<String> args = new ArrayList<>();
      for (byte[] a : r.argv()) {
        args.add(new String(a, StandardCharsets.ISO_8859_1));
      }
      out.add(String.join("|", args));
    }
    return out;
  }

  private static ByteBuf bytes(String s) {
    return Unpooled.copiedBuffer(s, StandardCharsets.ISO_8859_1);
  }

  private static final String PIPELINE = "*3\r\n$6\r\nBF.ADD\r\n$1\r\nk\r\n$0\r\n\r\n"
      + "PING\r\n"
      + "*2\r\n$4\r\nECHO\r\n$4\r\na\r\nb\r\n"
      + "  set  \"x y\" 'z\\'w' \"\\x41\\n\"\n"
      + "\r\n"
      + "*0\r\n"
      + "*1\r\n$4\r\nPING\r\n";

  private static final List<String> EXPECTED = List.of("BF.ADD|k|", "PING", "ECHO|a\r\nb", "set|x y|z'w|A\n", "PING");

  @Test
  void decodesPipelinedMultibulkAndInline() {
    EmbeddedChannel ch = channel(true);
    ch.writeInbound(bytes(PIPELINE));
    assertThat(decode(ch)).isEqualTo(EXPECTED);
  }

  @Test
  void decodesTheSameWhenSplitAtEveryByte() {
    byte[] all = PIPELINE.getBytes(StandardCharsets.ISO_8859_1);
    for (int cut = 1; cut < all.length; cut++) {
      EmbeddedChannel ch = channel(true);
      ch.writeInbound(Unpooled.wrappedBuffer(all, 0, cut));
      ch.writeInbound(Unpooled.wrappedBuffer(all, cut, all.length - cut));
      assertThat(decode(ch)).as("split at %d", cut).isEqualTo(EXPECTED);
    }
    EmbeddedChannel one = channel(true);
    for (byte b : all) {
      one.writeInbound(Unpooled.wrappedBuffer(new byte[] {b}));
    }
    assertThat(decode(one)).isEqualTo(EXPECTED);
  }

  /**
   * Sockets deliver direct buffers, which the decoder gathers on the heap ({@link RespDecoder#HEAP_CUMULATOR}): split
   * at every byte into direct buffers, with and without a heap piece after a direct one, every request comes out
   * whole and every buffer handed in is released.
   */
  @Test
  void directBuffersSplitAnywhereDecodeTheSameAndAreReleased() {
    byte[] all = PIPELINE.getBytes(StandardCharsets.ISO_8859_1);
    for (int cut = 1; cut < all.length; cut++) {
      for (boolean heapTail : new boolean[] {false, true}) {
        EmbeddedChannel ch = channel(true);
        ByteBuf head = Unpooled.directBuffer(cut).writeBytes(all, 0, cut);
        ByteBuf tail = heapTail ? Unpooled.copiedBuffer(all, cut, all.length - cut)
            : Unpooled.directBuffer(all.length - cut).writeBytes(all, cut, all.length - cut);
        ch.writeInbound(head);
        ch.writeInbound(tail);
        assertThat(decode(ch)).as("split at %d, heap tail %s", cut, heapTail).isEqualTo(EXPECTED);
        assertThat(head.refCnt()).as("head released").isZero();
        assertThat(tail.refCnt()).as("tail released").isZero();
        ch.finishAndReleaseAll();
      }
    }
    EmbeddedChannel one = channel(true);
    List<ByteBuf> pieces = new ArrayList<>();
    for (byte b : all) {
      ByteBuf piece = Unpooled.directBuffer(1).writeByte(b);
      pieces.add(piece);
      one.writeInbound(piece);
    }
    assertThat(decode(one)).isEqualTo(EXPECTED);
    assertThat(pieces).allSatisfy(piece -> assertThat(piece.refCnt()).isZero());
  }

  private static String protocolError(String input, boolean authenticated) {
    EmbeddedChannel ch = channel(authenticated);
    try {
      ch.writeInbound(bytes(input));
    } catch (DecoderException e) {
      assertThat(e.getCause()).isInstanceOf(RespProtocolException.class);
      return ((RespProtocolException) e.getCause()).reply();
    }
    throw new AssertionError("no protocol error for " + input);
  }

  @Test
  void hostileHeadersAreRefusedWithRedisWording() {
    assertThat(protocolError("*abc\r\n", true)).isEqualTo("ERR Protocol error: invalid multibulk length");
    assertThat(protocolError("*3000000000\r\n", true)).isEqualTo("ERR Protocol error: invalid multibulk length");
    assertThat(protocolError("*1\r\n$-5\r\n", true)).isEqualTo("ERR Protocol error: invalid bulk length");
    assertThat(protocolError("*1\r\n$536870913\r\n", true)).isEqualTo("ERR Protocol error: invalid bulk length");
    assertThat(protocolError("*1\r\n:1\r\n", true)).isEqualTo("ERR Protocol error: expected '$', got ':'");
    assertThat(protocolError("*1\r\n$007\r\n", true)).isEqualTo("ERR Protocol error: invalid bulk length");
    assertThat(protocolError("set \"abc\r\n", true)).isEqualTo("ERR Protocol error: unbalanced quotes in request");
    assertThat(protocolError("x".repeat(70_000), true)).isEqualTo("ERR Protocol error: too big inline request");
    assertThat(protocolError("*" + "1".repeat(70_000), true))
        .isEqualTo("ERR Protocol error: too big mbulk count string");
  }

  /**
   * Bulk headers are read in place when they are plain ({@code $}, digits, CRLF); every other line goes the general
   * way, so both read the same: odd but accepted lines, lengths past the limits, and a header longer than a tight
   * {@code maxInlineBytes}.
   */
  @Test
  void bulkHeadersReadInPlaceAgreeWithTheGeneralPath() {
    EmbeddedChannel ch = channel(true);
    ch.writeInbound(bytes("*3\r\n$4\r\nECHO\r\n$0\r\n\r\n$10\r\n0123456789\r\n*1\r\n$4\rXPING\r\n"));
    assertThat(decode(ch)).as("a CR then any byte ends a header line, as in Redis")
        .isEqualTo(List.of("ECHO||0123456789", "PING"));
    assertThat(protocolError("*1\r\n$100000000000000000\r\n", true)).isEqualTo("ERR Protocol error: invalid bulk length");
    assertThat(protocolError("*1\r\n$1000000000000000000\r\n", true)).isEqualTo("ERR Protocol error: invalid bulk length");
    assertThat(protocolError("*1\r\n$" + "9".repeat(21) + "\r\n", true))
        .isEqualTo("ERR Protocol error: invalid bulk length");
    assertThat(protocolError("*1\r\n$01\r\n", true)).isEqualTo("ERR Protocol error: invalid bulk length");
    assertThat(protocolError("*1\r\n$+1\r\n", true)).isEqualTo("ERR Protocol error: invalid bulk length");
    RespLimits tight = new RespLimits(1 << 20, 16, 1 << 20, 10, 16);
    for (int digits : new int[] {15, 16}) { // "$" and 15 digits fill a 16-byte line; one more does not
      EmbeddedChannel narrow = new EmbeddedChannel(new RespDecoder(tight, () -> true));
      assertThatThrownBy(() -> narrow.writeInbound(bytes("*1\r\n$" + "1".repeat(digits) + "\r\n")))
          .isInstanceOf(DecoderException.class).cause()
          .hasMessage(digits == 15 ? "Protocol error: invalid bulk length" : "Protocol error: too big bulk count string");
    }
  }

  @Test
  void unauthenticatedClientsGetTightLimits() {
    assertThat(protocolError("*11\r\n", false)).isEqualTo("ERR Protocol error: unauthenticated multibulk length");
    assertThat(protocolError("*2\r\n$4\r\nAUTH\r\n$16385\r\n", false))
        .isEqualTo("ERR Protocol error: unauthenticated bulk length");
    EmbeddedChannel ok = channel(true);
    ok.writeInbound(bytes("*11\r\n"));
    assertThat(decode(ok)).isEmpty();
  }

  @Test
  void aDeclaredHugeBulkAllocatesOnlyWhatArrives() {
    EmbeddedChannel ch = channel(true);
    // 500 MB declared, 10 bytes sent: the decoder waits with a small buffer instead of allocating 500 MB.
    ch.writeInbound(bytes("*2\r\n$4\r\nECHO\r\n$500000000\r\n0123456789"));
    assertThat(decode(ch)).isEmpty();
    assertThat(Runtime.getRuntime().totalMemory() - Runtime.getRuntime().freeMemory())
        .as("heap in use after declaring 500 MB").isLessThan(400_000_000L);
  }

  @Test
  void afterAnErrorTheRestOfTheStreamIsDiscarded() {
    EmbeddedChannel ch = channel(true);
    assertThatThrownBy(() -> ch.writeInbound(bytes("*1\r\n$x\r\nPING\r\n"))).isInstanceOf(DecoderException.class);
    ch.writeInbound(bytes("PING\r\n"));
    assertThat(decode(ch)).isEmpty();
  }

  @Provide
  Arbitrary<byte[]> respish() {
    Arbitrary<String> token = Arbitraries.of("*", "$", "\r\n", "\r", "\n", "1", "2", "0", "-1", "3", "PING", " ",
        "\"", "'", "\\", "x", "99999999999999999999", "*2\r\n$4\r\nECHO\r\n$1\r\na\r\n", "$5\r\nhello\r\n");
    return token.list().ofMaxSize(40).map(l -> String.join("", l).getBytes(StandardCharsets.ISO_8859_1));
  }

  /** Arbitrary input, split anywhere: either requests or a protocol error, never another exception. */
  @Property(tries = 400)
  void arbitraryInputOnlyYieldsRequestsOrProtocolErrors(@ForAll("respish") byte[] input,
      @ForAll @Size(max = 4) List<Integer> cuts) {
    EmbeddedChannel ch = channel(true);
    int from = 0;
    List<Integer> points = new ArrayList<>();
    for (int c : cuts) {
      points.add(Math.floorMod(c, input.length + 1));
    }
    points.sort(Integer::compare);
    points.add(input.length);
    try {
      for (int p : points) {
        if (p > from) {
          ch.writeInbound(Unpooled.wrappedBuffer(input, from, p - from));
          from = p;
        }
      }
    } catch (DecoderException e) {
      assertThat(e.getCause()).isInstanceOf(RespProtocolException.class);
    }
    RespRequest r;
    while ((r = ch.readInbound()) != null) {
      assertThat(r.argv()).isNotEmpty();
    }
    ch.finishAndReleaseAll();
  }

  /** Split points never change the result. */
  @Property(tries = 200)
  void splittingNeverChangesTheResult(@ForAll("respish") byte[] input, @ForAll int seedCut) {
    String whole = outcome(input, -1);
    int cut = input.length == 0 ? 0 : Math.floorMod(seedCut, input.length);
    assertThat(outcome(input, cut)).isEqualTo(whole);
  }

  private static String outcome(byte[] input, int cut) {
    EmbeddedChannel ch = channel(true);
    String error = "";
    try {
      if (cut < 0) {
        ch.writeInbound(Unpooled.wrappedBuffer(input));
      } else {
        ch.writeInbound(Unpooled.wrappedBuffer(input, 0, cut));
        ch.writeInbound(Unpooled.wrappedBuffer(input, cut, input.length - cut));
      }
    } catch (DecoderException e) {
      error = ((RespProtocolException) e.getCause()).reply();
    }
    return decode(ch) + error;
  }
}
