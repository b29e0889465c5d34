# Sourced by ./bloomery, ./run-tests and .ci/run: finds a JDK >= 21 and Maven, or says what is missing.
# Exports JAVA_HOME, puts its bin first on PATH, and sets BLOOMERY_ROOT.

BLOOMERY_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export BLOOMERY_ROOT

bloomery_java_major() { # prints the feature version of the java at $1/bin/java, or nothing
  local java="$1/bin/java" line
  [ -x "$java" ] || return 0
  line="$("$java" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2; exit}')"
  printf '%s' "${line%%.*}"
}

bloomery_find_jdk() {
  local candidate major
  if [ -n "${JAVA_HOME:-}" ]; then
    major="$(bloomery_java_major "$JAVA_HOME")"
    if [ -n "$major" ] && [ "$major" -ge 21 ] && [ -x "$JAVA_HOME/bin/javac" ]; then
      return 0
    fi
    echo "bloomery: JAVA_HOME=$JAVA_HOME is not a JDK >= 21 (found: ${major:-no java}); looking in /usr/lib/jvm" >&2
  fi
  # Newest first, so Temurin 25 wins over an older default.
  for candidate in $(ls -d /usr/lib/jvm/*/ 2>/dev/null | sed 's#/$##' | sort -rV); do
    major="$(bloomery_java_major "$candidate")"
    if [ -n "$major" ] && [ "$major" -ge 21 ] && [ -x "$candidate/bin/javac" ]; then
      JAVA_HOME="$candidate"
      return 0
    fi
  done
  echo "bloomery: no JDK >= 21 found (checked JAVA_HOME and /usr/lib/jvm/*)." >&2
  echo "  Install one, for example Temurin 25 (apt package temurin-25-jdk) or openjdk-21-jdk," >&2
  echo "  or point JAVA_HOME at it." >&2
  return 1
}

bloomery_find_maven() {
  if command -v mvn >/dev/null 2>&1; then
    return 0
  fi
  echo "bloomery: Maven (mvn) is not installed; it builds Bloomery. Install it with: apt-get install maven" >&2
  return 1
}

bloomery_find_jdk || exit 1
export JAVA_HOME
export PATH="$JAVA_HOME/bin:$PATH"

# JVM flags every Bloomery JVM gets from the launchers (./bloomery, bench/server-*): on a JDK >= 23, allow
# sun.misc.Unsafe memory access. Netty (the server's transport) then reads and writes its direct buffers through
# Unsafe; without the flag, on JDK >= 24 it falls back to MemorySegment/ByteBuffer accessors, which cost the server
# about a quarter of its CPU per BF.ADD (docs/BENCHMARKS.md, server section). JDK 21 and 22 do not know the flag and
# allow the access anyway.
BLOOMERY_JVM_FLAGS=""
if [ "$(bloomery_java_major "$JAVA_HOME")" -ge 23 ]; then
  BLOOMERY_JVM_FLAGS="--sun-misc-unsafe-memory-access=allow"
fi
export BLOOMERY_JVM_FLAGS
