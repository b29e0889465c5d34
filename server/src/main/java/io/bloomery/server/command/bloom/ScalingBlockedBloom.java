package io.bloomery.server.command.bloom;

import io.bloomery.blocked.ScalableBlockedBloomFilter;
import io.bloomery.scalable.ScalableBloomFilter;
import io.bloomery.server.command.CommandException;
import io.bloomery.server.command.Invocation;
import io.bloomery.server.command.Memory;
import io.bloomery.server.command.RedisBloomErrors;
import io.bloomery.server.keyspace.ValueType;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A scaling Bloom key with the blocked layout ({@code BF.RESERVE key error capacity LAYOUT BLOCKED [EXPANSION n]}, a
 * Bloomery extension): core's {@link ScalableBlockedBloomFilter}, RedisBloom's growth rules with blocked layers. It
 * answers every BF command as RedisBloom's scalable key does (an add of an item already reported is 0 and not
 * counted, INFO's five fields, growth by the expansion at half the error rate); its SCANDUMP/LOADCHUNK chunks are
 * its Bloomery file, as a fixed key's are. Each new layer's bytes are admitted against {@code maxmemory} and the heap
 * before it is allocated.
 */
final class ScalingBlockedBloom {
  private ScalingBlockedBloom() {}

  /**
   * A new chain, refused before anything is allocated if its first layer would take the server past {@code
   * maxmemory} or the heap. The error rate is capped at RedisBloom's 0.25, as for the scalable key.
   */
  static ScalableBlockedBloomFilter create(Invocation inv, long capacity, double rate, int expansion) {
    double capped = Math.min(rate, ScalableBloomFilter.ERROR_RATE_CAP);
    ScalableBlockedBloomFilter.Layer first;
    try {
      first = ScalableBlockedBloomFilter.plannedFirstLayer(capacity, capped);
    } catch (IllegalArgumentException e) {
      throw new CommandException(RedisBloomErrors.BF_COULD_NOT_CREATE);
    }
    Memory.admitWithHeap(inv, first.bytes());
    try {
      return ScalableBlockedBloomFilter.create(new byte[0], capacity, capped, expansion);
    } catch (IllegalArgumentException e) {
      throw new CommandException(RedisBloomErrors.BF_INSUFFICIENT_MEMORY);
    }
  }

  /**
   * Adds under the key's write lock (the caller holds it, so the chain's own monitor is skipped). A new item that
   * needs a new layer first has that layer's bytes admitted ({@code OOM} otherwise, nothing changed); a layer that
   * cannot be sized or allocated answers RedisBloom's {@code ERR problem inserting into filter}. Journal replay
   * admits nothing: the journal holds only adds that were accepted.
   */
  static boolean add(Invocation inv, ScalableBlockedBloomFilter f, byte[] item) {
    long growth = f.growthBytes();
    if (growth > 0 && !inv.replaying() && !f.mightContain(item)) {
      Memory.admitWithHeap(inv, growth);
    }
    return f.addAsSoleWriter(item, 0, item.length);
  }

  /** {@code BF.INFO}'s fields, as RedisBloom's scalable key names them. */
  static Map<String, Long> info(ScalableBlockedBloomFilter f) {
    Map<String, Long> m = new LinkedHashMap<>();
    m.put("Capacity", f.capacity());
    m.put("Size", ValueType.of(f).memoryUsage(f));
    m.put("Number of filters", (long) f.filterCount());
    m.put("Number of items inserted", f.insertedCount());
    m.put("Expansion rate", (long) f.expansion());
    return m;
  }

  /** {@code BF.DEBUG}: {@code layout:blocked-scaling size:<items>}, then one line per layer, oldest first. */
  static List<String> debug(ScalableBlockedBloomFilter f) {
    List<ScalableBlockedBloomFilter.Layer> layers = f.layers();
    List<String> lines = new ArrayList<>(layers.size() + 1);
    lines.add("layout:blocked-scaling size:" + f.insertedCount() + " expansion:" + f.expansion());
    for (ScalableBlockedBloomFilter.Layer layer : layers) {
      lines.add("blocks:" + layer.blocks() + " bytes:" + layer.bytes() + " hashes:" + layer.hashes() + " capacity:"
          + layer.capacity() + " size:" + layer.size() + " ratio:" + layer.errorRate());
    }
    return lines;
  }
}
