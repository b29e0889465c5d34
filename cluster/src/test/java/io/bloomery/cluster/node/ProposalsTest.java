package io.bloomery.cluster.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.server.resp.Reply;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The refusals {@link Proposals} answers before a write is queued, nothing sent to Raft. */
class ProposalsTest {
  private static final byte[] LARGE = new byte[5 << 20];

  @Test
  void aWriteInPartsIsRefusedWhenTheHeapCannotHoldThreeTimesIt() throws Exception {
    long max = Runtime.getRuntime().maxMemory();
    Proposals nearlyFull = new Proposals(null, null, "s0", null, () -> 0, null, () -> max - (12 << 20));
    Reply refused = nearlyFull.add(List.of("CF.ADD".getBytes(StandardCharsets.US_ASCII), "k".getBytes(StandardCharsets.US_ASCII), LARGE), Long.MAX_VALUE,
        () -> { throw new AssertionError("not queued, so never sent elsewhere"); }).get();
    assertThat(refused).isInstanceOf(Reply.Error.class);
    assertThat(((Reply.Error) refused).text()).startsWith("OOM a write of " + (LARGE.length + 7) + " bytes goes in "
        + "parts").endsWith("nothing was applied");
  }

  @Test
  void aWatchedTransactionLargerThanOneEntryIsRefused() throws Exception {
    Proposals proposals = new Proposals(null, null, "s0", null, () -> 0, null, () -> 0);
    Reply refused = proposals.addTransaction(List.of(List.of("CF.ADD".getBytes(StandardCharsets.US_ASCII), "k".getBytes(StandardCharsets.US_ASCII), LARGE)),
        Long.MAX_VALUE, () -> { throw new AssertionError("not queued"); }, () -> true).get();
    assertThat(((Reply.Error) refused).text()).startsWith("ERR a transaction under WATCH of " + (LARGE.length + 7)
        + " bytes");
  }
}
