package io.bloomery.hash;

/** Base of the shipped protocols: prints as its stable name. */
abstract class NamedProtocol implements HashProtocol {

  @Override
  public final String toString() {
    return name();
  }
}
