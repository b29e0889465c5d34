# Sourced by ./bloomery and the packaged /usr/bin/bloomery: the JVM flags of `bloomery serve`.
#
# bloomery_serve_jvm_flags JAR [SERVE-ARGS...] sets the array BLOOMERY_SERVE_FLAGS:
#   - the heap from maxmemory, read as the server reads it (a leading config file, then BLOOMERY_MAXMEMORY, then
#     --maxmemory; the last one wins): -Xmx = 2 x maxmemory + 64 MiB (the filters, the commands being read, which
#     maxmemory-clients caps at a quarter of the heap, and room for the collector); without maxmemory the heap may
#     grow to 75 % of the machine's (or the container's) memory, as Redis without maxmemory takes what it needs;
#   - G1 with a periodic collection every 15 s while idle and a heap that shrinks to 30 % free space, so that memory
#     freed by deleted keys goes back to the operating system within a minute; an 8 MiB initial heap (a started,
#     idle server uses about 7 MiB), the floor it shrinks to;
#   - the C heap trimmed every 5 s (glibc's malloc_trim): the JIT compilers' arenas of the start, freed by then, and
#     other freed native memory go back to the operating system instead of staying in malloc's free lists (about
#     4.5 MB of an idle server's RSS);
#   - -XX:AOTCache=<JAR without .jar>.aot when that file exists and is not older than the jar (the packages build it
#     with a training run; the JVM then starts with the server's classes loaded and linked).
# Flags in BLOOMERY_JAVA_OPTS come after these in the launchers, so an operator's -Xmx or collector wins.

bloomery_bytes() { # bloomery_bytes SIZE: Redis's memory units (1k = 1000, 1kb = 1024, m, mb, g, gb); empty if bad
  local s="${1,,}" unit=1 n
  s="${s//[\"\']/}"
  case "$s" in
    *kb) unit=1024; s="${s%kb}" ;;
    *mb) unit=1048576; s="${s%mb}" ;;
    *gb) unit=1073741824; s="${s%gb}" ;;
    *k) unit=1000; s="${s%k}" ;;
    *m) unit=1000000; s="${s%m}" ;;
    *g) unit=1000000000; s="${s%g}" ;;
    *b) s="${s%b}" ;;
  esac
  n="${s// /}"
  [[ "$n" =~ ^[0-9]{1,15}$ ]] || return 0
  echo $((10#$n * unit))
}

bloomery_serve_maxmemory() { # the maxmemory the server will use, as given (not parsed); 0 when none
  local value="0" arg i=0 args=("$@") line
  if [ $# -gt 0 ] && [ "${1#-}" = "$1" ] && [ -r "$1" ]; then
    while IFS= read -r line || [ -n "$line" ]; do
      line="${line#"${line%%[![:space:]]*}"}"
      if [[ "${line,,}" =~ ^maxmemory[[:space:]]+(.*)$ ]]; then
        value="${BASH_REMATCH[1]}"
        value="${value%"${value##*[![:space:]]}"}"
      fi
    done <"$1"
  fi
  [ -n "${BLOOMERY_MAXMEMORY:-}" ] && value="$BLOOMERY_MAXMEMORY"
  while [ $i -lt ${#args[@]} ]; do
    arg="${args[$i]}"
    case "${arg,,}" in
      --maxmemory=*) value="${arg#*=}" ;;
      --maxmemory) value="${args[$((i + 1))]:-0}"; i=$((i + 1)) ;;
    esac
    i=$((i + 1))
  done
  echo "$value"
}

bloomery_serve_jvm_flags() { # bloomery_serve_jvm_flags JAR [SERVE-ARGS...]
  local jar="$1" aot bytes
  shift
  BLOOMERY_SERVE_FLAGS=(-XX:+UseG1GC -Xms8m -XX:G1PeriodicGCInterval=15000 -XX:MinHeapFreeRatio=10
    -XX:MaxHeapFreeRatio=30 -XX:TrimNativeHeapInterval=5000)
  bytes="$(bloomery_bytes "$(bloomery_serve_maxmemory "$@")")"
  if [ -n "$bytes" ] && [ "$bytes" -gt 0 ]; then
    BLOOMERY_SERVE_FLAGS+=("-Xmx$(((2 * bytes + 1048575) / 1048576 + 64))m")
  else
    # no maxmemory, or one the server will refuse with its own message
    BLOOMERY_SERVE_FLAGS+=(-XX:MaxRAMPercentage=75)
  fi
  aot="${jar%.jar}.aot"
  if [ -f "$aot" ] && ! [ "$aot" -ot "$jar" ]; then
    BLOOMERY_SERVE_FLAGS+=("-XX:AOTCache=$aot")
  fi
}
