package io.bloomery.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SyntheticUrlsTest {
  @Test
  void deterministic_distinct_andAbout80Bytes() {
    SyntheticUrls urls = new SyntheticUrls(42);
    SyntheticUrls again = new SyntheticUrls(42);
    Set<String> seen = new HashSet<>();
    long totalBytes = 0;
    int n = 200_000;
    for (int i = 0; i < n; i++) {
      String url = urls.url(i);
      assertThat(url).isEqualTo(again.url(i)).startsWith("https://").endsWith(".html");
      assertThat(seen.add(url)).as("index %d repeats %s", i, url).isTrue();
      totalBytes += urls.urlBytes(i).length;
    }
    assertThat((double) totalBytes / n).isBetween(70.0, 90.0);
    assertThat(new SyntheticUrls(43).url(7)).isNotEqualTo(urls.url(7));
    assertThat(urls.url(Long.MAX_VALUE)).endsWith("-" + Long.toString(Long.MAX_VALUE, 36) + ".html");
  }

  @Test
  void probesAreKnownNonMembersAndMembersWithTheirBytes() {
    SyntheticUrls urls = new SyntheticUrls(SyntheticUrls.BENCH_SEED);
    long members = 5_000;
    Set<String> memberSet = new HashSet<>();
    for (long i = 0; i < members; i++) {
      memberSet.add(urls.url(i));
    }
    SyntheticUrls.Probes probes = urls.probes(members, 2_000);
    assertThat(probes.absent().length).isEqualTo(2_000);
    assertThat(probes.present().length).isEqualTo(2_000);
    for (int i = 0; i < 2_000; i++) {
      assertThat(probes.absentStrings()[i]).isEqualTo(urls.url(members + i));
      assertThat(memberSet).doesNotContain(probes.absentStrings()[i]).contains(probes.presentStrings()[i]);
      assertThat(probes.absent()[i]).isEqualTo(urls.urlBytes(members + i));
      assertThat(new String(probes.present()[i], java.nio.charset.StandardCharsets.UTF_8))
          .isEqualTo(probes.presentStrings()[i]);
    }
    assertThat(urls.probes(members, 2_000).presentStrings()).isEqualTo(probes.presentStrings());
  }
}
