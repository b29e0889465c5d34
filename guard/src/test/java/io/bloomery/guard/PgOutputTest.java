package io.bloomery.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The pgoutput decoder on well-formed messages and on hostile bytes. */
class PgOutputTest {

  /** Builds messages the way the server writes them (network byte order). */
  private static final class Bytes {
    private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    private final DataOutputStream out = new DataOutputStream(buffer);

    Bytes b(int v) throws IOException {
      out.writeByte(v);
      return this;
    }

    Bytes s16(int v) throws IOException {
      out.writeShort(v);
      return this;
    }

    Bytes i32(int v) throws IOException {
      out.writeInt(v);
      return this;
    }

    Bytes i64(long v) throws IOException {
      out.writeLong(v);
      return this;
    }

    Bytes str(String v) throws IOException {
      out.write(v.getBytes(StandardCharsets.UTF_8));
      out.writeByte(0);
      return this;
    }

    Bytes raw(byte[] v) throws IOException {
      out.write(v);
      return this;
    }

    byte[] done() {
      return buffer.toByteArray();
    }
  }

  private static byte[] relation() throws IOException {
    return new Bytes().b('R').i32(16384).str("public").str("bloomery_seen").b('d').s16(3)
        .b(1).str("id").i32(20).i32(-1)
        .b(0).str("digest").i32(17).i32(-1)
        .b(0).str("item").i32(17).i32(-1).done();
  }

  private static byte[] insert(String itemText) throws IOException {
    byte[] text = itemText.getBytes(StandardCharsets.UTF_8);
    return new Bytes().b('I').i32(16384).b('N').s16(3)
        .b('t').i32(1).raw("7".getBytes(StandardCharsets.US_ASCII))
        .b('n')
        .b('t').i32(text.length).raw(text).done();
  }

  private static PgOutput.Message decode(byte[] bytes) {
    return PgOutput.decode(ByteBuffer.wrap(bytes));
  }

  @Test
  void decodesTheMessagesTheGuardUses() throws IOException {
    assertThat(decode(new Bytes().b('B').i64(0x1_0000_0020L).i64(12345).i32(777).done()))
        .isEqualTo(new PgOutput.Begin(0x1_0000_0020L, 12345, 777));
    assertThat(decode(new Bytes().b('C').b(0).i64(10).i64(20).i64(30).done()))
        .isEqualTo(new PgOutput.Commit(10, 20, 30));
    PgOutput.Relation relation = (PgOutput.Relation) decode(relation());
    assertThat(relation.oid()).isEqualTo(16384);
    assertThat(relation.name()).isEqualTo("bloomery_seen");
    assertThat(relation.columns()).containsExactly("id", "digest", "item");
    PgOutput.Insert insert = (PgOutput.Insert) decode(insert("\\x6869"));
    assertThat(insert.tuple()).hasSize(3);
    assertThat(insert.tuple().get(1).hasData()).isFalse();
    assertThat(PgOutput.byteaFromText(insert.tuple().get(2).data()))
        .isEqualTo("hi".getBytes(StandardCharsets.US_ASCII));

    byte[] update = new Bytes().b('U').i32(5).b('K').s16(1).b('t').i32(1).raw(new byte[] {'1'})
        .b('N').s16(1).b('u').done();
    assertThat(((PgOutput.Update) decode(update)).tuple().get(0).kind()).isEqualTo('u');
    assertThat(decode(new Bytes().b('D').i32(5).b('O').s16(0).done()))
        .isEqualTo(new PgOutput.Delete(5));
    assertThat(((PgOutput.Truncate) decode(new Bytes().b('T').i32(2).b(0).i32(5).i32(6).done()))
        .relations()).containsExactly(5, 6);
    PgOutput.LogicalMessage message = (PgOutput.LogicalMessage) decode(
        new Bytes().b('M').b(1).i64(99).str("bloomery-fence:s").i32(3).raw(new byte[] {1, 2, 3})
            .done());
    assertThat(message.transactional()).isTrue();
    assertThat(message.prefix()).isEqualTo("bloomery-fence:s");
    assertThat(message.content()).containsExactly(1, 2, 3);
    assertThat(decode(new Bytes().b('O').i64(1).str("origin").done()))
        .isEqualTo(new PgOutput.Ignored('O'));
    assertThat(decode(new Bytes().b('Y').i32(1).str("public").str("t").done()))
        .isEqualTo(new PgOutput.Ignored('Y'));
  }

