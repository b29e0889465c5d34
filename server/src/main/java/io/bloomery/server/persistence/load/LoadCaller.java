package io.bloomery.server.persistence.load;

/**
 * What a file load needs from the command that sent its chunk, handed in by that command: which connection sent it,
 * whether recovery is replaying it, and whether memory admits the filter. The loads reach for nothing else.
 */
public interface LoadCaller {
  /** The connection that sent the chunk; its closing abandons the load. */
  long clientId();

  /** Whether recovery is replaying the journal (then no loaded file is kept for the journal to name). */
  boolean replaying();

  /**
   * Refuses, by throwing the error the client gets, a filter of {@code bytes} (its largest array {@code largestArray}
   * bytes) that the memory budget or the heap cannot take.
   */
  void admit(long bytes, long largestArray);

  /** {@link #admit} of a filter whose {@code bytes} this load already reserved against the budget. */
  void admitReserved(long bytes, long largestArray);
}
