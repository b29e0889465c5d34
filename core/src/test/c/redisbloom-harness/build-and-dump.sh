#!/usr/bin/env bash
# Rebuilds RedisBloom's own data-structure code (no Redis server needed) with a stub allocator and writes the
# SCANDUMP replies that golden/redisbloom/from-c/ holds. Usage: build-and-dump.sh <RedisBloom checkout> <out dir>
# The checkout used: RedisBloom/RedisBloom master b28c29451ad4 (fetched by the session; not vendored here).
set -euo pipefail
src=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
for f in src/sb.c src/sb.h src/cf.c src/cf.h src/cuckoo.c src/cuckoo.h src/config.h deps/bloom/bloom.c \
         deps/bloom/bloom.h deps/murmur2/MurmurHash2.c deps/murmur2/murmurhash2.h; do
  mkdir -p "$work/$(dirname $f)"
  cp "$src/$f" "$work/$f"
done
cp "$here/harness.c" "$here/redismodule.h" "$work/"
gcc -O1 -std=gnu11 -I"$work" -I"$work/src" -I"$work/deps" -I"$work/deps/murmur2" -I"$work/deps/bloom" \
  -o "$work/harness" "$work/harness.c" "$work/src/sb.c" "$work/deps/bloom/bloom.c" "$work/deps/murmur2/MurmurHash2.c" \
  "$work/src/cf.c" -lm
h=$work/harness
mkdir -p "$out"
$h bf "$out/bf-reserve-0.1-10-item1.scandump" 0.1 10 2 item1 0
$h bf "$out/bf-reserve-0.01-10-str0-99.scandump" 0.01 10 2 "" 100
$h bf "$out/bf-reserve-0.01-4-expansion4-str0-99.scandump" 0.01 4 4 "" 100
$h bf "$out/bf-reserve-0.01-5-foo0-49.scandump" 0.01 5 2 foo 50
$h bf "$out/bf-reserve-0.01-3-expansion0-abc.scandump" 0.01 3 0 abc 3
$h bf "$out/bf-reserve-0.001-100-str0-3999.scandump" 0.001 100 2 "" 4000
$h bf "$out/bf-reserve-0.01-4-expansion1-str0-99.scandump" 0.01 4 1 "" 100
$h cf "$out/cf-reserve-64-bucketsize2-str0-999.scandump" 64 2 20 1 1000 0
$h cf "$out/cf-reserve-64-expansion2-str0-999.scandump" 64 2 20 2 1000 0
$h cf "$out/cf-reserve-1000-k1-deleted.scandump" 1000 2 20 1 0 1
$h cf "$out/cf-reserve-64-bucketsize1-str0-999.scandump" 64 1 20 1 1000 0
$h cf "$out/cf-reserve-256-bucketsize4-maxiter500-str0-999.scandump" 256 4 500 1 1000 0
$h cf "$out/cf-reserve-64-expansion2-str0-999-del0-699.scandump" 64 2 20 2 1000 0 700
$h cf "$out/cf-reserve-8-maxiter50-str0-99-del0-49.scandump" 8 2 50 1 100 0 50
rm -rf "$work"
