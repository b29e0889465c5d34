package io.bloomery.server.command;

import io.bloomery.filter.DumpRejectedException;
import io.bloomery.filter.FilterFullException;

/**
 * RedisBloom's error replies, verbatim, and the mapping from core's exceptions to them: core says what went wrong in
 * its own words and types ({@link FilterFullException}, {@link DumpRejectedException}, {@code
 * FilterTooLargeException}); the BF.* and CF.* families answer with the text RedisBloom sends for it.
 *
 * <p>RedisBloom sends these texts as given, so many have <b>no</b> {@code ERR } prefix. Sources:
 * {@code src/rebloom.c}, {@code src/sb.c} and {@code src/cf.c} at RedisBloom master {@code b28c29451ad4}
 * (as RedisBloom master b28c29451ad4 replies them). Constants named {@code LEGACY_*} are RedisBloom 2.x texts
 * (Redis Stack 6.2/7.x), kept for servers that imitate that generation.
 */
public final class RedisBloomErrors {
  private RedisBloomErrors() {}

  // ---- shared status strings (statusStrerror)
  public static final String NOT_FOUND = "ERR not found";
  public static final String ITEM_EXISTS = "ERR item exists";
  public static final String WRONG_TYPE = "WRONGTYPE Operation against a key holding the wrong kind of value";

  // ---- BF creation (BF.RESERVE / BF.INSERT / BF.ADD auto-create)
  public static final String BF_BAD_ERROR_RATE = "ERR bad error rate";
  public static final String BF_ERROR_RATE_RANGE = "ERR error rate must be in the range (0.000000, 1.000000)";
  public static final String BF_BAD_CAPACITY = "ERR bad capacity";
  public static final String BF_CAPACITY_RANGE = "ERR capacity must be in the range [1, 1073741824]";
  public static final String BF_NO_EXPANSION = "ERR no expansion";
  public static final String BF_BAD_EXPANSION = "ERR bad expansion";
  public static final String BF_NONSCALING_CANNOT_EXPAND = "Nonscaling filters cannot expand";
  public static final String BF_EXPANSION_RANGE = "ERR expansion must be in the range [0, 32768]";
  public static final String BF_INSUFFICIENT_MEMORY = "ERR Insufficient memory to create filter";
  public static final String BF_COULD_NOT_CREATE = "ERR could not create filter";
  /** BF.INSERT's per-option errors (no ERR prefix). */
  public static final String BF_INSERT_BAD_ERROR_RATE = "Bad error rate";
  public static final String BF_INSERT_BAD_EXPANSION = "Bad expansion";
  public static final String BF_INSERT_BAD_CAPACITY = "Bad capacity";
  public static final String UNKNOWN_ARGUMENT = "Unknown argument received";

  // ---- BF add
  public static final String BF_NONSCALING_FULL = "ERR non scaling filter is full";
  public static final String BF_PROBLEM_INSERTING = "ERR problem inserting into filter";

  // ---- BF.INFO / SCANDUMP / LOADCHUNK
  public static final String BF_INVALID_INFO_VALUE = "Invalid information value";
  public static final String BF_SCANDUMP_NOT_NUMERIC = "Second argument must be numeric";
  public static final String BF_LOADCHUNK_NOT_NUMERIC = "ERR Second argument must be numeric";
  public static final String BF_BAD_DATA = "ERR received bad data";
  public static final String BF_NO_LINK = "ERR invalid offset - no link found";
  public static final String BF_CHUNK_TOO_BIG = "ERR invalid chunk - Too big for current filter";

  // ---- CF creation
  public static final String CF_BAD_CAPACITY = "Bad capacity";
  public static final String CF_PARSE_MAX_ITERATIONS = "Couldn't parse MAXITERATIONS";
  public static final String CF_MAX_ITERATIONS_RANGE = "MAXITERATIONS: value must be in the range [1, 65535]";
  public static final String CF_PARSE_BUCKET_SIZE = "Couldn't parse BUCKETSIZE";
  public static final String CF_BUCKET_SIZE_RANGE = "BUCKETSIZE: value must be in the range [1, 255]";
  public static final String CF_PARSE_EXPANSION = "Couldn't parse EXPANSION";
  public static final String CF_EXPANSION_RANGE = "EXPANSION: value must be in the range [0, 32768]";
  /** CF.RESERVE's capacity range error (the text names BUCKETSIZE literally). */
  public static final String CF_CAPACITY_RANGE = "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]";
  /** CF.INSERT's capacity range error (the text names the config literally). */
  public static final String CF_INSERT_CAPACITY_RANGE = "Capacity must be in the range [cf-bucket-size * 2, 1073741824]";
  public static final String CF_INSUFFICIENT_MEMORY_CREATE = "ERR Insufficient memory to create filter";
  public static final String CF_COULD_NOT_CREATE = "ERR Could not create filter";

