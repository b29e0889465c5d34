package io.bloomery.testkit;

import io.bloomery.format.RedisBloomDump;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Golden SCANDUMP files under {@code src/test/resources/golden/redisbloom/} (provenance in the README there). A file
 * is the sequence of SCANDUMP replies up to the end reply, each as {@code u64le iterator, u32le length, bytes}.
 * Run the tests with {@code -Dbloomery.regenerateGolden=true} from the {@code core} directory to rewrite them.
 */
public final class GoldenDumps {
  private GoldenDumps() {}

  public static boolean regenerating() {
    return Boolean.getBoolean("bloomery.regenerateGolden");
  }

  public static byte[] encode(List<RedisBloomDump.Chunk> chunks) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (RedisBloomDump.Chunk chunk : chunks) {
      ByteBuffer head = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN);
      head.putLong(chunk.iterator()).putInt(chunk.data().length);
      out.writeBytes(head.array());
      out.writeBytes(chunk.data());
    }
    return out.toByteArray();
  }

  public static List<RedisBloomDump.Chunk> decode(byte[] file) {
    ByteBuffer in = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN);
    List<RedisBloomDump.Chunk> chunks = new ArrayList<>();
    while (in.hasRemaining()) {
      long iterator = in.getLong();
      byte[] data = new byte[in.getInt()];
      in.get(data);
      chunks.add(new RedisBloomDump.Chunk(iterator, data));
    }
    return chunks;
  }

  public static byte[] read(String name) {
    try (InputStream in = GoldenDumps.class.getResourceAsStream("/golden/redisbloom/" + name)) {
      if (in == null) {
        throw new IllegalStateException("missing golden file " + name);
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static void write(String name, byte[] bytes) {
    try {
      Path dir = Path.of("src/test/resources/golden/redisbloom");
      Files.createDirectories(dir);
      Files.write(dir.resolve(name), bytes);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
