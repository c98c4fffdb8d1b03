#!/usr/bin/env bash
# Sets everything up (venv, Kafka's Java assignors for the differential tests), then runs
# ruff, mypy and every test.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
bash scripts/java-reference.sh
.venv/bin/ruff check src tests bench
.venv/bin/mypy
.venv/bin/pytest "$@"
