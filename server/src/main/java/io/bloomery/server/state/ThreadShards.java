package io.bloomery.server.state;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * One value per thread that writes, for counters the event loops bump without an atomic read-modify-write: each
 * thread writes only its own shard ({@link #mine}); readers visit every shard ({@link #forEach}). The shards of
 * threads that have ended are folded into one retired value, so that threads that come and go (a pool's, after
 * their keep-alive) do not pile up shards.
 *
 * @param <T> a thread's shard
 */
final class ThreadShards<T> {
  private record Shard<T>(Thread owner, T value) {}

  /** Read and changed under its own lock (readers and new threads only, never the writes to a shard). */
  private final List<Shard<T>> shards = new ArrayList<>();
  /** What the shards of threads that have ended held; written under the lock of {@link #shards}. */
  private final T retired;
  /** Adds the first shard into the second. */
  private final BiConsumer<T, T> fold;
  private final ThreadLocal<T> mine;

  /**
   * @param fresh makes an empty shard (and the retired one)
   * @param fold adds an ended thread's shard into the retired one
   */
  ThreadShards(Supplier<T> fresh, BiConsumer<T, T> fold) {
    this.retired = fresh.get();
    this.fold = fold;
    this.mine = ThreadLocal.withInitial(() -> {
      T value = fresh.get();
      synchronized (shards) {
        retireEnded();
        shards.add(new Shard<>(Thread.currentThread(), value));
      }
      return value;
    });
  }

  /** The calling thread's shard, which only it writes. */
  T mine() {
    return mine.get();
  }

  /**
   * Hands {@code reader} the retired value and then every live thread's shard, under the lock that adding a thread
   * and retiring one take. As with {@link java.util.concurrent.atomic.LongAdder#sum}, what it reads while threads
   * write is not an atomic snapshot; once the writing threads have handed their work on, it holds every write.
   */
  void forEach(Consumer<T> reader) {
    synchronized (shards) {
      retireEnded();
      reader.accept(retired);
      for (Shard<T> shard : shards) {
        reader.accept(shard.value);
      }
    }
  }

  /** Folds the shards of threads that have ended (their last write happens-before {@link Thread#isAlive} answering false). */
  private void retireEnded() {
    for (Iterator<Shard<T>> i = shards.iterator(); i.hasNext(); ) {
      Shard<T> shard = i.next();
      if (!shard.owner.isAlive()) {
        fold.accept(shard.value, retired);
        i.remove();
      }
    }
  }
}
