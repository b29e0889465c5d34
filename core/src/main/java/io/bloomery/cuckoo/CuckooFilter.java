package io.bloomery.cuckoo;

import io.bloomery.filter.BoundedFilter;
import io.bloomery.filter.FilterFullException;
import io.bloomery.filter.FilterKind;
import io.bloomery.filter.FilterTooLargeException;
import io.bloomery.filter.MembershipFilter;
import io.bloomery.hash.MurmurHash2;
import io.bloomery.hash.ProtocolId;
import io.bloomery.internal.KindAccess;
import io.bloomery.internal.ReadMostlyLock;
import io.bloomery.internal.Unsigned;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/*
 * Why this class looks the way it does.
 *
 * A cuckoo filter (Fan, Andersen, Kaminsky, Mitzenmacher: "Cuckoo Filter: Practically Better Than Bloom", CoNEXT 2014)
 * stores a short fingerprint of each item in one of two candidate buckets; the second bucket is derived from the
 * first and the fingerprint alone ("partial-key cuckoo hashing"), so fingerprints can be relocated and deleted
 * without the original item.
 *
 * This is RedisBloom's CF.* variant (src/cuckoo.c, src/cf.c at master b28c29451ad4) reproduced step for step, so
 * that tables, CF.DEBUG/CF.INFO figures and CF.SCANDUMP bytes match a real RedisBloom fed the same commands:
 *  - h = MurmurHash64A(item, seed 0); fp = h % 255 + 1 (8 bits, 0 = empty slot); h1 = h; h2 = h ^ (fp·0x5bd1e995);
 *    bucket of x in a sub-filter of nb buckets = x mod nb, slot index = (x mod nb)·bucketSize truncated to 32 bits
 *    as SubCF_GetIndex's uint32_t return type does;
 *  - nb = nextPow2(capacity / bucketSize) (at least 1); sub-filter i has nb·expansion^i buckets; expansion is
 *    rounded up to a power of two (0 stays 0), so alt(alt(i)) == i in every sub-filter;
 *  - insert: first empty slot of h1 then h2 in each sub-filter from newest to oldest; otherwise kick out in the
 *    newest sub-filter only (maxIterations swaps, victim slot advancing round-robin), rolled back in reverse if no
 *    home was found; then grow (unless expansion is 0) and retry;
 *  - delete: newest to oldest, h1 then h2, first matching slot; then auto-compaction when there is more than one
 *    sub-filter and deletes exceed 10 % of items;
 *  - compaction moves fingerprints from newer sub-filters into free slots of older ones (nb of an older sub-filter
 *    divides the newer one's, so bucket indexes reduce correctly) and frees the newest when it empties.
 *
 * Unlike RedisBloom, where compaction runs on Redis's only thread, compaction here works on copies of the tables
 * while readers keep using the published ones, and publishes the result with one reference swap; a concurrent
 * reader therefore never sees a fingerprint in transit (no false negative) and is never blocked for the duration.
 */

