package io.bloomery.redisbloom;

/**
 * A parameter RedisBloom rejects with an error reply: an out-of-range creation parameter, a filter too large for
 * the heap, a rejected SCANDUMP/LOADCHUNK chunk or header. It is an {@link IllegalArgumentException}, as every
 * kind's parameter errors are; a filter that cannot take another item throws {@link
 * io.bloomery.filter.FilterFullException} instead (with RedisBloom's text as its message).
 *
 * <p>{@link #getMessage()} is exactly the text RedisBloom would send (one of the {@link RedisBloomErrors}
 * constants), so a RESP server can reply with it verbatim. Nothing was changed by the operation that threw,
 * unless its javadoc says otherwise.
 */
public final class RedisBloomException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  public RedisBloomException(String reply) {
    super(reply);
  }

  /** The verbatim RedisBloom error reply. */
  public String reply() {
    return getMessage();
  }
}
