#!/usr/bin/env bash
# fetch-jars.sh NAME PROPERTY VERSION_CODE: copy the runtime dependencies of the artifact that
# scripts/NAME/pom.xml names, at the version that the Python code VERSION_CODE prints in the
# venv of scripts/setup.sh (given to the pom as -DPROPERTY=version), from Maven Central into
# .cache/NAME/<version>/, marked complete only when the whole copy is there. What
# scripts/spark-kafka.sh and scripts/spark-s3.sh share: jars come at set-up, never at run time.
# Needs Maven. Idempotent: a version already fetched is not fetched again.
set -euo pipefail

name="$1" property="$2" code="$3"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pom="$root/scripts/$name/pom.xml"
python="$root/.venv/bin/python"

[ -x "$python" ] || { echo "$name: run scripts/setup.sh first (no .venv)" >&2; exit 1; }
command -v mvn >/dev/null || { echo "$name: mvn is not on PATH" >&2; exit 1; }
version="$("$python" -c "$code")"
lib="$root/.cache/$name/$version"
if [ -f "$lib/.complete" ]; then exit 0; fi

tmp="$lib.tmp.$$"
rm -rf "$tmp"
if ! mvn -U -q -B -Dstyle.color=never -f "$pom" dependency:copy-dependencies -DincludeScope=runtime \
    -D"$property"="$version" -DoutputDirectory="$tmp"; then
  rm -rf "$tmp"
  echo "$name: the artifact of $pom at $version could not be fetched from Maven Central" >&2
  exit 1
fi
touch "$tmp/.complete"
rm -rf "$lib"
mv "$tmp" "$lib"
ls "$lib"
