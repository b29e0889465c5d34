package io.bloomery.redisbloom;

/**
 * A condition RedisBloom answers with an error reply: invalid creation parameters, a full NONSCALING filter, a
 * failed layer allocation, a rejected SCANDUMP/LOADCHUNK chunk, and so on.
 *
 * <p>{@link #getMessage()} is exactly the text RedisBloom would send (one of the {@link RedisBloomErrors}
 * constants), so a RESP server can reply with it verbatim. Nothing was changed by the operation that threw,
 * unless its javadoc says otherwise.
 */
public final class RedisBloomException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public RedisBloomException(String reply) {
    super(reply);
  }

  /** The verbatim RedisBloom error reply. */
  public String reply() {
    return getMessage();
  }
}
