package io.bloomery.server.command;

import io.bloomery.filter.DumpRejectedException;
import io.bloomery.filter.FilterFullException;

/**
 * RedisBloom's error replies, verbatim, and the mapping from core's exceptions to them: core says what went wrong in
 * its own words and types ({@link FilterFullException}, {@link DumpRejectedException}, {@code
 * FilterTooLargeException}); the BF, CF, CMS, TOPK and TDIGEST families answer with the text RedisBloom sends for it.
 *
 * <p>RedisBloom sends these texts as given, so many have <b>no</b> {@code ERR } prefix. Sources: {@code src/rebloom.c},
 * {@code src/sb.c}, {@code src/cf.c}, {@code src/rm_cms.c}, {@code src/rm_topk.c} and {@code src/rm_tdigest.c} at
 * RedisBloom master {@code b28c29451ad4}. Constants named {@code LEGACY_*} are RedisBloom 2.x texts
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

  // ---- CMS.* (src/rm_cms.c)
  public static final String CMS_KEY_EXISTS = "CMS: key already exists";
  public static final String CMS_INVALID_WIDTH = "CMS: invalid width";
  public static final String CMS_INVALID_DEPTH = "CMS: invalid depth";
  public static final String CMS_INVALID_OVERESTIMATION = "CMS: invalid overestimation value";
  public static final String CMS_INVALID_PROB = "CMS: invalid prob value";
  /** Width × depth overflows, or a dimension computed by INITBYPROB is below 1. */
  public static final String CMS_INVALID_INIT_ARGUMENTS = "CMS: invalid init arguments";
  public static final String CMS_INSUFFICIENT_MEMORY = "CMS: Insufficient memory to create the key";
  public static final String CMS_KEY_DOES_NOT_EXIST = "CMS: key does not exist";
  public static final String CMS_CANNOT_PARSE_NUMBER = "CMS: Cannot parse number";
  public static final String CMS_NEGATIVE_NUMBER = "CMS: Number cannot be negative";
  /** CMS.INCRBY's reply element when the new minimum is the largest counter. */
  public static final String CMS_INCRBY_OVERFLOW = "CMS: INCRBY overflow";
  public static final String CMS_INVALID_NUMKEYS = "CMS: invalid numkeys";
  public static final String CMS_NUMKEYS_NOT_POSITIVE = "CMS: Number of keys must be positive";
  public static final String CMS_WRONG_NUMBER_OF_KEYS = "CMS: wrong number of keys";
  public static final String CMS_WRONG_NUMBER_OF_KEYS_WEIGHTS = "CMS: wrong number of keys/weights";
  public static final String CMS_INVALID_WEIGHT = "CMS: invalid weight value";
  public static final String CMS_DIMENSIONS_NOT_EQUAL = "CMS: width/depth is not equal";
  public static final String CMS_MERGE_OVERFLOW = "CMS: MERGE overflow";

  // ---- TOPK.* (src/rm_topk.c)
  public static final String TOPK_KEY_EXISTS = "TopK: key already exists";
  public static final String TOPK_INVALID_K = "TopK: invalid k";
  public static final String TOPK_INVALID_WIDTH = "TopK: invalid width";
  public static final String TOPK_INVALID_DEPTH = "TopK: invalid depth";
  public static final String TOPK_INVALID_DECAY = "TopK: invalid decay value. must be '<= 1' & '> 0'";
  /** Allocation failure (with RedisBloom's {@code ERR} prefix, unlike the other TopK texts). */
  public static final String TOPK_INSUFFICIENT_MEMORY = "ERR Insufficient memory to create topk data structure";
  public static final String TOPK_KEY_DOES_NOT_EXIST = "TopK: key does not exist";
  /** TOPK.LIST with an option other than a prefix of WITHCOUNT. */
  public static final String TOPK_WITHCOUNT_EXPECTED = "WITHCOUNT keyword expected";
  /**
   * TOPK.INCRBY increment outside [0, 100000], verbatim: RedisBloom's C line continuation embeds 4 + 24 spaces, 115
   * characters in all.
   */
  public static final String TOPK_INVALID_INCREMENT =
      "TopK: increment must be an integer greater or equal to 0    "
          + "                        and smaller or equal to 100,000";

  // ---- TDIGEST.* (src/rm_tdigest.c), every one with the ERR prefix
  public static final String TDIGEST_KEY_DOES_NOT_EXIST = "ERR T-Digest: key does not exist";
  public static final String TDIGEST_KEY_EXISTS = "ERR T-Digest: key already exists";
  public static final String TDIGEST_PARSING_COMPRESSION = "ERR T-Digest: error parsing compression parameter";
  public static final String TDIGEST_COMPRESSION_NOT_POSITIVE =
      "ERR T-Digest: compression parameter needs to be a positive integer";
  public static final String TDIGEST_WRONG_KEYWORD = "ERR T-Digest: wrong keyword";
  public static final String TDIGEST_ALLOCATION_FAILED = "ERR T-Digest: allocation failed";
  public static final String TDIGEST_DESTINATION_ALLOCATION_FAILED =
      "ERR T-Digest: allocation of destination digest failed";
  public static final String TDIGEST_PARSING_VAL = "ERR T-Digest: error parsing val parameter";
  public static final String TDIGEST_VAL_NOT_FINITE = "ERR T-Digest: val parameter needs to be a finite number";
  public static final String TDIGEST_OVERFLOW = "ERR T-Digest: overflow detected";
  public static final String TDIGEST_PARSING_NUMKEYS = "ERR T-Digest: error parsing numkeys";
  public static final String TDIGEST_NUMKEYS_NOT_POSITIVE = "ERR T-Digest: numkeys needs to be a positive integer";
  public static final String TDIGEST_PARSING_VALUE = "ERR T-Digest: error parsing value";
  public static final String TDIGEST_PARSING_RANK = "ERR T-Digest: error parsing rank";
  public static final String TDIGEST_RANK_NEGATIVE = "ERR T-Digest: rank needs to be non negative";
  public static final String TDIGEST_PARSING_QUANTILE = "ERR T-Digest: error parsing quantile";
  public static final String TDIGEST_QUANTILE_RANGE = "ERR T-Digest: quantile should be in [0,1]";
  public static final String TDIGEST_PARSING_CDF = "ERR T-Digest: error parsing cdf";
  public static final String TDIGEST_PARSING_LOW_CUT = "ERR T-Digest: error parsing low_cut_percentile";
  public static final String TDIGEST_PARSING_HIGH_CUT = "ERR T-Digest: error parsing high_cut_percentile";
  public static final String TDIGEST_CUT_RANGE =
      "ERR T-Digest: low_cut_percentile and high_cut_percentile should be in [0,1]";
  public static final String TDIGEST_CUT_ORDER =
      "ERR T-Digest: low_cut_percentile should be lower than high_cut_percentile";

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
