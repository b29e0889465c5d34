package io.bloomery.guard;

/**
 * Two different items share a SHA-256 digest. The stores index items by digest (so that arbitrarily
 * long documents fit a unique index) and then confirm by byte equality; if the bytes differ the
 * store refuses to answer rather than call a different item a duplicate. No such collision is
 * known; seeing this means a broken digest or a tampered table.
 */
public class DigestCollisionException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  public DigestCollisionException(String message) {
    super(message);
  }
}
