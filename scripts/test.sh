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
# set-up compiled balanced (scripts/compile.py): tests/test_compiled.py fails if it is not in use
LAGASSIGN_EXPECT_COMPILED=1 .venv/bin/pytest "$@"
