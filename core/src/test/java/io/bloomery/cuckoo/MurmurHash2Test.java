package io.bloomery.cuckoo;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.hash.MurmurHash2;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The vectors of RedisBloom's MurmurHash64A test value, reproduced there from RedisBloom's own test expectations:
 * the BF seed's hash pair and the CF hash with its fingerprint.
 */
class MurmurHash2Test {

  @ParameterizedTest(name = "\"{0}\"")
  @CsvSource(delimiter = '|', emptyValue = "", value = {
      "''              |1ab11ea5a7b2c56e|bbddcb5ab56dd547|0000000000000000|1  |00000000",
      "a               |4292cee227b9150a|7e9b527031f50c11|071717d2d36b6b11|196|92685f5e",
      "foo             |822b4f99b121f10d|9d63d52a557f61c2|cdde38358fd25b01|217|8fea6375",
      "item1           |a053790e072b2e8b|707e5d60182eb075|7930a108c52a9032|7  |2aeedca2",
      "hello world     |bae8fb35317acde1|a5c3078260d44436|d3ba2368a832afce|116|44a81419",
      "0123456789abcdef|73397e4fb095abef|357e078c4cda6880|93a92d1a91a24bc7|204|cf9af71a",
  })
  void matchesReferenceVectors(String item, String a, String b, String cuckooHash, int fingerprint, String hash32) {
    byte[] bytes = item.getBytes(StandardCharsets.UTF_8);
    long expectedA = Long.parseUnsignedLong(a, 16);
    assertThat(MurmurHash2.hash64A(bytes, MurmurHash2.REDISBLOOM_BF_SEED)).isEqualTo(expectedA);
    assertThat(MurmurHash2.hash64A(bytes, expectedA)).isEqualTo(Long.parseUnsignedLong(b, 16));
    long h = MurmurHash2.hash64A(bytes, 0);
    assertThat(h).isEqualTo(Long.parseUnsignedLong(cuckooHash, 16));
    assertThat(new CuckooFilter.Fingerprint(h).fp & 0xFF).isEqualTo(fingerprint);
    assertThat(MurmurHash2.hash32(bytes, 0, bytes.length, 0)).isEqualTo(Integer.parseUnsignedInt(hash32, 16));
  }

  @ParameterizedTest
  @CsvSource({"0", "1", "7", "8", "9", "15", "16", "17"})
  void offsetAndLengthSelectTheSameBytesAsACopy(int length) {
    byte[] padded = new byte[length + 6];
    for (int i = 0; i < padded.length; i++) {
      padded[i] = (byte) (31 * i + 7);
    }
    byte[] slice = java.util.Arrays.copyOfRange(padded, 3, 3 + length);
    assertThat(MurmurHash2.hash64A(padded, 3, length, 42)).isEqualTo(MurmurHash2.hash64A(slice, 42));
    assertThat(MurmurHash2.hash32(padded, 3, length, 42)).isEqualTo(MurmurHash2.hash32(slice, 0, length, 42));
  }
}
