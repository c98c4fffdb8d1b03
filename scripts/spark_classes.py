"""Writes Spark's class archive for a local pipeline run (lagassign.spark.class_archive) when
there is none: the run that writes it waits as its JVM writes it at exit (most of a minute),
so set-up pays that once, not a user's first run (or the main job's). Run by scripts/setup.sh;
it does nothing when a default local run would map an archive already, when
LAGASSIGN_SPARK_CLASSES=off, or when no Java is found.

The archive is named for the Java, Spark's jars (this checkout's .venv), the class path and
the JVM options, so a run with other ``--conf`` settings may still write one of its own.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from lagassign.spark import class_archive
from lagassign.spark.options import PipelineOptions
from lagassign.spark.pipeline import session_settings


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="lagassign-classes-") as folder:
        out = Path(folder) / "out"
        settings = session_settings(PipelineOptions(out=out))
        options = settings.get("spark.driver.extraJavaOptions", "")
        if class_archive.described(options) != "written":
            return  # mapped already, or no archive at all
        print("spark_classes.py: writing Spark's class archive (a small pipeline run)", flush=True)
        lagassign = Path(sys.executable).with_name("lagassign")
        # the sample fleet with one cheap strategy: Spark's reading, planning and writing load
        # the classes a run of any fleet loads
        command = [str(lagassign), "pipeline", "--sample", "--strategies", "range"]
        subprocess.run([*command, "--no-report", "--quiet", "--out", str(out)], check=True)


if __name__ == "__main__":
    main()
