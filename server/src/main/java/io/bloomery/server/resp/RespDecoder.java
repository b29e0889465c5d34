package io.bloomery.server.resp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * Decodes client requests, multibulk ({@code *n\r\n$len\r\nbytes\r\n...}) or inline ({@code PING\r\n}), into
 * {@link RespRequest}s, any number per read (pipelining), from input split anywhere.
 *
 * <p>An explicit state machine: {@code START} looks at the first byte; {@code ARG_HEADER} reads a {@code $len} line;
 * {@code ARG_BODY} copies bulk bytes as they arrive; {@code ARG_END} skips the CRLF after a bulk. Nothing is ever
 * allocated from a length the client declared: the argument list grows from at most 16 slots and a bulk buffer
 * from at most 16 KB, each growing only as bytes actually arrive.
 *
 * <p>Memory is counted as the heap a command takes, not as the bytes it arrived in: each argument costs
 * {@link #argumentCost its length rounded up to 8 plus {@value #ARGUMENT_OVERHEAD} bytes} (the array's header and
 * its share of the argument list), so an empty argument, 6 bytes on the wire, counts 40. Two limits apply. The
 * connection's own ({@link RespLimits#maxQueryBufferBytes()}, {@code client-query-buffer-limit}) is checked on
 * each argument's declared length before any byte of its body is read. The total across connections
 * ({@link QueryMemory}, {@code maxmemory-clients}) is reserved before each allocation for a command that arrives
 * in pieces (what the state machine allocates) and given back when the command is complete, so a client declaring
 * a large bulk holds only what it has sent. An unauthenticated connection gets Redis's post-CVE-2021-32675 limits.
 * A violation throws {@link RespProtocolException} with Redis's wording; the decoder then gives back what it held
 * and discards everything else it is given.
 */
public final class RespDecoder extends ByteToMessageDecoder {

  private enum State { START, ARG_HEADER, ARG_BODY, ARG_END, FAILED }

  private static final int FIRST_BUFFER_BYTES = 16 * 1024;
  /** The query buffer limit of a connection that has not authenticated yet. */
  private static final long UNAUTHENTICATED_QUERY_BYTES = 1024 * 1024;

  /**
   * Bytes counted per argument besides its payload: the {@code byte[]} header (16) and its share of the argument
   * list, a reference of up to 8 bytes of which the list holds up to three per argument while it grows (24).
   */
  static final int ARGUMENT_OVERHEAD = 40;
  /** Bytes counted per multibulk command besides its arguments: the request, its list and their headers. */
  static final int COMMAND_OVERHEAD = 64;
  /**
   * The heap a whole frame may take for the fast path to build it without reserving from {@link QueryMemory}: it
   * is built from bytes already received (at most one socket read) and handed on at once.
   */
  private static final long UNRESERVED_FRAME_BYTES = 64 * 1024;
  /**
   * How much {@link #reserve} takes from {@link #memory} at least, so that a command of many small arguments goes to
   * the shared counter once per this many bytes, not once per argument; a connection holds at most this much more
   * than it counts.
   */
  private static final long RESERVE_CHUNK = 8 * 1024;

  private final RespLimits limits;
  private final BooleanSupplier authenticated;
  private final QueryMemory memory;
  /** Bytes this connection holds reserved in {@link #memory} for the command being read. */
  private long reserved;
  /** Of {@link #reserved}, the bytes counted for what the command being read has allocated. */
  private long used;

  private State state = State.START;
  private long argumentsLeft;
  private List<byte[]> argv;
  private byte[] bulk;
  private int bulkLength;
  private int bulkFilled;
  private long commandBytes;

  /**
   * @param authenticated whether the connection has authenticated (or needs no password); read per frame
   * @param memory the total budget shared by every connection's decoder
   */
  public RespDecoder(RespLimits limits, BooleanSupplier authenticated, QueryMemory memory) {
    this.limits = limits;
    this.authenticated = authenticated;
    this.memory = memory;
    setCumulator(HEAP_CUMULATOR);
  }

  /** A decoder with no total limit across connections (its own limits still apply). */
  public RespDecoder(RespLimits limits, BooleanSupplier authenticated) {
    this(limits, authenticated, QueryMemory.unlimited());
  }

