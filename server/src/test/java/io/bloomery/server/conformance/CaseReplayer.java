package io.bloomery.server.conformance;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Replays one recorded case against a server over a raw socket, exactly as {@code record.py} ran it
 * against the real one: a new connection, {@code HELLO 3} for RESP3 cases, {@code FLUSHALL}, then the
 * steps one by one (each reply read before the next step is sent) or all in one write.
 */
final class CaseReplayer {

  private static final byte[] HELLO_3 =
      Recording.encodeCommand(List.of("HELLO".getBytes(StandardCharsets.US_ASCII), new byte[] {'3'}));
  private static final byte[] FLUSHALL =
      Recording.encodeCommand(List.of("FLUSHALL".getBytes(StandardCharsets.US_ASCII)));
  private static final byte[] OK = "+OK\r\n".getBytes(StandardCharsets.US_ASCII);

  private final InetSocketAddress target;
  private final int timeoutMillis;

  CaseReplayer(InetSocketAddress target, int timeoutMillis) {
    this.target = target;
    this.timeoutMillis = timeoutMillis;
  }

  /** One step whose reply differed, or that got none. */
  record Mismatch(int step, Recording.Step sent, byte[] actual, String problem) {

    String describe() {
      Recording.Expectation e = sent.expected();
      StringBuilder out = new StringBuilder()
          .append("  step ").append(step).append(" (recording line ").append(sent.line()).append("): ")
          .append(sent.shown()).append('\n');
      out.append("    expected ");
      switch (e) {
        case Recording.Exact x -> out.append(Escaped.of(x.recorded()));
        case Recording.AnyOfType a -> out.append("a reply of type '").append((char) a.recorded()[0])
            .append("' (any content: ").append(a.reason()).append(')');
        case Recording.Fields f -> out.append("fields ").append(f.names()).append(" as in ")
            .append(Escaped.of(f.recorded())).append(" (").append(f.reason()).append(')');
      }
      out.append('\n').append("    actual   ")
          .append(actual == null ? "(no reply)" : Escaped.of(actual));
      if (problem != null) {
        out.append("\n    ").append(problem);
      }
      return out.toString();
    }
  }

  /** Runs {@code c}; an empty list means every reply matched. */
  List<Mismatch> replay(Recording.Case c) throws IOException {
    List<Mismatch> mismatches = new ArrayList<>();
    try (Socket socket = new Socket()) {
      socket.connect(target, timeoutMillis);
      socket.setSoTimeout(timeoutMillis);
      socket.setTcpNoDelay(true);
      OutputStream out = socket.getOutputStream();
      InputStream in = new BufferedInputStream(socket.getInputStream());
      if (c.proto() == 3) {
        out.write(HELLO_3);
        out.flush();
        RespReply hello = RespReply.read(in);
        if (hello.type() != '%') {
          throw new IOException("HELLO 3 did not answer a map but " + Escaped.of(hello.raw()));
        }
      }
      out.write(FLUSHALL);
      out.flush();
      RespReply flushed = RespReply.read(in);
      if (!Arrays.equals(flushed.raw(), OK)) {
        throw new IOException("FLUSHALL answered " + Escaped.of(flushed.raw()));
      }
      List<Recording.Step> steps = c.steps();
      if (c.pipelined()) {
        for (Recording.Step step : steps) {
          out.write(step.sent());
        }
        out.flush();
      }
      for (int i = 0; i < steps.size(); i++) {
        Recording.Step step = steps.get(i);
        if (!c.pipelined()) {
          out.write(step.sent());
          out.flush();
        }
        RespReply reply;
        try {
          reply = RespReply.read(in);
        } catch (SocketTimeoutException e) {
          mismatches.add(new Mismatch(i + 1, step, null, "no reply within " + timeoutMillis + " ms"));
          return mismatches;
        } catch (IOException e) {
          mismatches.add(new Mismatch(i + 1, step, null, e.getMessage()));
          return mismatches;
        }
        String problem = compare(step.expected(), reply);
        if (problem != null) {
          mismatches.add(new Mismatch(i + 1, step, reply.raw(), problem.isEmpty() ? null : problem));
        }
      }
    }
    return mismatches;
  }

  /** Null when {@code actual} satisfies {@code expected}; otherwise what differs ("" if only bytes). */
  static String compare(Recording.Expectation expected, RespReply actual) throws IOException {
    return switch (expected) {
      case Recording.Exact x -> Arrays.equals(x.recorded(), actual.raw()) ? null : "";
      case Recording.AnyOfType a -> a.recorded()[0] == actual.type() ? null : "the reply type differs";
      case Recording.Fields f -> {
        RespReply recorded = RespReply.parse(f.recorded());
        if (recorded.type() != actual.type()) {
          yield "the reply type differs";
        }
        for (String name : f.names()) {
          RespReply want = recorded.field(name);
          RespReply got = actual.field(name);
          if (got == null) {
            yield "field '" + name + "' is missing";
          }
          if (!Arrays.equals(want.raw(), got.raw())) {
            yield "field '" + name + "' is " + Escaped.of(got.raw()) + ", expected " + Escaped.of(want.raw());
          }
        }
        yield null;
      }
    };
  }
}