  @Test
  void byteaTextInBothOutputFormats() {
    assertThat(PgOutput.byteaFromText(ascii("\\x"))).isEmpty();
    assertThat(PgOutput.byteaFromText(ascii("\\x00ffA0"))).containsExactly(0, -1, -96);
    assertThat(PgOutput.byteaFromText(ascii("ab\\\\c\\000\\377")))
        .containsExactly('a', 'b', '\\', 'c', 0, -1);
    for (String bad : List.of("\\x0", "\\xzz", "\\x0g", "a\\", "\\400", "\\12", "\\9xx")) {
      assertThatThrownBy(() -> PgOutput.byteaFromText(ascii(bad))).as(bad)
          .isInstanceOf(PgOutput.MalformedMessageException.class).hasMessageContaining("bytea");
    }
  }

  @Test
  void everyTruncationOfEveryMessageIsRefusedCleanly() throws IOException {
    List<byte[]> messages = List.of(relation(), insert("\\x6869"),
        new Bytes().b('C').b(0).i64(10).i64(20).i64(30).done(),
        new Bytes().b('M').b(0).i64(99).str("p").i32(2).raw(new byte[] {1, 2}).done(),
        new Bytes().b('T').i32(1).b(0).i32(5).done());
    for (byte[] message : messages) {
      for (int length = 0; length < message.length; length++) {
        byte[] truncated = Arrays.copyOf(message, length);
        assertThatThrownBy(() -> decode(truncated))
            .as("'%c' cut to %d bytes", (char) message[0], length)
            .isInstanceOf(PgOutput.MalformedMessageException.class)
            .hasMessageStartingWith("pgoutput: ");
      }
      byte[] trailing = Arrays.copyOf(message, message.length + 1);
      assertThatThrownBy(() -> decode(trailing))
          .isInstanceOf(PgOutput.MalformedMessageException.class)
          .hasMessageContaining("trailing");
    }
  }

  @Test
  void absurdCountsAndLengthsAreRefusedBeforeAllocating() throws IOException {
    assertThatThrownBy(() -> decode(new Bytes().b('I').i32(1).b('N').s16(0xFFFF).done()))
        .hasMessageContaining("tuple declares 65535 columns");
    assertThatThrownBy(() -> decode(
        new Bytes().b('I').i32(1).b('N').s16(1).b('t').i32(Integer.MAX_VALUE).done()))
        .hasMessageContaining("declares 2147483647 bytes");
    assertThatThrownBy(() -> decode(
        new Bytes().b('I').i32(1).b('N').s16(1).b('t').i32(-5).done()))
        .hasMessageContaining("declares -5 bytes");
    assertThatThrownBy(() -> decode(new Bytes().b('T').i32(Integer.MAX_VALUE).b(0).done()))
        .hasMessageContaining("truncate declares");
    assertThatThrownBy(() -> decode(new Bytes().b('R').i32(1).str("s").str("t").b('d')
        .s16(60_000).done())).hasMessageContaining("relation declares 60000 columns");
    assertThatThrownBy(() -> decode(new Bytes().b('I').i32(1).b('X').done()))
        .hasMessageContaining("expected N, found 'X'");
    assertThatThrownBy(() -> decode(new Bytes().b('I').i32(1).b('N').s16(1).b('q').done()))
        .hasMessageContaining("unknown kind 'q'");
    assertThatThrownBy(() -> decode(new Bytes().b('D').i32(1).b('N').done()))
        .hasMessageContaining("expected K or O");
    assertThatThrownBy(() -> decode(new Bytes().b(0x01).done()))
        .hasMessageContaining("unknown message type 0x01");
    assertThatThrownBy(() -> decode(new byte[0])).hasMessageContaining("empty message");
    assertThatThrownBy(() -> decode(new Bytes().b('O').i64(1).raw(ascii("no-terminator")).done()))
        .hasMessageContaining("unterminated string");
  }

  @Test
  void randomBytesNeverEscapeAsAnUncheckedBufferError() {
    long seed = new Random().nextLong();
    Random random = new Random(seed);
    byte[] types = ascii("BCRIUDTMOYZ");
    for (int round = 0; round < 20_000; round++) {
      byte[] bytes = new byte[random.nextInt(40)];
      random.nextBytes(bytes);
      if (bytes.length > 0) {
        bytes[0] = types[random.nextInt(types.length)];
      }
      try {
        decode(bytes);
      } catch (PgOutput.MalformedMessageException expected) {
        // the only failure allowed
      } catch (RuntimeException e) {
        throw new AssertionError("seed " + seed + ", round " + round + ": "
            + Arrays.toString(bytes) + " escaped as " + e, e);
      }
    }
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.ISO_8859_1);
  }
}
