#!/usr/bin/env bash
# Sets everything up, then runs the main job: the PySpark pipeline on the embedded sample fleet
# (300 generated groups and seed 002's two describe tables), every strategy on every group.
# Writes the Parquet tables, report.html and its charts to out/fleet; extra arguments go to
# `lagassign pipeline` (say, --strategies lag,balanced or --master URL).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
.venv/bin/lagassign pipeline --sample --out out/fleet "$@"