/**
 * RedisBloom's cuckoo filter ({@code CF.*}): a membership filter that supports delete and counting, compatible with
 * RedisBloom's tables and with CF.SCANDUMP / CF.LOADCHUNK through {@link io.bloomery.format.RedisBloomDump}.
 *
 * <p><b>What the answers mean.</b> {@link #mightContain} is one-sided for items added and not deleted: such an item
 * is never reported absent — unless a delete removed its fingerprint by mistake (below). {@code true} means
 * "maybe": the false-positive rate is roughly {@code 2·bucketSize/255} per sub-filter and adds up across
 * sub-filters; there is no error-rate parameter. {@link #count} sums matching fingerprints over both buckets of
 * every sub-filter: never below the number of copies added and not deleted, possibly above.
 *
 * <p><b>Adding.</b> {@link #add} is {@code CF.ADD}: it always stores another fingerprint copy (a multiset, so that
 * deletes stay correct) and returns {@code true}; duplicates fill buckets and trigger growth. {@link #addIfAbsent}
 * is {@code CF.ADDNX}: it returns {@code false} and changes nothing if the item's fingerprint is already present in
 * one of its buckets (true or false positive). {@link #insert} is {@code CF.INSERT}/{@code CF.INSERTNX}. When neither bucket nor a kick-out
 * chain of {@link #maxIterations()} swaps finds room, a filter with expansion 0 refuses the item
 * ({@link FilterFullException.Reason#NO_FREE_SLOT}); otherwise a new sub-filter of {@code expansion} times the previous size is
 * appended. An add on a filter that already has {@link #maxExpansions()} sub-filters (32 by default) is refused
 * before anything is inserted ({@link FilterFullException.Reason#GROWTH_LIMIT}); a failed kick-out is rolled back, so a
 * refused add changes nothing.
 *
 * <p><b>Delete, and its hazard.</b> {@link #remove} removes <em>one</em> slot holding the item's fingerprint from one
 * of the item's two buckets. Fingerprints are 8 bits: distinct items share them. Deleting an item that was never
 * added can therefore remove another item's fingerprint and make that item a <em>false negative</em>. For example,
 * in {@code CuckooFilter.create(1024)} the never-added {@code "item-147553"} has the same fingerprint and bucket pair
 * as {@code "alice@example.com"}: after {@code add("alice@example.com")}, {@code remove("item-147553")} returns
 * {@code true} and Alice is reported absent ({@code CuckooDeleteHazardTest}). Delete only
 * items you know were added (at most as many times as they were added with {@link #add}; an
 * {@link #addIfAbsent} that returned {@code false} stored nothing).
 *
 * <p><b>Thread safety.</b> Safe for concurrent use. Lookups ({@code mightContain}, {@code count}) take no lock in the
 * common case (an optimistic {@link java.util.concurrent.locks.StampedLock} stamp, retried under the read lock if a
 * writer intervened). Adds and deletes are serialized and hold the exclusive lock only while they change slots in
 * place. Compaction ({@link #compact}, or the automatic one after a delete) builds compacted copies of the tables
 * aside and publishes them atomically: readers are not blocked for its duration and never miss an item in
 * transit; other writers wait for it. A caller that serializes every mutation itself (the server, under its key
 * lock) adds with {@link #addAsSoleWriter}, which stores into a free slot with no lock at all.
 */
public final class CuckooFilter implements BoundedFilter {
  /** RedisBloom's {@code cf-bucket-size} default. */
  public static final int DEFAULT_BUCKET_SIZE = 2;
  /** RedisBloom's {@code cf-initial-size} default (used when CF.ADD auto-creates a filter). */
  public static final long DEFAULT_CAPACITY = 1024;
  /** RedisBloom's {@code cf-max-iterations} default. */
  public static final int DEFAULT_MAX_ITERATIONS = 20;
  /** RedisBloom's {@code cf-expansion-factor} default. */
  public static final int DEFAULT_EXPANSION = 1;
  /** RedisBloom's {@code cf-max-expansions} default: adds are refused once a filter has this many sub-filters. */
  public static final int DEFAULT_MAX_EXPANSIONS = 32;
  public static final int MAX_BUCKET_SIZE = 255;
  public static final int MAX_ITERATIONS = 65535;
  public static final int MAX_EXPANSION = 32768;
  public static final long MAX_CAPACITY = 1L << 30;
  /** {@code cf-max-expansions} range upper bound. */
  public static final int MAX_MAX_EXPANSIONS = 65536;
  /** {@code CF_MAX_NUM_BUCKETS}: {@code SubCF.numBuckets} is a 56-bit field. */
  static final long MAX_NUM_BUCKETS = 0x00FF_FFFF_FFFF_FFFFL;
  static final long ALT_HASH_MULTIPLIER = 0x5bd1e995L;
  /** {@code sizeof(CuckooFilter)} and {@code sizeof(SubCF)}, which CF.INFO's "Size" counts. */
  private static final long FILTER_STRUCT_BYTES = 40;
  private static final long SUBFILTER_STRUCT_BYTES = 16;

  /** The outcome of one item of {@link #insert}, with RedisBloom's RESP2 reply integer. */
  public enum InsertResult {
    /** Stored: reply 1. */
    INSERTED(1),
    /** INSERTNX only: the fingerprint was already present, nothing stored: reply 0. */
    EXISTS(0),
    /** No room (expansion 0) or the next sub-filter could not be allocated: reply -1. */
    FULL(-1);

    private final int reply;

    InsertResult(int reply) {
      this.reply = reply;
    }

    /** CF.INSERT / CF.INSERTNX's RESP2 integer for this outcome. */
    public int reply() {
      return reply;
    }
  }

