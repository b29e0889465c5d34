/*
 * Generates known-answer vectors for Bloomery's RedisBloom-compatible sketches
 * (io.bloomery.sketch.CountMinSketch, io.bloomery.sketch.TopK, MurmurHash2, glibc rand()).
 *
 * It links RedisBloom's own cms.c, topk.c and MurmurHash2.c (not copied into Bloomery), so the
 * vectors are what RedisBloom computes. Build and run (see README.md next to this file):
 *
 *   R=/path/to/RedisBloom   # checkout at b28c2945
 *   gcc -O1 -std=gnu11 -I$R/src -I$R/deps \
 *     -DCMS_CALLOC=calloc -DCMS_TRYCALLOC=calloc -DCMS_FREE=free \
 *     -DTOPK_CALLOC=calloc -DTOPK_TRYCALLOC=calloc -DTOPK_FREE=free \
 *     sketch_vectors.c $R/src/cms.c $R/src/topk.c $R/deps/murmur2/MurmurHash2.c -lm -o sketch_vectors
 *   ./sketch_vectors > redisbloom-sketches.txt
 *
 * Output is line based; every byte string is lower-case hex ("-" for NULL / empty reply).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cms.h"
#include "topk.h"
#include "murmur2/murmurhash2.h"

static void hex(const char *s, size_t n) {
  if (n == 0) { printf("-"); return; }
  for (size_t i = 0; i < n; i++) printf("%02x", (unsigned char)s[i]);
}

/* Deterministic, skewed item stream shared with the Java test (SketchVectorStream). */
static uint64_t lcg;
static int next_item(char *buf, int universe) {
  lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
  uint64_t a = (lcg >> 33) % (uint64_t)universe;
  lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
  uint64_t b = (lcg >> 33) % (uint64_t)universe;
  return sprintf(buf, "i%llu", (unsigned long long)(a * b / universe));
}

static void topk_scenario(const char *name, uint32_t k, uint32_t w, uint32_t d, double decay,
                          unsigned seed, int ops, int universe, int maxIncr) {
  srand(seed);
  lcg = seed;
  TopK *t = TopK_Create(k, w, d, decay);
  printf("topk %s %u %u %u %.17g %u %d %d %d\n", name, k, w, d, decay, seed, ops, universe, maxIncr);
  char buf[64];
  for (int op = 0; op < ops; op++) {
    int n = next_item(buf, universe);
    uint32_t incr = 1;
    if (maxIncr > 1) {
      lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
      incr = (uint32_t)((lcg >> 33) % (uint64_t)(maxIncr + 1));
    }
    char *expelled = TopK_Add(t, buf, n, incr);
    if (expelled) {
      printf("e %d ", op);
      hex(expelled, strlen(expelled));
      printf("\n");
      free(expelled);
    }
  }
  HeapBucket *list = TopK_List(t);
  printf("list");
  for (uint32_t i = 0; i < k; i++) {
    if (list[i].count == 0) break;
    printf(" ");
    hex(list[i].item, list[i].itemlen);
    printf(":%u", list[i].count);
  }
  printf("\n");
  free(list);
  for (int i = 0; i < universe && i < 200; i++) {
    int n = sprintf(buf, "i%d", i);
    printf("c %s %zu %d\n", buf, TopK_Count(t, buf, n), TopK_Query(t, buf, n) ? 1 : 0);
  }
  printf("end\n");
  TopK_Destroy(t);
}

int main(void) {
  /* glibc rand() after srand(seed). */
  unsigned seeds[] = {0, 1, 42, 2147483648u, 4294967295u};
  for (int s = 0; s < 5; s++) {
    srand(seeds[s]);
    printf("rand %u", seeds[s]);
    for (int i = 0; i < 8; i++) printf(" %d", rand());
    printf("\n");
  }

  /* MurmurHash2 (32-bit) over items of every tail length, several seeds. */
  const char *items[] = {"", "a", "ab", "abc", "abcd", "abcde", "foo", "bar", "baz", "42",
                         "hello world", "\xff\xfe\x80\x00\x01", "The quick brown fox jumps over the lazy dog"};
  size_t lens[] = {0, 1, 2, 3, 4, 5, 3, 3, 3, 2, 11, 5, 43};
  uint32_t hseeds[] = {0, 1, 2, 6, 1919, 0xffffffffu};
  for (int i = 0; i < 13; i++)
    for (int s = 0; s < 6; s++) {
      printf("murmur2 ");
      hex(items[i], lens[i]);
      printf(" %u %u\n", hseeds[s], MurmurHash2(items[i], (int)lens[i], hseeds[s]));
    }

  /* INITBYPROB dimensions (float log10f as in CMS_DimFromProb). */
  double errs[] = {0.001, 0.01, 0.1, 0.5, 0.3, 0.0001, 0.07, 0.9};
  double probs[] = {0.01, 0.001, 0.1, 0.5, 0.25, 0.125, 0.9, 0.999, 0.0001, 1e-9, 0.3, 0.7};
  for (int e = 0; e < 8; e++)
    for (int p = 0; p < 12; p++) {
      size_t w, d;
      CMS_DimFromProb(errs[e], probs[p], &w, &d);
      printf("cmsdim %.17g %.17g %zu %zu\n", errs[e], probs[p], w, d);
    }

  /* CMS: a small sketch driven by the shared stream; every INCRBY result and final queries. */
  {
    CMSketch *c = NewCMSketch(64, 4);
    lcg = 7;
    char buf[64];
    printf("cms 64 4 7 3000 500\n");
    for (int op = 0; op < 3000; op++) {
      int n = next_item(buf, 500);
      lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
      size_t incr = (size_t)((lcg >> 33) % 1000);
      size_t r = CMS_IncrBy(c, buf, n, incr);
      if (op % 100 == 0) printf("r %d %zu\n", op, r);
    }
    for (int i = 0; i < 500; i += 7) {
      int n = sprintf(buf, "i%d", i);
      printf("q %s %zu\n", buf, CMS_Query(c, buf, n));
    }
    printf("count %zu\n", c->counter);
    printf("end\n");
    CMS_Destroy(c);
  }

  topk_scenario("defaults", 3, 8, 7, 0.9, 1, 2000, 50, 1);
  topk_scenario("zipf", 10, 50, 5, 0.9, 42, 20000, 1000, 1);
  topk_scenario("tight", 5, 4, 3, 0.925, 7, 5000, 100, 1);
  topk_scenario("incrby", 4, 16, 3, 0.9, 11, 3000, 80, 400);
  topk_scenario("k1", 1, 3, 3, 0.9, 5, 1000, 20, 300);
  return 0;
}
