#!/usr/bin/env bash
# Creates .venv in the repo root and installs lagassign with its development tools.
# Idempotent: re-running only installs what changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
  .venv/bin/python -m pip install --quiet --upgrade pip
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