  // ---- CF add / delete / compact
  public static final String CF_MAX_EXPANSIONS = "Maximum expansions reached";
  public static final String CF_FULL = "Filter is full";
  public static final String CF_INSUFFICIENT_MEMORY = "ERR Insufficient memory";
  public static final String CF_DEL_NOT_FOUND = "Not found";
  public static final String CF_COMPACT_NOT_FOUND = "Cuckoo filter was not found";

  // ---- CF SCANDUMP / LOADCHUNK
  public static final String CF_INVALID_POSITION = "Invalid position";
  public static final String CF_INVALID_HEADER = "Invalid header";
  public static final String CF_COULD_NOT_CREATE_FROM_HEADER = "Couldn't create filter!";
  public static final String CF_COULD_NOT_LOAD_CHUNK = "Couldn't load chunk!";

  // ---- RedisBloom 2.x texts
  public static final String LEGACY_BF_ERROR_RATE_RANGE = "ERR (0 < error rate range < 1) ";
  public static final String LEGACY_BF_CAPACITY = "ERR (capacity should be larger than 0)";
  public static final String LEGACY_BF_EXPANSION = "ERR expansion should be greater or equal to 1";
  public static final String LEGACY_BF_INSERT_BAD_ARGUMENT = "Bad argument received";
  public static final String LEGACY_CF_MAX_ITERATIONS = "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.";
  public static final String LEGACY_CF_BUCKET_SIZE = "BUCKETSIZE: value must be an integer between 1 and 255, inclusive.";
  public static final String LEGACY_CF_EXPANSION = "EXPANSION: value must be an integer between 0 and 32768, inclusive.";
  public static final String LEGACY_CF_CAPACITY = "Capacity must be at least (BucketSize * 2)";

  /** BF.ADD's reply for an add the filter refused (a scalable, scaling blocked or fixed-layout BF key). */
  public static String bloomFull(FilterFullException e) {
    return e.reason() == FilterFullException.Reason.AT_CAPACITY ? BF_NONSCALING_FULL : BF_PROBLEM_INSERTING;
  }

  /** CF.ADD's reply for an add the filter refused. */
  public static String cuckooFull(FilterFullException e) {
    return switch (e.reason()) {
      case GROWTH_LIMIT -> CF_MAX_EXPANSIONS;
      case NO_FREE_SLOT, AT_CAPACITY -> CF_FULL;
      case OUT_OF_HEAP -> CF_INSUFFICIENT_MEMORY;
    };
  }

  /** BF.LOADCHUNK's reply for a header or chunk the filter refused. */
  public static String bloomDump(DumpRejectedException e) {
    return switch (e.reason()) {
      case NO_LAYER_AT_OFFSET -> BF_NO_LINK;
      case PAST_LAYER_END -> BF_CHUNK_TOO_BIG;
      case HEADER_LENGTH, HEADER_INVALID, TOO_LARGE, POSITION, HEADER_AGAIN -> BF_BAD_DATA;
    };
  }

  /** CF.SCANDUMP's and CF.LOADCHUNK's reply for a position, header or chunk the filter refused. */
  public static String cuckooDump(DumpRejectedException e) {
    return switch (e.reason()) {
      case HEADER_LENGTH -> CF_INVALID_HEADER;
      case HEADER_INVALID, TOO_LARGE -> CF_COULD_NOT_CREATE_FROM_HEADER;
      case POSITION -> CF_INVALID_POSITION;
      case HEADER_AGAIN -> ITEM_EXISTS;
      case NO_LAYER_AT_OFFSET, PAST_LAYER_END -> CF_COULD_NOT_LOAD_CHUNK;
    };
  }
}
