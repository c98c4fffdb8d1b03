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
# pip only when pyproject.toml changed since the venv's last install (src/ is installed
# editable): pip's own check that nothing changed took 10-15 s, and the main job runs this
# script first. Remove .venv/.installed to make pip run.
stamp=.venv/.installed
wanted="$(sha256sum pyproject.toml | cut -d' ' -f1)"
if [ ! -x .venv/bin/lagassign ] || [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
  echo "$wanted" > "$stamp"
fi
# balanced's search compiled with mypyc (scripts/compile.py; again only when its source changed)
.venv/bin/python scripts/compile.py
# Debian's headless Chromium: the monitor's live report is tested as a browser shows it
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then as_root=(); else as_root=(sudo); fi
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
# Hadoop's S3A connector for s3a:// URLs (the pipeline, its tests' local S3 server)
bash scripts/spark-s3.sh
# Spark's classes archived for a local pipeline run's JVM, once (scripts/spark_classes.py)
.venv/bin/python scripts/spark_classes.py
