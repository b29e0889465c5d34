#!/bin/bash
# Writes the RDB test files in server/src/test/resources/rdb/ from a running Redis 8 + RedisBloom:
#   make-rdb.sh PORT OUT_DIR
# Fills the server with keys of every type and encoding Redis 8 writes (see RdbFileReaderTest for what each file
# must hold), runs SAVE, and copies dump.rdb to OUT_DIR/mixed.rdb; then, with rdbcompression off, to
# OUT_DIR/mixed-uncompressed.rdb. Uses only redis-cli (REDIS_CLI names another one).
set -euo pipefail
port=$1
out=$2
cli() { "${REDIS_CLI:-redis-cli}" -p "$port" "$@"; }
cli FLUSHALL >/dev/null
# RedisBloom types, db 0
cli BF.RESERVE bf 0.01 1000 >/dev/null
cli BF.MADD bf a b c >/dev/null
cli BF.RESERVE bf:scaled 0.01 10 EXPANSION 2 >/dev/null
cli BF.MADD bf:scaled $(seq -f 'item%g' 0 99) >/dev/null
cli CF.RESERVE cf 1000 >/dev/null
cli CF.ADD cf a >/dev/null
cli CMS.INITBYDIM cms 20 5 >/dev/null
cli CMS.INCRBY cms a 5 >/dev/null
cli TOPK.RESERVE topk 3 >/dev/null
cli TOPK.ADD topk a b a >/dev/null
cli BF.ADD bf:expiring x >/dev/null
cli PEXPIREAT bf:expiring 4102444800000 >/dev/null
cli TDIGEST.CREATE td >/dev/null
cli TDIGEST.ADD td 1 2 3 >/dev/null
# Redis types in every encoding
cli SET str hello >/dev/null
cli SET int 12345 >/dev/null
cli SET long "$(printf 'a%.0s' $(seq 1 200))" >/dev/null
cli SET str:expiring v EX 100000 >/dev/null
cli RPUSH list:small a b c >/dev/null
cli RPUSH list:big $(seq 1 1000) >/dev/null
cli SADD set:intset 1 2 3 >/dev/null
cli SADD set:listpack a b c >/dev/null
cli SADD set:big $(seq -f 'm%g' 1 300) >/dev/null
cli HSET hash:small f1 v1 f2 v2 >/dev/null
cli HSET hash:big $(for i in $(seq 1 300); do echo "f$i v$i"; done) >/dev/null
cli HSET hash:ttl:small f1 v1 f2 v2 >/dev/null
cli HEXPIRE hash:ttl:small 100000 FIELDS 1 f1 >/dev/null
cli HSET hash:ttl:big $(for i in $(seq 1 300); do echo "f$i v$i"; done) >/dev/null
cli HEXPIRE hash:ttl:big 100000 FIELDS 2 f1 f2 >/dev/null
cli ZADD zset:small 1 a 2 b >/dev/null
cli ZADD zset:big $(for i in $(seq 1 300); do echo "$i m$i"; done) >/dev/null
cli XADD stream '*' f v >/dev/null
cli XADD stream '*' f w >/dev/null
cli XGROUP CREATE stream g 0 >/dev/null
cli XREADGROUP GROUP g c1 COUNT 1 STREAMS stream '>' >/dev/null
cli FUNCTION LOAD REPLACE "#!lua name=rdbtest
redis.register_function('rdbtest', function() return 1 end)" >/dev/null
# db 1
cli -n 1 BF.ADD bf:db1 y >/dev/null
cli -n 1 SET str:db1 z >/dev/null
dir=$(cli CONFIG GET dir | tail -1)
cli SAVE >/dev/null
cp "$dir/dump.rdb" "$out/mixed.rdb"
cli CONFIG SET rdbcompression no >/dev/null
cli SAVE >/dev/null
cp "$dir/dump.rdb" "$out/mixed-uncompressed.rdb"
cli CONFIG SET rdbcompression yes >/dev/null
