package io.bloomery.server.resp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import java.lang.management.ManagementFactory;
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
    // 500 MB declared, 10 bytes sent: the decoder waits with a small buffer instead of allocating 500 MB. The
    // embedded channel decodes on this thread, so this thread's allocations are the decoder's (the heap's
    // occupancy would also count other tests' garbage).
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long before = threads.getCurrentThreadAllocatedBytes();
    ch.writeInbound(bytes("*2\r\n$4\r\nECHO\r\n$500000000\r\n0123456789"));
    long allocated = threads.getCurrentThreadAllocatedBytes() - before;
    assertThat(decode(ch)).isEmpty();
    assertThat(allocated).as("bytes allocated decoding a declared 500 MB bulk of which 10 bytes arrived")
        .isLessThan(16L << 20);
  }

  @Test
  void afterAnErrorTheRestOfTheStreamIsDiscarded() {
    EmbeddedChannel ch = channel(true);
    assertThatThrownBy(() -> ch.writeInbound(bytes("*1\r\n$x\r\nPING\r\n"))).isInstanceOf(DecoderException.class);
    ch.writeInbound(bytes("PING\r\n"));
    assertThat(decode(ch)).isEmpty();
  }

  @Test
  void clientBytesInAnErrorAreEscaped() {
    assertThat(protocolError("*1\r\n\u001b[2J\r\n", true)).isEqualTo("ERR Protocol error: expected '$', got '\\x1b'");
    assertThat(protocolError("*1\r\n\nx\r\n", true)).isEqualTo("ERR Protocol error: expected '$', got '\\n'");
    assertThat(protocolError("*1\r\n+x\r\n", true)).isEqualTo("ERR Protocol error: expected '$', got '+'");
  }

  /**
   * The attack of a huge declared count followed by empty arguments: each costs its array's header and its slot in
   * the argument list, 40 bytes, not the 6 bytes it takes on the wire, so a 1 MB limit stops it after about 26000.
   */
  @Test
  void emptyArgumentsCountTheHeapTheyTakeNotTheirWireBytes() {
    RespLimits oneMegabyte = new RespLimits(1 << 20, 64 * 1024, 1 << 20, 10, 16 * 1024);
    EmbeddedChannel ch = new EmbeddedChannel(new RespDecoder(oneMegabyte, () -> true));
    ch.writeInbound(bytes("*268000001\r\n$6\r\nBF.ADD\r\n"));
    String thousand = "$0\r\n\r\n".repeat(1000);
    int sent = 0;
    RespProtocolException refused = null;
    while (refused == null && sent < 100_000) {
      try {
        ch.writeInbound(bytes(thousand));
        sent += 1000;
      } catch (DecoderException e) {
        refused = (RespProtocolException) e.getCause();
      }
    }
    assertThat(refused).as("refused within 100000 empty arguments").isNotNull();
    assertThat(refused.reply()).isEqualTo("ERR Protocol error: query buffer limit reached");
    assertThat(sent).isLessThan((1 << 20) / RespDecoder.ARGUMENT_OVERHEAD);
  }

  /**
   * Connections reading commands that arrive in pieces reserve from one budget before they allocate: one that would
   * pass it is refused while the other goes on, and what a connection held comes back when its command completes
   * or the connection closes.
   */
  @Test
  void pendingCommandsOfAllConnectionsShareOneBudget() {
    QueryMemory memory = new QueryMemory(2 << 20);
    EmbeddedChannel first = new EmbeddedChannel(new RespDecoder(LIMITS, () -> true, memory));
    EmbeddedChannel second = new EmbeddedChannel(new RespDecoder(LIMITS, () -> true, memory));
    String header = "*2\r\n$4\r\nECHO\r\n$900000\r\n";
    first.writeInbound(bytes(header + "x".repeat(600_000)));
    assertThat(memory.held()).isBetween(600_000L, 1L << 20);
    // 1.6 MB would fit alone, not beside the first connection's 600 KB
    assertThatThrownBy(() -> second.writeInbound(bytes("*2\r\n$4\r\nECHO\r\n$1700000\r\n" + "y".repeat(1_600_000))))
        .hasCauseInstanceOf(RespProtocolException.class)
        .cause().hasMessage("Protocol error: clients' pending commands reached maxmemory-clients");
    long firstHolds = memory.held();
    assertThat(firstHolds).as("the refused connection gave back what it held").isLessThan(1L << 20);
    second.finishAndReleaseAll();
    assertThat(memory.held()).isEqualTo(firstHolds);
    first.writeInbound(bytes("x".repeat(300_000) + "\r\n"));
    assertThat(decode(first)).hasSize(1);
    assertThat(memory.held()).as("a complete command holds nothing here").isZero();
    EmbeddedChannel third = new EmbeddedChannel(new RespDecoder(LIMITS, () -> true, memory));
    third.writeInbound(bytes(header + "z".repeat(500_000)));
    assertThat(memory.held()).isPositive();
    third.finishAndReleaseAll();
    assertThat(memory.held()).as("a closed connection gave back what it held").isZero();
  }

  /**
   * Whole frames in one heap buffer take the decoder's one-pass path; fed a byte at a time the same bytes go through
   * the state machine. Odd frames that the fast path must hand over: a declared count above the headers present
   * (waits, then completes), bytes after a bulk that are not CRLF (skipped, as Redis does), a length past what has
   * arrived, a leading zero, a frame over the query buffer limit, and an unauthenticated client's limits.
   */
  @Test
  void wholeFramesReadInOnePassAgreeWithTheStateMachine() {
    String[] inputs = {
      "*3\r\n$6\r\nBF.ADD\r\n$5\r\nbench\r\n$12\r\nkey:00012345\r\n".repeat(16),
      "*3\r\n$4\r\nECHO\r\n$1\r\na\r\n",
      "*1\r\n$4\r\nPINGxx*1\r\n$4\r\nPING\r\n",
      "*2\r\n$4\r\nECHO\r\n$9\r\nshort\r\n",
      "*2\r\n$4\r\nECHO\r\n$05\r\nhello\r\n",
      "*02\r\n$4\r\nECHO\r\n$1\r\nx\r\n",
      "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n*1\r\n$4\r\nPING\n\n",
      "*1\r\n$3\r\nabc\r",
      "*1\r\n$3\rXabc\r\n",
      "*" + "9".repeat(18) + "\r\n$1\r\nx\r\n",
      "*2\r\n$4\r\nAUTH\r\n$16385\r\n" + "p".repeat(16385) + "\r\n",
      "*11\r\n" + "$1\r\nx\r\n".repeat(11),
    };
    RespLimits tight = new RespLimits(1 << 20, 16, 64, 10, 16);
    for (RespLimits limits : new RespLimits[] {LIMITS, tight}) {
      for (boolean authenticated : new boolean[] {true, false}) {
        for (String input : inputs) {
          byte[] all = input.getBytes(StandardCharsets.ISO_8859_1);
          assertThat(outcome(limits, authenticated, all, true))
              .as("%s, authenticated %s, limits %s", input.length() > 80 ? input.substring(0, 80) : input,
                  authenticated, limits)
              .isEqualTo(outcome(limits, authenticated, all, false));
        }
      }
    }
    EmbeddedChannel ch = channel(true);
    ch.writeInbound(bytes("*1\r\n$4\r\nPINGxx*3\r\n$4\r\nECHO\r\n$1\r\na\r\n"));
    assertThat(decode(ch)).isEqualTo(List.of("PING"));
    ch.writeInbound(bytes("$2\r\nbc\r\n"));
    assertThat(decode(ch)).as("the rest of a frame the fast path left to the state machine").isEqualTo(
        List.of("ECHO|a|bc"));
    assertThat(outcome(tight, true, "*2\r\n$4\r\nECHO\r\n$60\r\n".concat("y".repeat(60)).concat("\r\n")
        .getBytes(StandardCharsets.ISO_8859_1), true)).isEqualTo("[]ERR Protocol error: query buffer limit reached");
  }

  /** Frames from a grammar with hostile variations: whole in one buffer and a byte at a time read the same. */
  @Property(tries = 400)
  void wholeFramesAndByteAtATimeAlwaysAgree(@ForAll("frames") byte[] input, @ForAll boolean authenticated,
      @ForAll boolean tightLimits) {
    RespLimits limits = tightLimits ? new RespLimits(1 << 20, 16, 200, 3, 24) : LIMITS;
    assertThat(outcome(limits, authenticated, input, true)).isEqualTo(outcome(limits, authenticated, input, false));
  }

  @Provide
  Arbitrary<byte[]> frames() {
    Arbitrary<String> body = Arbitraries.strings().withChars("abc\r\n*$0").ofMaxLength(30);
    Arbitrary<String> argument = Arbitraries.oneOf(
        body.map(b -> "$" + b.length() + "\r\n" + b + "\r\n"), // plain
        body.map(b -> "$" + b.length() + "\r\n" + b + "xy"), // other bytes after the bulk
        body.map(b -> "$0" + b.length() + "\r\n" + b + "\r\n"), // leading zero
        body.map(b -> "$" + (b.length() + 3) + "\r\n" + b + "\r\n"), // declares more than it sends
        body.map(b -> "$" + b.length() + "\r" + b + "\r\n"), // a header without its LF
        body.map(b -> "$-" + b.length() + "\r\n"),
        Arbitraries.of(":1\r\n", "$" + "9".repeat(19) + "\r\n", "$\r\n", "$4\r\nPING\r\n"));
    Arbitrary<String> frame = Arbitraries.integers().between(-1, 6).flatMap(declared -> argument.list()
        .ofMaxSize(6).map(args -> "*" + declared + "\r\n" + String.join("", args)));
    Arbitrary<String> piece = Arbitraries.oneOf(frame, frame, frame, Arbitraries.of("PING\r\n", "*0\r\n", "*01\r\n"));
    return piece.list().ofMaxSize(5).map(l -> String.join("", l).getBytes(StandardCharsets.ISO_8859_1));
  }

  /** Requests then any protocol error, from the input whole in one heap buffer or one byte per read. */
  private static String outcome(RespLimits limits, boolean authenticated, byte[] input, boolean whole) {
    EmbeddedChannel ch = new EmbeddedChannel(new RespDecoder(limits, () -> authenticated));
    String error = "";
    try {
      if (whole) {
        ch.writeInbound(Unpooled.wrappedBuffer(input));
      } else {
        for (byte b : input) {
          ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {b}));
        }
      }
    } catch (DecoderException e) {
      error = ((RespProtocolException) e.getCause()).reply();
    }
    String result = decode(ch) + error;
    ch.finishAndReleaseAll();
    return result;
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
