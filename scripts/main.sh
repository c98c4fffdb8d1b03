#!/usr/bin/env bash
# Sets everything up, then runs the main job: every strategy side by side on the embedded
# sample (seed 002's kafka-consumer-groups --describe tables), with a chart in out/plan.png.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
mkdir -p out
.venv/bin/lagassign plan --sample --plot out/plan.png "$@"
