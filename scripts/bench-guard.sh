#!/usr/bin/env bash
# Guard benchmark (docs/BENCHMARKS.md, section "Guard over PostgreSQL"): builds bench/target/benchmarks.jar, starts a
# throwaway PostgreSQL 15 cluster (initdb as user postgres in a temp dir, 127.0.0.1 on a free port,
# production defaults: fsync and synchronous_commit on), runs GuardDedupBench against it, removes it.
#   scripts/bench-guard.sh --n 10000000 --side-by-side 20000 --build-rows 10000000
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh # exits 1 saying what is missing when there is no JDK >= 21
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
[ -x "$PG_BIN/initdb" ] || { echo "PostgreSQL 15 not found in $PG_BIN: run ./run-tests or apt-get install postgresql-15" >&2; exit 1; }
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  mvn -o -q -pl bench -am package -DskipTests
fi
dir=$(mktemp -d /tmp/bloomery-bench-pg.XXXXXX)
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[ "$(id -u)" = 0 ] && chown postgres:postgres "$dir"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cleanup() { as_pg "$PG_BIN/pg_ctl" -D "$dir/data" -m fast stop >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT
as_pg "$PG_BIN/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C >/dev/null
as_pg "$PG_BIN/pg_ctl" -D "$dir/data" -w -l "$dir/server.log" \
  -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c shared_buffers=512MB" start >/dev/null
"${JAVA_HOME:+$JAVA_HOME/bin/}java" -Xmx2g -cp "${BENCH_JAR:-bench/target/benchmarks.jar}" \
  io.bloomery.bench.guard.GuardDedupBench --jdbc "jdbc:postgresql://127.0.0.1:$port/postgres?user=postgres" "$@"
