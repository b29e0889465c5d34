package io.bloomery.testkit;

import io.bloomery.filter.FilterKind;
import io.bloomery.filter.Summary;
import io.bloomery.hash.ProtocolId;

/** A {@link Summary} that is none of core's kinds, however it names its kind: what the format must refuse. */
public record ForeignSummary(FilterKind kind, ProtocolId protocolId) implements Summary {

  /** Claims the classic kind's code and protocol but is no {@code BloomFilter}. */
  public static ForeignSummary claimingClassic() {
    return new ForeignSummary(FilterKind.CLASSIC_BLOOM, ProtocolId.XXH3_EDH_V1);
  }
}
