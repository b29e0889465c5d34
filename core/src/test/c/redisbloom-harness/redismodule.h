/* Minimal stand-in for Redis's redismodule.h: only the allocator and types RedisBloom's sb.c/bloom.c/cuckoo.c/cf.c use. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#define REDISMODULE_OK 0
#define REDISMODULE_ERR 1
typedef struct RedisModuleString RedisModuleString;
typedef struct RedisModuleCtx RedisModuleCtx;
extern void *(*RedisModule_Alloc)(size_t);
extern void *(*RedisModule_Calloc)(size_t, size_t);
extern void *(*RedisModule_TryCalloc)(size_t, size_t);
extern void *(*RedisModule_Realloc)(void *, size_t);
extern void (*RedisModule_Free)(void *);
extern const char *(*RedisModule_StringPtrLen)(const RedisModuleString *, size_t *);
