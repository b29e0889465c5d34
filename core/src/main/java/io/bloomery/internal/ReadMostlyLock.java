package io.bloomery.internal;

import java.util.concurrent.locks.StampedLock;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The locking discipline shared by the RedisBloom filters: readers run lock-free under an optimistic stamp and retry
 * under the read lock only if a writer intervened; writers are serialized and hold the exclusive lock only while
 * they change the live tables in place. Work that can be done aside (cuckoo compaction) holds {@link #writers()} but
 * not the exclusive lock, and publishes its result with a short {@link #exclusive} section, so readers are never
 * blocked for its duration.
 *
 * <p>Readers must tolerate torn state under the optimistic stamp: they only read (never throw on) fields whose
 * sizes are fixed per published object, and their answer is discarded unless the stamp validates.
 */
public final class ReadMostlyLock {
  private final StampedLock lock = new StampedLock();
  private final Object writers = new Object();

  /** The monitor every mutator holds for its whole operation. */
  public Object writers() {
    return writers;
  }

  public boolean readBoolean(BooleanSupplier reader) {
    long stamp = lock.tryOptimisticRead();
    if (stamp != 0) {
      boolean answer = reader.getAsBoolean();
      if (lock.validate(stamp)) {
        return answer;
      }
    }
    stamp = lock.readLock();
    try {
      return reader.getAsBoolean();
    } finally {
      lock.unlockRead(stamp);
    }
  }

  public long readLong(LongSupplier reader) {
    long stamp = lock.tryOptimisticRead();
    if (stamp != 0) {
      long answer = reader.getAsLong();
      if (lock.validate(stamp)) {
        return answer;
      }
    }
    stamp = lock.readLock();
    try {
      return reader.getAsLong();
    } finally {
      lock.unlockRead(stamp);
    }
  }

  /** Reads under the shared lock (for multi-field snapshots that allocate). */
  public <T> T readLocked(Supplier<T> reader) {
    long stamp = lock.readLock();
    try {
      return reader.get();
    } finally {
      lock.unlockRead(stamp);
    }
  }

  /** Runs {@code mutation} under the exclusive lock; callers already hold {@link #writers()}. */
  public <T> T exclusive(Supplier<T> mutation) {
    long stamp = lock.writeLock();
    try {
      return mutation.get();
    } finally {
      lock.unlockWrite(stamp);
    }
  }
}