  private enum Outcome { INSERTED, EXISTS, NO_SPACE, ALLOCATION_FAILED }

  private final ReadMostlyLock lock = new ReadMostlyLock();
  /** Buckets of the first sub-filter (a power of two). */
  private final long numBuckets;
  private final int bucketSize;
  private final int maxIterations;
  /** Expansion after rounding up to a power of two; 0 means the filter never grows. */
  private final int expansion;
  private volatile int maxExpansions = DEFAULT_MAX_EXPANSIONS;
  private long numItems;
  private long numDeletes;
  /** {@link #numItems}, for the sole writer's release store. */
  private static final VarHandle NUM_ITEMS;
  /**
   * Replaced, never mutated in place, on growth and compaction; volatile so that a lock-free reader that sees a new
   * array also sees its elements.
   */
  private volatile CuckooTable[] tables;

  CuckooFilter(long numBuckets, int bucketSize, int maxIterations, int expansion, long numItems, long numDeletes,
      CuckooTable[] tables) {
    this.numBuckets = numBuckets;
    this.bucketSize = bucketSize;
    this.maxIterations = maxIterations;
    this.expansion = expansion;
    this.numItems = numItems;
    this.numDeletes = numDeletes;
    this.tables = tables;
  }

  static {
    KindAccess.register(CuckooFilter.class, CuckooDumpCodec.ACCESS);
    try {
      NUM_ITEMS = MethodHandles.lookup().findVarHandle(CuckooFilter.class, "numItems", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** {@code CF.RESERVE key capacity} with RedisBloom's defaults (bucket size 2, 20 iterations, expansion 1). */
  public static CuckooFilter create(long capacity) {
    return create(capacity, DEFAULT_BUCKET_SIZE, DEFAULT_MAX_ITERATIONS, DEFAULT_EXPANSION);
  }

  /**
   * {@code CF.RESERVE key capacity BUCKETSIZE b MAXITERATIONS m EXPANSION e}, validated in RedisBloom's order
   * (max iterations [1, 65535], bucket size [1, 255], expansion [0, 32768], capacity [2·bucketSize, 2^30]).
   * The first sub-filter has {@code nextPow2(capacity / bucketSize)} buckets; expansion is rounded up to a power of
   * two.
   *
   * @throws IllegalArgumentException for an out-of-range parameter, checked in that order, or a {@link
   *     FilterTooLargeException} if the table does not fit in the heap
   */
  public static CuckooFilter create(long capacity, int bucketSize, int maxIterations, int expansion) {
    if (maxIterations < 1 || maxIterations > MAX_ITERATIONS) {
      throw new IllegalArgumentException("max iterations must be in [1, " + MAX_ITERATIONS + "], was " + maxIterations);
    }
    if (bucketSize < 1 || bucketSize > MAX_BUCKET_SIZE) {
      throw new IllegalArgumentException("bucket size must be in [1, " + MAX_BUCKET_SIZE + "], was " + bucketSize);
    }
    if (expansion < 0 || expansion > MAX_EXPANSION) {
      throw new IllegalArgumentException("expansion must be in [0, " + MAX_EXPANSION + "], was " + expansion);
    }
    if ((long) bucketSize * 2 > capacity || capacity > MAX_CAPACITY) {
      throw new IllegalArgumentException("capacity must be in [2 x bucket size, " + MAX_CAPACITY + "], was "
          + capacity);
    }
    long buckets = Math.max(1, nextPowerOfTwo(capacity / bucketSize));
    CuckooTable first = CuckooTable.allocate(buckets, bucketSize);
    if (first == null) {
      throw new FilterTooLargeException("a table of " + buckets + " buckets of " + bucketSize
          + " slots does not fit in the heap");
    }
    return new CuckooFilter(buckets, bucketSize, maxIterations, (int) nextPowerOfTwo(expansion), 0, 0,
        new CuckooTable[] {first});
  }

  /** RedisBloom's {@code getNextN2}: the next power of two ≥ n; 0 stays 0. */
  static long nextPowerOfTwo(long n) {
    long v = n - 1;
    v |= v >>> 1;
    v |= v >>> 2;
    v |= v >>> 4;
    v |= v >>> 8;
    v |= v >>> 16;
    v |= v >>> 32;
    return v + 1;
  }

  @Override
  public FilterKind kind() {
    return FilterKind.CUCKOO;
  }

  /**
   * Always {@link ProtocolId#REDISBLOOM_MURMUR64A}: RedisBloom's MurmurHash64A of the item gives its fingerprint and
   * buckets. The format records it, as for every kind.
   */
  @Override
  public ProtocolId protocolId() {
    return ProtocolId.REDISBLOOM_MURMUR64A;
  }

  /**
   * {@code CF.ADD}: stores another copy of the item's fingerprint, even if one is present (a multiset), so that
   * every {@link #remove} of an item added here removes one of its own copies.
   *
   * <p>Unlike a Bloom filter's {@code add}, this always changes the filter and returns {@code true}: re-adding an
   * item stores a duplicate (filling buckets and eventually triggering growth) rather than being a no-op. Use
   * {@link #addIfAbsent} for RedisBloom's idempotent {@code CF.ADDNX}.
   *
   * @return {@code true}
   * @throws FilterFullException with reason {@code GROWTH_LIMIT} (the sub-filter limit), {@code NO_FREE_SLOT} (no
   *     room and expansion 0) or {@code OUT_OF_HEAP} (the next sub-filter does not fit); the filter is unchanged
   */
  @Override
  public boolean add(byte[] item) {
    Objects.requireNonNull(item, "item");
    checkExpansionBudget();
    return single(insertOne(MurmurHash2.hash64A(item, 0), false, false));
  }

  /**
   * {@code CF.ADDNX}: adds the item unless its fingerprint is already present in one of its buckets (the item, or
   * a false positive). Idempotent, but beware: an item for which this returned {@code false} because of a
   * false positive has no copy of its own, so deleting it later removes the other item's fingerprint.
   *
   * @return {@code true} if stored, {@code false} if the item was already reported as maybe present
   * @throws FilterFullException as {@link #add}
   */
  public boolean addIfAbsent(byte[] item) {
    Objects.requireNonNull(item, "item");
    checkExpansionBudget();
    return single(insertOne(MurmurHash2.hash64A(item, 0), true, false));
  }

  /**
   * {@link #add} ({@code onlyIfAbsent} false) or {@link #addIfAbsent} (true) for a caller that already serializes
   * every mutation of this filter itself (for instance under its own per-key lock): an item that finds a free slot
   * in one of its buckets is stored with no lock, no atomic instruction and no fence; one that needs a kick-out
   * chain or a new sub-filter takes the exclusive section as {@code add} does. Same answers, same growth, same
   * exceptions as {@code add} and {@code addIfAbsent}.
   *
   * <p><b>The caller guarantees</b> that while this method runs no other thread calls a mutator of this filter
   * ({@code add}, {@code remove}, {@code compact}, a chunk load, this method) nor {@link #copy()} or a serialization
   * that must be consistent with it. Lookups ({@link #mightContain}, {@link #count}, {@link #insertedCount}) may run
   * concurrently on any thread: a fingerprint stored in an empty slot changes no other item's answer, and the item
   * count is published with a release store after the fingerprint.
   */
  public boolean addAsSoleWriter(byte[] item, boolean onlyIfAbsent) {
    Objects.requireNonNull(item, "item");
    checkExpansionBudget();
    return single(insertOne(MurmurHash2.hash64A(item, 0), onlyIfAbsent, true));
  }

  /**
   * {@code CF.INSERT} ({@code onlyIfAbsent = false}) or {@code CF.INSERTNX} ({@code true}): one result per item.
   * As in RedisBloom, the sub-filter limit is checked once before the first item, so one call can grow the filter
   * past {@link #maxExpansions()}.
   *
   * @throws FilterFullException with reason {@code GROWTH_LIMIT} before any item is inserted
   */
  public List<InsertResult> insert(List<byte[]> items, boolean onlyIfAbsent) {
    return insert(items, onlyIfAbsent, false);
  }

  /**
   * {@link #insert} for a caller that serializes every mutation itself, under the guarantee {@link
   * #addAsSoleWriter} states.
   */
  public List<InsertResult> insertAsSoleWriter(List<byte[]> items, boolean onlyIfAbsent) {
    return insert(items, onlyIfAbsent, true);
  }

  private List<InsertResult> insert(List<byte[]> items, boolean onlyIfAbsent, boolean soleWriter) {
    Objects.requireNonNull(items, "items");
    for (byte[] item : items) {
      Objects.requireNonNull(item, "item");
    }
    checkExpansionBudget();
    InsertResult[] results = new InsertResult[items.size()];
    for (int i = 0; i < results.length; i++) {
      Outcome outcome = insertOne(MurmurHash2.hash64A(items.get(i), 0), onlyIfAbsent, soleWriter);
      results[i] = switch (outcome) {
        case INSERTED -> InsertResult.INSERTED;
        case EXISTS -> InsertResult.EXISTS;
        case NO_SPACE, ALLOCATION_FAILED -> InsertResult.FULL;
      };
    }
    return Collections.unmodifiableList(Arrays.asList(results));
  }

  private void checkExpansionBudget() {
    if (filterCount() >= maxExpansions) {
      throw new FilterFullException(FilterFullException.Reason.GROWTH_LIMIT,
          "the filter has its maximum of " + maxExpansions + " sub-filters");
    }
  }

  private boolean single(Outcome outcome) {
    switch (outcome) {
      case INSERTED:
        return true;
      case EXISTS:
        return false;
      case NO_SPACE:
        throw new FilterFullException(FilterFullException.Reason.NO_FREE_SLOT,
            "no free slot for the item's fingerprint after " + maxIterations + " kick-outs, and the filter may not grow");
      default:
        throw new FilterFullException(FilterFullException.Reason.OUT_OF_HEAP,
            "the next sub-filter does not fit in the heap");
    }
  }

  private Outcome insertOne(long hash, boolean onlyIfAbsent, boolean soleWriter) {
    Fingerprint key = new Fingerprint(hash);
    if (soleWriter) {
      return insertHeld(key, onlyIfAbsent, true);
    }
    synchronized (lock.writers()) {
      return insertHeld(key, onlyIfAbsent, false);
    }
  }

  /*
   * Why a sole-writer path: the exclusive section's lock and release are atomic instructions, each of which waits
   * until the stores before it have drained, among them the fingerprint's store into a bucket that missed the cache.
   * Storing a fingerprint into an empty slot needs no exclusion from readers: a lookup of another item is not
   * affected by it, and one of this item may see it or not, as with any add it runs beside. Only kick-outs (which move
   * other items' fingerprints) and growth must hide their steps from readers, and they still do.
   */

  /** The insert, with the writers' exclusion held by the caller (the monitor, or a sole writer's own lock). */
  private Outcome insertHeld(Fingerprint key, boolean onlyIfAbsent, boolean soleWriter) {
    if (onlyIfAbsent && containsIn(tables, key)) {
      return Outcome.EXISTS;
    }
    if (soleWriter && placeInFreeSlot(key)) {
      NUM_ITEMS.setRelease(this, numItems + 1);
      return Outcome.INSERTED;
    }
    while (true) {
      boolean stored = lock.exclusive(() -> {
        boolean placed = insertInPlace(key);
        if (placed) {
          numItems++;
        }
        return placed;
      });
      if (stored) {
        return Outcome.INSERTED;
      }
      if (expansion == 0) {
        return Outcome.NO_SPACE;
      }
      CuckooTable grown = nextTable();
      if (grown == null) {
        return Outcome.ALLOCATION_FAILED;
      }
      CuckooTable[] appended = Arrays.copyOf(tables, tables.length + 1);
      appended[tables.length] = grown;
      lock.exclusive(() -> tables = appended);
    }
  }

  /** {@code CuckooFilter_InsertFP} up to the grow step: a free slot newest→oldest, else a kick-out in the newest. */
  private boolean insertInPlace(Fingerprint key) {
    return placeInFreeSlot(key) || kickOutInsert(tables[tables.length - 1], key);
  }

  /** Stores the fingerprint in the first free slot of its buckets, newest sub-filter first; {@code false} if none. */
  private boolean placeInFreeSlot(Fingerprint key) {
    CuckooTable[] current = tables;
    for (int i = current.length - 1; i >= 0; i--) {
      CuckooTable table = current[i];
      long slot = table.findAvailable(key.h1, key.h2);
      if (slot >= 0) {
        table.set(slot, key.fp);
        return true;
      }
    }
    return false;
  }

  /** {@code Filter_KOInsert}, including its reverse-order rollback when no home is found. */
  private boolean kickOutInsert(CuckooTable table, Fingerprint key) {
    long buckets = table.numBuckets;
    byte fp = key.fp;
    int victim = 0;
    long bucket = Long.remainderUnsigned(key.h1, buckets);
    for (int counter = 0; counter < maxIterations; counter++) {
      long victimSlot = bucket * bucketSize + victim;
      byte displaced = table.get(victimSlot);
      table.set(victimSlot, fp);
      fp = displaced;
      bucket = Long.remainderUnsigned(altHash(fp, bucket), buckets);
      long empty = table.findEmpty(bucket * bucketSize);
      if (empty >= 0) {
        table.set(empty, fp);
        return true;
      }
      victim = (victim + 1) % bucketSize;
    }
    for (int counter = 0; counter < maxIterations; counter++) {
      victim = (victim + bucketSize - 1) % bucketSize;
      bucket = Long.remainderUnsigned(altHash(fp, bucket), buckets);
      long victimSlot = bucket * bucketSize + victim;
      byte displaced = table.get(victimSlot);
      table.set(victimSlot, fp);
      fp = displaced;
    }
    return false;
  }

  /** {@code CuckooFilter_Grow}'s sizing and allocation; {@code null} where RedisBloom's returns -1. */
  private CuckooTable nextTable() {
    int count = tables.length;
    if (count >= 0xFFFF) {
      return null;
    }
    long growth = power(expansion, count, MAX_NUM_BUCKETS / numBuckets);
    if (growth < 0) {
      return null;
    }
    return CuckooTable.allocate(numBuckets * growth, bucketSize);
  }

  /** base^exponent, or -1 if it exceeds {@code limit}. */
  static long power(long base, int exponent, long limit) {
    long result = 1;
    for (int i = 0; i < exponent; i++) {
      if (base != 0 && result > limit / base) {
        return -1;
      }
      result *= base;
    }
    return result > limit ? -1 : result;
  }

  static long altHash(byte fp, long index) {
    return index ^ ((fp & 0xFFL) * ALT_HASH_MULTIPLIER);
  }

  @Override
  public boolean mightContain(byte[] item) {
    Objects.requireNonNull(item, "item");
    Fingerprint key = new Fingerprint(MurmurHash2.hash64A(item, 0));
    return lock.readBoolean(() -> containsIn(tables, key));
  }

  private static boolean containsIn(CuckooTable[] current, Fingerprint key) {
    for (CuckooTable table : current) {
      if (table.find(table.bucketStart(key.h1), key.fp) >= 0 || table.find(table.bucketStart(key.h2), key.fp) >= 0) {
        return true;
      }
    }
    return false;
  }

  /**
   * {@code CF.COUNT}: matching fingerprints in both buckets of every sub-filter. Never below the number of copies
   * added and not deleted; above it when other items share the fingerprint and a bucket, or when both of an item's
   * buckets coincide (then counted twice, as RedisBloom does).
   */
  public long count(byte[] item) {
    Objects.requireNonNull(item, "item");
    Fingerprint key = new Fingerprint(MurmurHash2.hash64A(item, 0));
    return lock.readLong(() -> {
      long total = 0;
      for (CuckooTable table : tables) {
        total += table.countIn(table.bucketStart(key.h1), key.fp) + table.countIn(table.bucketStart(key.h2), key.fp);
      }
      return total;
    });
  }

  /**
   * {@code CF.DEL}: removes one copy of the item's fingerprint (newest sub-filter first, bucket h1 before h2).
   * <b>Only delete items that were added:</b> deleting a never-added item can remove another item's identical
   * fingerprint and make that item a false negative. May trigger compaction (see the class javadoc).
   *
   * @return {@code true} if a fingerprint was removed
   */
  public boolean remove(byte[] item) {
    Objects.requireNonNull(item, "item");
    Fingerprint key = new Fingerprint(MurmurHash2.hash64A(item, 0));
    synchronized (lock.writers()) {
      boolean removed = lock.exclusive(() -> {
        for (int i = tables.length - 1; i >= 0; i--) {
          CuckooTable table = tables[i];
          long slot = table.find(table.bucketStart(key.h1), key.fp);
          if (slot < 0) {
            slot = table.find(table.bucketStart(key.h2), key.fp);
          }
          if (slot >= 0) {
            table.set(slot, (byte) 0);
            numItems--;
            numDeletes++;
            return true;
          }
        }
        return false;
      });
      if (removed && tables.length > 1
          && Unsigned.toDouble(numDeletes) > Unsigned.toDouble(numItems) * 0.10) {
        compactAside(false);
      }
      return removed;
    }
  }

  /**
   * {@code CF.COMPACT}: moves fingerprints from newer sub-filters into free slots of older ones, freeing empty
   * newest sub-filters, and resets the delete counter. Readers keep working on the current tables meanwhile.
   * If the heap cannot hold the working copy, nothing changes.
   */
  public void compact() {
    synchronized (lock.writers()) {
      compactAside(true);
    }
  }

  /** {@code CuckooFilter_Compact} on copies, published by one swap; the caller holds the writers monitor. */
  private void compactAside(boolean continueAfterFailure) {
    CuckooTable[] work = new CuckooTable[tables.length];
    for (int i = 0; i < work.length; i++) {
      work[i] = tables[i].copy();
      if (work[i] == null) {
        return;
      }
    }
    int count = work.length;
    for (int i = count - 1; i > 0; i--) {
      boolean emptied = compactSingle(work, i);
      if (emptied && i == count - 1) {
        count--;
      } else if (!emptied && !continueAfterFailure) {
        break;
      }
    }
    CuckooTable[] published = Arrays.copyOf(work, count);
    lock.exclusive(() -> {
      tables = published;
      numDeletes = 0;
      return null;
    });
  }

  /** {@code CuckooFilter_CompactSingle}: true if every fingerprint of sub-filter {@code index} found a new home. */
  private static boolean compactSingle(CuckooTable[] work, int index) {
    CuckooTable source = work[index];
    boolean allMoved = true;
    for (long bucket = 0; bucket < source.numBuckets; bucket++) {
      for (int s = 0; s < source.bucketSize; s++) {
        long slot = bucket * source.bucketSize + s;
        byte fp = source.get(slot);
        if (fp == 0) {
          continue;
        }
        long h2 = altHash(fp, bucket);
        boolean moved = false;
        for (int older = 0; older < index && !moved; older++) {
          long target = work[older].findAvailable(bucket, h2);
          if (target >= 0) {
            work[older].set(target, fp);
            source.set(slot, (byte) 0);
            moved = true;
          }
        }
        allMoved &= moved;
      }
    }
    return allMoved;
  }

  // ---- accessors

  /** Buckets of the first sub-filter ("Number of buckets"). */
  public long bucketCount() {
    return numBuckets;
  }

  public int bucketSize() {
    return bucketSize;
  }

  public int maxIterations() {
    return maxIterations;
  }

  /** The expansion factor after RedisBloom's rounding up to a power of two; 0 means the filter never grows. */
  public int expansion() {
    return expansion;
  }

  /** Adds are refused once the filter has this many sub-filters ({@code cf-max-expansions}). */
  public int maxExpansions() {
    return maxExpansions;
  }

  /** Sets the sub-filter limit, in RedisBloom's {@code cf-max-expansions} range [1, 65536]. */
  public void setMaxExpansions(int limit) {
    if (limit < 1 || limit > MAX_MAX_EXPANSIONS) {
      throw new IllegalArgumentException("max expansions must be in [1, " + MAX_MAX_EXPANSIONS + "], got " + limit);
    }
    this.maxExpansions = limit;
  }

  /** "Number of items inserted": insertions minus deletions (unsigned). */
  @Override
  public long insertedCount() {
    return lock.readLong(() -> numItems);
  }

  /** "Number of items deleted" since the last compaction. */
  public long deletedCount() {
    return lock.readLong(() -> numDeletes);
  }

  public int filterCount() {
    return (int) lock.readLong(() -> tables.length);
  }

  /**
   * Fingerprint slots over all sub-filters (buckets × bucket size, summed): the most items the filter holds
   * before it must grow, or refuse adds when it cannot.
   */
  @Override
  public long capacity() {
    return lock.readLocked(() -> {
      long total = 0;
      for (CuckooTable table : tables) {
        total += table.slots;
      }
      return total;
    });
  }

  /**
   * Whether {@link #insertedCount()} has reached 80% of {@link #capacity()}: inserts then start to need long
   * kick chains, and soon a new sub-filter (or {@link io.bloomery.filter.FilterFullException}). O(sub-filters).
   */
  @Override
  public boolean isNearCapacity() {
    return Unsigned.toDouble(insertedCount()) >= 0.8 * capacity();
  }

  /** Occupied slots over all sub-filters. <b>Cost:</b> O(slots): it scans every bucket. */
  public long occupiedSlots() {
    return lock.readLocked(() -> {
      long total = 0;
      for (CuckooTable table : tables) {
        total += table.occupied();
      }
      return total;
    });
  }

  /** A consistent CF.INFO snapshot. */
  public Info info() {
    return lock.readLocked(() -> new Info(memoryBytes(tables), numBuckets, tables.length, numItems, numDeletes,
        bucketSize, expansion, maxIterations));
  }

  /**
   * CF.INFO's "Size" (the structs and every sub-filter's slots) without a lock: the sub-filters are published whole
   * and never resized, so this reads one consistent array of them.
   */
  public long memoryBytes() {
    return memoryBytes(tables);
  }

  private static long memoryBytes(CuckooTable[] tables) {
    long memory = FILTER_STRUCT_BYTES + SUBFILTER_STRUCT_BYTES * tables.length;
    for (CuckooTable table : tables) {
      memory += table.slots;
    }
    return memory;
  }

  /**
   * CF.DEBUG's reply: {@code bktsize:%u buckets:%lu items:%lu deletes:%lu filters:%u max_iterations:%u
   * expansion:%u}.
   */
  public String debug() {
    Info info = info();
    return "bktsize:" + bucketSize
        + " buckets:" + Long.toUnsignedString(numBuckets)
        + " items:" + Long.toUnsignedString(info.itemsInserted())
        + " deletes:" + Long.toUnsignedString(info.itemsDeleted())
        + " filters:" + info.numberOfFilters()
        + " max_iterations:" + maxIterations
        + " expansion:" + expansion;
  }

  /**
   * An independent copy (same limit on sub-filters).
   *
   * @throws OutOfMemoryError if the heap cannot hold the copy; this filter is unchanged
   */
  public CuckooFilter copy() {
    return lock.readLocked(() -> {
      CuckooTable[] copies = new CuckooTable[tables.length];
      for (int i = 0; i < copies.length; i++) {
        copies[i] = tables[i].copy();
        if (copies[i] == null) {
          throw new OutOfMemoryError("a copy of the cuckoo filter does not fit in the heap");
        }
      }
      CuckooFilter copy = new CuckooFilter(numBuckets, bucketSize, maxIterations, expansion, numItems, numDeletes,
          copies);
      copy.maxExpansions = maxExpansions;
      return copy;
    });
  }

  // ---- package-private access for the dump codec (CuckooDumpCodec)

  <T> T withTablesLocked(java.util.function.Function<CuckooTable[], T> reader) {
    return lock.readLocked(() -> reader.apply(tables));
  }

  void holdingWriters(KindAccess.IoAction action) throws java.io.IOException {
    synchronized (lock.writers()) {
      action.run();
    }
  }

  long numItemsUnlocked() {
    return numItems;
  }

  long numDeletesUnlocked() {
    return numDeletes;
  }

  void writeSlots(CuckooTable table, long offset, byte[] data, int from, int length) {
    synchronized (lock.writers()) {
      lock.exclusive(() -> {
        table.copyIn(offset, data, from, length);
        return null;
      });
    }
  }

  /** The fingerprint and both bucket hashes of an item, as RedisBloom's {@code getLookupParams}. */
  static final class Fingerprint {
    final byte fp;
    final long h1;
    final long h2;

    Fingerprint(long hash) {
      this.fp = (byte) (Long.remainderUnsigned(hash, 255) + 1);
      this.h1 = hash;
      this.h2 = altHash(fp, hash);
    }
  }

  /** CF.INFO's fields, in RedisBloom's reply order. */
  public record Info(long size, long numberOfBuckets, long numberOfFilters, long itemsInserted, long itemsDeleted,
      int bucketSize, int expansionRate, int maxIterations) {
    /** The reply with RedisBloom's field names, in order. */
    public Map<String, Long> asMap() {
      Map<String, Long> map = new LinkedHashMap<>();
      map.put("Size", size);
      map.put("Number of buckets", numberOfBuckets);
      map.put("Number of filters", numberOfFilters);
      map.put("Number of items inserted", itemsInserted);
      map.put("Number of items deleted", itemsDeleted);
      map.put("Bucket size", (long) bucketSize);
      map.put("Expansion rate", (long) expansionRate);
      map.put("Max iterations", (long) maxIterations);
      return Collections.unmodifiableMap(map);
    }
  }
}
