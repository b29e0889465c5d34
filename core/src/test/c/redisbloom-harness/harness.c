/* Produces SCANDUMP replies with RedisBloom's own C code (src/sb.c, deps/bloom/bloom.c, src/cuckoo.c, src/cf.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "redismodule.h"
#include "src/sb.h"
#include "src/cf.h"
#include "src/config.h"

static void *my_alloc(size_t n) { return malloc(n); }
static void *my_calloc(size_t a, size_t b) { return calloc(a, b); }
static void *my_realloc(void *p, size_t n) { return realloc(p, n); }
static void my_free(void *p) { free(p); }
void *(*RedisModule_Alloc)(size_t) = my_alloc;
void *(*RedisModule_Calloc)(size_t, size_t) = my_calloc;
void *(*RedisModule_TryCalloc)(size_t, size_t) = my_calloc;
void *(*RedisModule_Realloc)(void *, size_t) = my_realloc;
void (*RedisModule_Free)(void *) = my_free;
const char *(*RedisModule_StringPtrLen)(const RedisModuleString *, size_t *) = NULL;
RM_Config rm_config = {
    .cf_bucket_size = {.min = 1, .max = 255},
    .cf_max_expansions = {.min = 1, .max = 65536},
    .cf_max_iterations = {.min = 1, .max = 65535},
    .cf_expansion_factor = {.min = 0, .max = 32768},
};

static void put(FILE *out, long long iter, const void *data, uint32_t len) {
    fwrite(&iter, 8, 1, out);
    fwrite(&len, 4, 1, out);
    fwrite(data, 1, len, out);
}

/* bf <file> <error> <capacity> <expansion> <prefix> <count|-item> : BF.RESERVE (EXPANSION 0 = NONSCALING) + adds */
static int bf(char **argv) {
    double error = atof(argv[3]);
    long long capacity = atoll(argv[4]);
    unsigned expansion = atoi(argv[5]);
    unsigned options = BLOOM_OPT_FORCE64 | BLOOM_OPT_NOROUND | (expansion == 0 ? BLOOM_OPT_NO_SCALING : 0);
    int err;
    SBChain *sb = SB_NewChain(capacity, error, options, expansion, &err);
    if (!sb) return 2;
    int count = atoi(argv[7]);
    char item[256];
    if (count == 0) {
        SBChain_Add(sb, argv[6], strlen(argv[6]));
    }
    for (int i = 0; i < count; i++) {
        int n = snprintf(item, sizeof item, "%s%d", argv[6], i);
        SBChain_Add(sb, item, n);
    }
    FILE *out = fopen(argv[2], "wb");
    size_t hdrlen;
    char *hdr = SBChain_GetEncodedHeader(sb, &hdrlen);
    put(out, 1, hdr, hdrlen);
    long long iter = 1;
    size_t len;
    const char *chunk;
    while ((chunk = SBChain_GetEncodedChunk(sb, &iter, &len, 16 * 1024 * 1024)) != NULL) {
        put(out, iter, chunk, len);
    }
    fclose(out);
    return 0;
}

/* cf <file> <capacity> <bucketsize> <maxiter> <expansion> <count> <k1-deleted 0|1> [deletes]:
 * CF.RESERVE + CF.ADD str(i) for i < count, then CF.DEL str(i) for i < deletes (auto-compaction included) */
static int cf(char **argv) {
    CuckooFilter filter;
    if (CuckooFilter_Init(&filter, atoll(argv[3]), atoi(argv[4]), atoi(argv[5]), atoi(argv[6])) != 0) return 2;
    int count = atoi(argv[7]);
    char item[64];
    for (int i = 0; i < count; i++) {
        int n = snprintf(item, sizeof item, "%d", i);
        CuckooFilter_Insert(&filter, CUCKOO_GEN_HASH(item, n));
    }
    if (atoi(argv[8])) {
        CuckooFilter_Insert(&filter, CUCKOO_GEN_HASH("k1", 2));
        CuckooFilter_Insert(&filter, CUCKOO_GEN_HASH("k1", 2));
        CuckooFilter_Delete(&filter, CUCKOO_GEN_HASH("k1", 2));
    }
    int deletes = argv[9] ? atoi(argv[9]) : 0;
    for (int i = 0; i < deletes; i++) {
        int n = snprintf(item, sizeof item, "%d", i);
        CuckooFilter_Delete(&filter, CUCKOO_GEN_HASH(item, n));
    }
    FILE *out = fopen(argv[2], "wb");
    CFHeader header = fillCFHeader(&filter);
    put(out, 1, &header, sizeof header);
    long long pos = 1;
    size_t len;
    const char *chunk;
    while ((chunk = CF_GetEncodedChunk(&filter, &pos, &len, 16 * 1024 * 1024)) != NULL) {
        put(out, pos, chunk, len);
    }
    fclose(out);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "bf") == 0 && argc == 8) return bf(argv);
    if (argc > 1 && strcmp(argv[1], "cf") == 0 && (argc == 9 || argc == 10)) return cf(argv);
    fprintf(stderr, "usage: bf file error capacity expansion prefix count | cf file cap bs maxiter exp count k1\n");
    return 1;
}
