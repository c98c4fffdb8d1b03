"""``lagassign pipeline`` as a user runs it: a process of its own, with its own Spark."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping


def run_pipeline(
    *args: str, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``lagassign pipeline ARGS --quiet`` on ``local[2]`` without the web UI; its output."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "lagassign.cli",
            "pipeline",
            *args,
            "--master",
            "local[2]",
            "--conf",
            "spark.ui.enabled=false",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
    )


def error_lines(stderr: str) -> list[str]:
    """lagassign's own lines on stderr."""
    return [line for line in stderr.splitlines() if line.startswith("lagassign:")]
