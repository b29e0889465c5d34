#!/usr/bin/env bash
# ./bloomery spark ARGS... — runs `bloomery spark` (io.bloomery.spark.cli.SparkCommand) with Spark on the
# classpath. Spark is a provided dependency of the spark module, so bloomery.jar never carries it; the
# module's build writes the classpath it needs (Maven's dependency:build-classpath, Spark included) to
# spark/target/launcher-classpath-{runtime,spark}.txt. Rebuilds when that or the module jar is older than any source or pom.
# JVM flags: BLOOMERY_SPARK_JAVA_OPTS (default -Xmx4g) plus the module options Spark's own launcher passes.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

jar="$BLOOMERY_ROOT/spark/target/bloomery-spark_2.13-0.1.0-SNAPSHOT.jar"
classpath_file="$BLOOMERY_ROOT/spark/target/launcher-classpath-spark.txt"
runtime_file="$BLOOMERY_ROOT/spark/target/launcher-classpath-runtime.txt"

needs_build() {
  [ -f "$jar" ] && [ -f "$classpath_file" ] && [ -f "$runtime_file" ] || return 0
  [ -n "$(cd "$BLOOMERY_ROOT" && find . -path ./.git -prune -o \( -name pom.xml -o -path './core/src/main/*' -o -path './spark/src/main/*' \) -type f -newer "$jar" -print -quit 2>/dev/null)" ]
}

if needs_build; then
  bloomery_find_maven || exit 1
  echo "building bloomery spark…" >&2
  log="$(mktemp "${TMPDIR:-/tmp}/bloomery-spark-build.XXXXXX.log")"
  export MAVEN_OPTS="${MAVEN_OPTS:---sun-misc-unsafe-memory-access=allow}"
  if ! (cd "$BLOOMERY_ROOT" && mvn -B -q -Dstyle.color=never -DskipTests -pl spark -am package) </dev/null >"$log" 2>&1; then
    echo "bloomery spark: the build failed; the last lines of $log:" >&2
    tail -n 40 "$log" >&2
    exit 1
  fi
  rm -f "$log"
fi

# Spark 4.2's launcher list (org.apache.spark.launcher.JavaModuleOptions); spark-submit adds it, we must.
spark_module_options=(
  -XX:+IgnoreUnrecognizedVMOptions --add-modules=jdk.incubator.vector
  --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.lang.invoke=ALL-UNNAMED
  --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED
  --add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED
  --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED --add-opens=java.base/jdk.internal.ref=ALL-UNNAMED
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/sun.nio.cs=ALL-UNNAMED
  --add-opens=java.base/sun.security.action=ALL-UNNAMED --add-opens=java.base/sun.util.calendar=ALL-UNNAMED
  --add-opens=java.security.jgss/sun.security.krb5=ALL-UNNAMED
  -Dio.netty.tryReflectionSetAccessible=true -Dio.netty.allocator.type=pooled
  -Dio.netty.handler.ssl.defaultEndpointVerificationAlgorithm=NONE
  --sun-misc-unsafe-memory-access=allow --enable-native-access=ALL-UNNAMED
)

export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"
# Spark's progress bar redraws standard error: only when that is a terminal.
progress=false
if [ -t 2 ]; then progress=true; fi
# shellcheck disable=SC2086 # BLOOMERY_SPARK_JAVA_OPTS is a list of flags
exec java ${BLOOMERY_SPARK_JAVA_OPTS:--Xmx4g} "${spark_module_options[@]}" \
  -Dlog4j2.configurationFile="$BLOOMERY_ROOT/scripts/bloomery-spark-log4j2.properties" -Dbloomery.spark.progress="$progress" \
  -cp "$jar:$(cat "$runtime_file"):$(cat "$classpath_file")" io.bloomery.spark.cli.SparkCommand "$@"
