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
    ShardCommand command = new ShardCommand(time, ShardCommand.ModuleDefaults.of(s), argv);
    ShardCommand back = ShardCommand.decode(ByteBuffer.wrap(command.encode()));
    assertThat(back.timeMillis()).isEqualTo(time);
    assertThat(back.defaults()).isEqualTo(command.defaults());
    assertThat(back.argv()).hasSameSizeAs(argv);
    for (int i = 0; i < argv.size(); i++) {
      assertThat(back.argv().get(i)).isEqualTo(argv.get(i));
    }
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
    for (int cut = 0; cut < good.length; cut++) {
      byte[] truncated = Arrays.copyOf(good, cut);
      assertThatThrownBy(() -> ShardCommand.decodeArguments(ByteBuffer.wrap(truncated)))
          .isInstanceOf(IllegalArgumentException.class);
    }
    for (int i = 0; i < good.length; i++) {
      for (int bit = 0; bit < 8; bit++) {
        byte[] flipped = good.clone();
        flipped[i] ^= (byte) (1 << bit);
        try {
          List<byte[]> argv = ShardCommand.decodeArguments(ByteBuffer.wrap(flipped));
          assertThat(argv).isNotEmpty();
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
    byte[] entry = new ShardCommand(1, ShardCommand.ModuleDefaults.of(new Settings()), ShardClient.argv("DEL", "k"))
        .encode();
    byte[] other = entry.clone();
    other[0] = 2;
    assertThatThrownBy(() -> ShardCommand.decode(ByteBuffer.wrap(other))).hasMessage("log entry version 2, expected 1");
    assertThatThrownBy(() -> ShardCommand.decode(ByteBuffer.wrap(Arrays.copyOf(entry, 10))))
        .hasMessageContaining("header bytes, found 10");
    byte[] longer = Arrays.copyOf(entry, entry.length + 1);
    assertThatThrownBy(() -> ShardCommand.decode(ByteBuffer.wrap(longer))).hasMessage("1 bytes after the last argument");
    assertThatThrownBy(() -> new ShardCommand(1, ShardCommand.ModuleDefaults.of(new Settings()), List.of()))
        .hasMessage("a command needs at least its name");
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
