#!/usr/bin/env bash
# Sets everything up (venv and Hadoop's S3A connector, Kafka's Java assignors for the
# differential tests, Spark's Kafka source for the monitor), then runs
# ruff, mypy and every test.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
bash scripts/java-reference.sh
bash scripts/spark-kafka.sh
.venv/bin/ruff check src tests bench
.venv/bin/mypy
.venv/bin/pytest "$@"
