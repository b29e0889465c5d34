# shellcheck shell=bash
# Sourced by bench/pinned-vs-redisbloom and bench/pinned-ab (after scripts/env.sh and scripts/serve-jvm-flags.sh):
# how both start a pinned Bloomery server, wait for a server, read a process's CPU and reserve the measured keys.
# bench/cluster-write-cpu takes its free port, wait and CPU reading.

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

wait_up() { # PORT: until the server there answers PING (30 s at most)
  for _ in $(seq 1 300); do redis-cli -p "$1" PING >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "server on $1 did not start" >&2
  exit 1
}

cpu_ticks() { awk '{print $14 + $15, $15}' "/proc/$1/stat"; } # PID: all its CPU and the kernel's part (stime), in ticks

# start_bloomery CPU JAR LOG SERVE_ARGS...: `JAR SERVE_ARGS` on CPU, started as the package starts it
# (scripts/serve-jvm-flags.sh: heap from --maxmemory, the AOT cache beside the jar), output to LOG; sets started_pid.
start_bloomery() {
  local cpu=$1 jar=$2 log=$3
  shift 3
  bloomery_serve_jvm_flags "$jar" "$@"
  # shellcheck disable=SC2086 # BLOOMERY_JVM_FLAGS: a list of flags
  MALLOC_ARENA_MAX=2 taskset -c "$cpu" "$JAVA_HOME/bin/java" $BLOOMERY_JVM_FLAGS "${BLOOMERY_SERVE_FLAGS[@]}" \
    -jar "$jar" "$@" >"$log" 2>&1 &
  started_pid=$!
}

reserve_keys() { # PORT [SUFFIX]: the keys the measured commands use (a 60 MB filter among them), named with SUFFIX
  redis-cli -p "$1" BF.RESERVE "bench${2:-}" 0.01 50000000 >/dev/null
  redis-cli -p "$1" CF.RESERVE "cf${2:-}" 10000000 >/dev/null
  redis-cli -p "$1" CMS.INITBYPROB "cms${2:-}" 0.001 0.01 >/dev/null
  redis-cli -p "$1" TOPK.RESERVE "topk${2:-}" 50 2000 7 0.925 >/dev/null
}
