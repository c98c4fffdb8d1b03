#!/usr/bin/env bash
# Fetch Spark's Kafka source (org.apache.spark:spark-sql-kafka-0-10_2.13) at exactly the
# installed PySpark's version, with the jars it needs that PySpark does not ship, from Maven
# Central into .cache/spark-kafka/<version>/ (lagassign.spark.kafka_jars lists them for
# spark.jars). `lagassign monitor` never downloads anything at run time. Needs Maven and the
# venv of scripts/setup.sh. Idempotent: a version already fetched is not fetched again.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pom="$root/scripts/spark-kafka/pom.xml"
python="$root/.venv/bin/python"

[ -x "$python" ] || { echo "spark-kafka: run scripts/setup.sh first (no .venv)" >&2; exit 1; }
command -v mvn >/dev/null || { echo "spark-kafka: mvn is not on PATH" >&2; exit 1; }

version="$("$python" -c 'import pyspark; print(pyspark.__version__)')"
lib="$root/.cache/spark-kafka/$version"
if [ -f "$lib/.complete" ]; then exit 0; fi

tmp="$lib.tmp.$$"
rm -rf "$tmp"
if ! mvn -U -q -B -Dstyle.color=never -f "$pom" dependency:copy-dependencies -DincludeScope=runtime \
    -Dspark.version="$version" -DoutputDirectory="$tmp"; then
  rm -rf "$tmp"
  echo "spark-kafka: spark-sql-kafka-0-10_2.13:$version (the installed PySpark's version) could not be fetched from Maven Central" >&2
  exit 1
fi
touch "$tmp/.complete"
rm -rf "$lib"
mv "$tmp" "$lib"
ls "$lib"/spark-sql-kafka-0-10_2.13-"$version".jar