  /**
   * The heap an argument of {@code length} bytes is counted as: its payload rounded up to 8 plus
   * {@value #ARGUMENT_OVERHEAD}.
   */
  static long argumentCost(long length) {
    return ARGUMENT_OVERHEAD + aligned(length);
  }

  private static long aligned(long bytes) {
    return (bytes + 7) & ~7L;
  }

  /**
   * Gathers what the socket delivers in a heap buffer, one bulk copy per read. The decoder reads a request in many
   * small pieces (a call of 1000 items: 1000 header lines and 1000 argument copies); on a heap buffer each is an
   * array read or {@code System.arraycopy}, while on a direct buffer without {@code sun.misc.Unsafe} (Netty's
   * default from Java 25) each goes through a fresh {@code ByteBuffer} view, which made header parsing and argument
   * copies 38 % of the event loop's time in GUARD.MEXISTS calls of 1000 items (docs/BENCHMARKS.md, "Guarded sets
   * over RESP").
   */
  static final Cumulator HEAP_CUMULATOR = (alloc, cumulation, in) -> {
    if (!cumulation.isReadable() && in.hasArray()) {
      cumulation.release();
      return in; // already on the heap
    }
    try {
      int needed = in.readableBytes();
      if (cumulation.hasArray() && cumulation.refCnt() == 1 && !cumulation.isReadOnly()
          && needed <= cumulation.maxWritableBytes()) {
        cumulation.writeBytes(in);
        return cumulation;
      }
      int unread = cumulation.readableBytes();
      ByteBuf merged = alloc.heapBuffer(alloc.calculateNewCapacity(unread + needed, Integer.MAX_VALUE));
      merged.writeBytes(cumulation, cumulation.readerIndex(), unread).writeBytes(in);
      cumulation.release();
      return merged;
    } finally {
      in.release();
    }
  };

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    while (in.isReadable()) {
      if (state == State.START) {
        RespRequest whole = wholeFrame(in);
        if (whole != null) {
          out.add(whole);
          continue;
        }
      }
      RespRequest request = step(in);
      if (request != null) {
        out.add(request);
      } else if (state == State.FAILED) {
        in.skipBytes(in.readableBytes());
        return;
      } else if (!progressed) {
        return;
      }
    }
  }

  private boolean progressed;
  /** Scratch for the digits of one header line (at most 20, checked before copying), reused per connection. */
  private final byte[] digits = new byte[20];

  /**
   * Advances the state machine by one step. Returns a request when one is complete; otherwise {@code null}, with
   * {@link #progressed} telling whether bytes were consumed (if not, more input is needed).
   */
  private RespRequest step(ByteBuf in) {
    progressed = false;
    try {
      switch (state) {
        case START:
          return start(in);
        case ARG_HEADER:
          argumentHeader(in);
          return null;
        case ARG_BODY:
          argumentBody(in);
          return null;
        case ARG_END:
          return argumentEnd(in);
        default:
          in.skipBytes(in.readableBytes());
          return null;
      }
    } catch (RuntimeException | Error e) { // a protocol error, or anything else: this connection reads no more
      state = State.FAILED;
      argv = null;
      bulk = null;
      giveBack();
      throw e;
    }
  }

  /** The connection is closing: what the command being read held goes back to the budget. */
  @Override
  protected void handlerRemoved0(ChannelHandlerContext ctx) {
    argv = null;
    bulk = null;
    giveBack();
  }

  /**
   * Counts {@code bytes} against the total budget before they are allocated, taking from it in chunks of at least
   * {@link #RESERVE_CHUNK}; fails the connection only if the bytes themselves do not fit.
   */
  private void reserve(long bytes) {
    long need = used + bytes - reserved;
    if (need > 0) {
      long take = Math.max(need, RESERVE_CHUNK);
      if (!memory.reserve(take)) {
        if (take == need || !memory.reserve(need)) {
          throw new RespProtocolException("clients' pending commands reached maxmemory-clients");
        }
        take = need;
      }
      reserved += take;
    }
    used += bytes;
  }

  /** An allocation of the command being read was let go: its bytes count no more, beyond a chunk they go back. */
  private void unreserve(long bytes) {
    used -= bytes;
    long spare = reserved - used - RESERVE_CHUNK;
    if (spare > 0) {
      memory.release(spare);
      reserved -= spare;
    }
  }

  private void giveBack() {
    memory.release(reserved);
    reserved = 0;
    used = 0;
  }

  private RespRequest start(ByteBuf in) {
    if (in.getByte(in.readerIndex()) != '*') {
      return inline(in);
    }
    int end = lineEnd(in, "too big mbulk count string");
    if (end < 0) {
      return null;
    }
    long count = parseLine(in, in.readerIndex() + 1, end, "invalid multibulk length");
    consumeLine(in, end);
    if (count > Integer.MAX_VALUE) {
      throw new RespProtocolException("invalid multibulk length");
    }
    if (count <= 0) {
      return null; // Redis treats *0 and *-n as an empty command and keeps the connection
    }
    if (!authenticated.getAsBoolean() && count > limits.unauthenticatedMaxArguments()) {
      throw new RespProtocolException("unauthenticated multibulk length");
    }
    argumentsLeft = count;
    commandBytes = 0;
    countCommandBytes(COMMAND_OVERHEAD);
    reserve(COMMAND_OVERHEAD);
    argv = new ArrayList<>((int) Math.min(count, 16));
    state = State.ARG_HEADER;
    return null;
  }

  private void argumentHeader(ByteBuf in) {
    long length;
    int lineBytes = plainHeaderBytes(in);
    if (lineBytes > 0) {
      length = plainHeaderLength;
      in.skipBytes(lineBytes);
      progressed = true;
    } else {
      int end = lineEnd(in, "too big bulk count string");
      if (end < 0) {
        return;
      }
      byte first = in.getByte(in.readerIndex());
      if (first != '$') {
        throw new RespProtocolException("expected '$', got '" + ClientText.escape(first) + "'");
      }
      length = parseLine(in, in.readerIndex() + 1, end, "invalid bulk length");
      consumeLine(in, end);
    }
    if (length < 0 || length > limits.maxBulkBytes()) {
      throw new RespProtocolException("invalid bulk length");
    }
    if (!authenticated.getAsBoolean() && length > limits.unauthenticatedMaxBulkBytes()) {
      throw new RespProtocolException("unauthenticated bulk length");
    }
    countCommandBytes(argumentCost(length));
    bulkLength = (int) length;
    bulkFilled = 0;
    int first = Math.min(bulkLength, FIRST_BUFFER_BYTES);
    reserve(ARGUMENT_OVERHEAD + aligned(first));
    bulk = new byte[first];
    state = State.ARG_BODY;
  }

  private void argumentBody(ByteBuf in) {
    int take = Math.min(in.readableBytes(), bulkLength - bulkFilled);
    if (bulkFilled + take > bulk.length) {
      int grown = (int) Math.min(Math.max((long) bulk.length * 2, bulkFilled + take), bulkLength);
      reserve(aligned(grown)); // both arrays live while one is copied into the other
      int old = bulk.length;
      bulk = Arrays.copyOf(bulk, grown);
      unreserve(aligned(old));
    }
    in.readBytes(bulk, bulkFilled, take);
    bulkFilled += take;
    progressed = take > 0 || bulkLength == 0;
    if (bulkFilled == bulkLength) {
      state = State.ARG_END;
      progressed = true;
    }
  }

  private RespRequest argumentEnd(ByteBuf in) {
    if (in.readableBytes() < 2) {
      return null;
    }
    in.skipBytes(2); // Redis skips the two bytes after a bulk without looking at them
    progressed = true;
    argv.add(bulk.length == bulkLength ? bulk : Arrays.copyOf(bulk, bulkLength));
    bulk = null;
    if (--argumentsLeft > 0) {
      state = State.ARG_HEADER;
      return null;
    }
    state = State.START;
    List<byte[]> done = argv;
    argv = null;
    giveBack(); // the command goes on to run; reading it holds nothing more
    return new RespRequest(done);
  }

  private RespRequest inline(ByteBuf in) {
    int newline = in.indexOf(in.readerIndex(), in.writerIndex(), (byte) '\n');
    if (newline < 0) {
      if (in.readableBytes() > limits.maxInlineBytes()) {
        throw new RespProtocolException("too big inline request");
      }
      return null;
    }
    if (newline - in.readerIndex() > limits.maxInlineBytes()) {
      throw new RespProtocolException("too big inline request");
    }
    int end = newline;
    if (end > in.readerIndex() && in.getByte(end - 1) == '\r') {
      end--;
    }
    byte[] line = new byte[end - in.readerIndex()];
    in.getBytes(in.readerIndex(), line);
    in.readerIndex(newline + 1);
    progressed = true;
    List<byte[]> args = InlineSplitter.split(line);
    if (args == null) {
      throw new RespProtocolException("unbalanced quotes in request");
    }
    if (args.isEmpty()) {
      return null;
    }
    if (!authenticated.getAsBoolean() && args.size() > limits.unauthenticatedMaxArguments()) {
      throw new RespProtocolException("unauthenticated multibulk length");
    }
    return new RespRequest(args);
  }

  /**
   * The fast path for the common case, a whole multibulk frame already in a heap buffer with plain headers
   * ({@code *} or {@code $}, 1 to 18 digits without a leading zero, CRLF) within every limit: reads it in one pass
   * over the array, then copies each argument once into an argument list of the declared size (which is at most the
   * number of headers actually present, so nothing is allocated from an unchecked length). Anything else (a frame
   * not all here, an odd header, a limit crossed, a direct buffer) returns {@code null} with nothing consumed, and the
   * state machine reads it, from the same first byte, to the same request or the same error. Every frame this
   * accepts, the state machine reads to the same arguments.
   */
  private RespRequest wholeFrame(ByteBuf in) {
    if (!in.hasArray()) {
      return null;
    }
    byte[] a = in.array();
    int base = in.arrayOffset();
    int start = base + in.readerIndex();
    int end = base + in.writerIndex();
    if (a[start] != '*') {
      return null;
    }
    int maxDigits = Math.min(18, limits.maxInlineBytes() - 1);
    long count = plainNumber(a, start + 1, end, maxDigits);
    if (count <= 0) {
      return null; // malformed, incomplete or *0: the state machine's business
    }
    boolean authed = authenticated.getAsBoolean();
    if (count > (authed ? Integer.MAX_VALUE : limits.unauthenticatedMaxArguments())) {
      return null;
    }
    int p = numberEnd + 2;
    long total = COMMAND_OVERHEAD; // as countCommandBytes counts the command
    long queryLimit = authed ? limits.maxQueryBufferBytes() : UNAUTHENTICATED_QUERY_BYTES;
    long maxBulk = authed ? limits.maxBulkBytes() : Math.min(limits.maxBulkBytes(), limits.unauthenticatedMaxBulkBytes());
    int first = p;
    // Pass 1: every header plain, every body and its two trailing bytes here, every limit kept. Each header takes at
    // least 4 bytes, so the loop ends within the buffer whatever count says.
    for (long i = 0; i < count; i++) {
      if (p >= end || a[p] != '$') {
        return null;
      }
      long length = plainNumber(a, p + 1, end, maxDigits);
      if (length < 0 || length > maxBulk) {
        return null;
      }
      int body = numberEnd + 2;
      total += argumentCost(length);
      if (total > queryLimit || length > end - body - 2) {
        return null;
      }
      p = body + (int) length + 2; // Redis skips the two bytes after a bulk without looking at them
    }
    boolean reserving = total > UNRESERVED_FRAME_BYTES;
    if (reserving && !memory.reserve(total)) {
      return null; // the state machine reads as much as the budget allows, then refuses
    }
    // Pass 2: the copies.
    List<byte[]> args = new ArrayList<>((int) count);
    int q = first;
    for (long i = 0; i < count; i++) {
      long length = plainNumber(a, q + 1, end, maxDigits);
      int body = numberEnd + 2;
      args.add(Arrays.copyOfRange(a, body, body + (int) length));
      q = body + (int) length + 2;
    }
    in.skipBytes(p - start);
    if (reserving) {
      memory.release(total);
    }
    return new RespRequest(args);
  }

  /** Where the digits {@link #plainNumber} read end (the CR of their line). */
  private int numberEnd;

  /**
   * A plain non-negative number at {@code a[from..]}: 1 to {@code maxDigits} digits, no leading zero unless it is
   * {@code 0} alone, then CRLF within {@code end}; its value (the CR's index in {@link #numberEnd}), or -1.
   */
  private long plainNumber(byte[] a, int from, int end, int maxDigits) {
    int p = from;
    int digitsEnd = Math.min(end, from + maxDigits);
    long value = 0;
    while (p < digitsEnd && a[p] >= '0' && a[p] <= '9') {
      value = value * 10 + (a[p] - '0');
      p++;
    }
    int digits = p - from;
    if (digits == 0 || (digits > 1 && a[from] == '0') || p + 1 >= end || a[p] != '\r' || a[p + 1] != '\n') {
      return -1;
    }
    numberEnd = p;
    return value;
  }

  /** The value of the header line {@link #plainHeaderBytes} found. */
  private long plainHeaderLength;

  /**
   * The common bulk header, {@code $}, 1 to 18 digits without a leading zero (and no longer than
   * {@link RespLimits#maxInlineBytes()} allows), CRLF, read in place from a heap buffer:
   * the line's length in bytes (its value in {@link #plainHeaderLength}), or 0 for anything else (incomplete,
   * malformed, a direct buffer), which the general path then reads or refuses with Redis's wording. Every line this
   * accepts, the general path reads to the same value.
   */
  private int plainHeaderBytes(ByteBuf in) {
    if (!in.hasArray()) {
      return 0;
    }
    byte[] a = in.array();
    int start = in.arrayOffset() + in.readerIndex();
    int end = in.arrayOffset() + in.writerIndex();
    if (start >= end || a[start] != '$') {
      return 0;
    }
    int p = start + 1;
    int digitsEnd = Math.min(end, p + Math.min(18, limits.maxInlineBytes() - 1)); // a longer line: general path
    long value = 0;
    while (p < digitsEnd && a[p] >= '0' && a[p] <= '9') {
      value = value * 10 + (a[p] - '0');
      p++;
    }
    int digits = p - start - 1;
    if (digits == 0 || (digits > 1 && a[start + 1] == '0') || p + 1 >= end || a[p] != '\r' || a[p + 1] != '\n') {
      return 0;
    }
    plainHeaderLength = value;
    return p + 2 - start;
  }

  /** The index of the CR of a CRLF-terminated header line starting at the reader index, or -1 if incomplete. */
  private int lineEnd(ByteBuf in, String tooLong) {
    int from = in.readerIndex();
    int scanTo = Math.min(in.writerIndex(), from + limits.maxInlineBytes() + 1);
    int cr = in.indexOf(from, scanTo, (byte) '\r');
    if (cr < 0) {
      if (in.readableBytes() > limits.maxInlineBytes()) {
        throw new RespProtocolException(tooLong);
      }
      return -1;
    }
    if (cr + 1 >= in.writerIndex()) {
      return -1; // the LF has not arrived yet
    }
    return cr;
  }

  private long parseLine(ByteBuf in, int from, int to, String what) {
    if (to - from > 20 || to <= from) {
      throw new RespProtocolException(what);
    }
    in.getBytes(from, digits, 0, to - from);
    try {
      return RespNumbers.parseLong(digits, 0, to - from);
    } catch (NumberFormatException e) {
      throw new RespProtocolException(what);
    }
  }

  private void consumeLine(ByteBuf in, int crIndex) {
    in.readerIndex(crIndex + 2);
    progressed = true;
  }

  private void countCommandBytes(long bytes) {
    commandBytes += bytes;
    long limit = authenticated.getAsBoolean() ? limits.maxQueryBufferBytes() : UNAUTHENTICATED_QUERY_BYTES;
    if (commandBytes > limit) {
      throw new RespProtocolException("query buffer limit reached");
    }
  }
}
