package io.bloomery.cluster.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomery.server.state.Settings;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class ShardCommandTest {

  @Property(tries = 200)
  void entriesRoundTrip(@ForAll @Size(min = 1, max = 8) List<byte[]> argv, @ForAll long time) {
    Settings s = new Settings();
    s.bfErrorRate(0.001);
    s.cfMaxExpansions(7);
    ShardCommand command = ShardCommand.single(time, ShardCommand.ModuleDefaults.of(s), argv);
    ShardCommand back = ShardCommand.decode(ByteBuffer.wrap(command.encode()));
    assertThat(back.timeMillis()).isEqualTo(time);
    assertThat(back.defaults()).isEqualTo(command.defaults());
    assertThat(back.argv()).hasSameSizeAs(argv);
    for (int i = 0; i < argv.size(); i++) {
      assertThat(back.argv().get(i)).isEqualTo(argv.get(i));
    }
  }

  @Property(tries = 200)
  void batchesRoundTripInOrder(@ForAll @Size(min = 1, max = 6) List<@Size(min = 1, max = 5) List<byte[]>> commands,
      @ForAll long time) {
    ShardCommand.ModuleDefaults defaults = ShardCommand.ModuleDefaults.of(new Settings());
    byte[] request = ShardCommand.encodeBatch(commands);
    ShardCommand.Request decoded = ShardCommand.decodeRequest(ByteBuffer.wrap(request));
    assertThat(decoded.batch()).isTrue();
    ShardCommand entry = ShardCommand.of(time, defaults, decoded);
    ShardCommand back = ShardCommand.decode(ByteBuffer.wrap(entry.encode()));
    assertThat(back.batch()).isTrue();
    assertThat(back.timeMillis()).isEqualTo(time);
    assertThat(back.commands()).hasSameSizeAs(commands);
    for (int c = 0; c < commands.size(); c++) {
      assertThat(back.commands().get(c)).hasSameSizeAs(commands.get(c));
      for (int i = 0; i < commands.get(c).size(); i++) {
        assertThat(back.commands().get(c).get(i)).isEqualTo(commands.get(c).get(i));
      }
    }
    assertThatThrownBy(back::argv).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void aSingleCommandRequestIsNotABatch() {
    ShardCommand.Request one = ShardCommand.decodeRequest(
        ByteBuffer.wrap(ShardCommand.encodeArguments(ShardClient.argv("BF.ADD", "k", "i"))));
    assertThat(one.batch()).isFalse();
    assertThat(one.commands()).hasSize(1);
    assertThat(new String(one.commands().get(0).get(2), java.nio.charset.StandardCharsets.UTF_8)).isEqualTo("i");
  }

  @Test
  void everyTruncationAndBitFlipOfABatchIsRefusedOrDecodesToCommands() {
    byte[] good = ShardCommand.encodeBatch(List.of(ShardClient.argv("BF.ADD", "key", "a"),
        ShardClient.argv("CF.ADD", "other", "bb")));
    assertEveryTruncationAndBitFlipIsRefusedOrDecodes(good, bytes -> {
      ShardCommand.Request r = ShardCommand.decodeRequest(bytes);
      assertThat(r.commands()).isNotEmpty().allSatisfy(argv -> assertThat(argv).isNotEmpty());
    });
    ByteBuffer huge = ByteBuffer.allocate(12).putInt(0).putInt(Integer.MAX_VALUE).putInt(1);
    assertThatThrownBy(() -> ShardCommand.decodeRequest(huge.flip()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("does not fit");
    ByteBuffer empty = ByteBuffer.allocate(8).putInt(0).putInt(0);
    assertThatThrownBy(() -> ShardCommand.decodeRequest(empty.flip()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("batch of 0 commands");
  }

  @Test
  void defaultsTravelIntoTheApplyingSettings() {
    Settings leader = new Settings();
    leader.bfErrorRate(0.02);
    leader.bfInitialSize(500);
    leader.bfExpansion(4);
    leader.cfBucketSize(3);
    leader.cfInitialSize(2048);
    leader.cfMaxIterations(30);
    leader.cfExpansion(2);
    leader.cfMaxExpansions(9);
    Settings replica = new Settings();
    ShardCommand.ModuleDefaults.of(leader).applyTo(replica);
    assertThat(ShardCommand.ModuleDefaults.of(replica)).isEqualTo(ShardCommand.ModuleDefaults.of(leader));
    assertThat(replica.bfInitialSize()).isEqualTo(500);
    assertThat(replica.cfMaxExpansions()).isEqualTo(9);
  }

  @Test
  void everyTruncationAndBitFlipOfTheArgumentsIsRefusedOrDecodesToArguments() {
    byte[] good = ShardCommand.encodeArguments(ShardClient.argv("BF.ADD", "key", "item"));
    assertEveryTruncationAndBitFlipIsRefusedOrDecodes(good,
        bytes -> assertThat(ShardCommand.decodeArguments(bytes)).isNotEmpty());
  }

  /**
   * Every truncation of {@code good} is refused, and every single-bit flip is either refused with a message or
   * decodes to something {@code decodes} accepts.
   */
  private static void assertEveryTruncationAndBitFlipIsRefusedOrDecodes(byte[] good,
      java.util.function.Consumer<ByteBuffer> decodes) {
    for (int cut = 0; cut < good.length; cut++) {
      byte[] truncated = Arrays.copyOf(good, cut);
      assertThatThrownBy(() -> decodes.accept(ByteBuffer.wrap(truncated)))
          .isInstanceOf(IllegalArgumentException.class);
    }
    for (int i = 0; i < good.length; i++) {
      for (int bit = 0; bit < 8; bit++) {
        byte[] flipped = good.clone();
        flipped[i] ^= (byte) (1 << bit);
        try {
          decodes.accept(ByteBuffer.wrap(flipped));
        } catch (IllegalArgumentException refused) {
          assertThat(refused.getMessage()).isNotBlank();
        }
      }
    }
  }

  @Test
  void hugeDeclaredLengthsAreRefusedBeforeAllocating() {
    ByteBuffer count = ByteBuffer.allocate(8).putInt(Integer.MAX_VALUE).putInt(1);
    assertThatThrownBy(() -> ShardCommand.decodeArguments(count.flip()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("does not fit");
    ByteBuffer length = ByteBuffer.allocate(8).putInt(1).putInt(-1);
    assertThatThrownBy(() -> ShardCommand.decodeArguments(length.flip()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("4294967295 bytes");
  }

  @Test
  void refusesOtherVersionsShortHeadersAndTrailingBytes() {
    byte[] entry = ShardCommand.single(1, ShardCommand.ModuleDefaults.of(new Settings()), ShardClient.argv("DEL", "k"))
        .encode();
    byte[] other = entry.clone();
    other[0] = 2;
    assertThatThrownBy(() -> ShardCommand.decode(ByteBuffer.wrap(other))).hasMessage("log entry version 2, expected 1");
    assertThatThrownBy(() -> ShardCommand.decode(ByteBuffer.wrap(Arrays.copyOf(entry, 10))))
        .hasMessageContaining("header bytes, found 10");
    byte[] longer = Arrays.copyOf(entry, entry.length + 1);
    assertThatThrownBy(() -> ShardCommand.decode(ByteBuffer.wrap(longer))).hasMessage("1 bytes after the last argument");
    assertThatThrownBy(() -> ShardCommand.single(1, ShardCommand.ModuleDefaults.of(new Settings()), List.of()))
        .hasMessage("a command needs at least its name");
    assertThatThrownBy(() -> new ShardCommand(1, ShardCommand.ModuleDefaults.of(new Settings()), List.of(), true))
        .hasMessage("an entry needs at least one command");
  }

  @Test
  void randomBytesDecodeOrFailWithIllegalArgumentOnly() {
    Random random = new Random(23);
    int decoded = 0;
    for (int i = 0; i < 10_000; i++) {
      byte[] junk = new byte[random.nextInt(100)];
      random.nextBytes(junk);
      if (junk.length > 0) {
        junk[0] = ShardCommand.VERSION;
      }
      try {
        assertThat(ShardCommand.decode(ByteBuffer.wrap(junk)).argv()).isNotEmpty();
        decoded++;
      } catch (IllegalArgumentException refused) {
        assertThat(refused.getMessage()).as("%d random bytes", junk.length).isNotBlank();
      }
    }
    assertThat(decoded).as("random bytes are almost never an entry").isLessThan(10);
  }
}
