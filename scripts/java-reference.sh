#!/usr/bin/env bash
# Fetch the Java references from Maven Central: the kafka-clients jars that
# tests/java/AssignorHarness.java runs against (pinned in tests/java/pom.xml) into
# .cache/java-reference/lib, and Kafka's command-line tools (tests/java/tools/pom.xml:
# kafka-consumer-groups, the yardstick of `lagassign describe`) into .cache/kafka-tools/lib.
# Needs Java 17+ and Maven; CI runs this during set-up, and tests/javaref.py runs the same
# commands when the jars are missing.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
lib="$root/.cache/java-reference/lib"
tools="$root/.cache/kafka-tools/lib"

command -v java >/dev/null || { echo "java-reference: java (17 or newer) is not on PATH" >&2; exit 1; }
command -v mvn >/dev/null || { echo "java-reference: mvn is not on PATH" >&2; exit 1; }

mvn -B -q -f "$root/tests/java/pom.xml" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$lib"
ls "$lib"/kafka-clients-*.jar
mvn -B -q -f "$root/tests/java/tools/pom.xml" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$tools"
ls "$tools"/kafka-tools-*.jar
