"""Hadoop's S3A file system (``s3a://`` URLs) for Spark: what scripts/spark-s3.sh fetched.

PySpark ships Hadoop's client (``pyspark/jars/hadoop-client-api-<version>.jar``) but not its
S3A connector. scripts/spark-s3.sh (run by scripts/setup.sh, so by scripts/test.sh too)
copies ``org.apache.hadoop:hadoop-aws`` at exactly that Hadoop version, with the AWS SDK
bundle it needs, from Maven Central into ``.cache/spark-s3/<hadoop version>/``.
:func:`s3_jars` lists them; the pipeline puts them on a local Spark's class path when an
input or ``--out`` is an ``s3a://`` URL (:func:`lagassign.spark.pipeline.session_settings`).
On a cluster, Spark's own distribution (or ``--conf spark.jars=...``) brings them.
"""

from __future__ import annotations

import os
from pathlib import Path

from lagassign.spark.jars import CACHE, JarsMissing, fetched_jars, pyspark_jars

#: where scripts/spark-s3.sh puts the jars, unless LAGASSIGN_SPARK_S3_DIR names another
#: folder holding the <hadoop version>/ folders
S3_JARS_ROOT = CACHE / "spark-s3"
CONNECTOR_ARTIFACT = "hadoop-aws"
_HADOOP_CLIENT = "hadoop-client-api-"


def hadoop_version() -> str:
    """The Hadoop version of the jars PySpark ships."""
    found = sorted(pyspark_jars().glob(f"{_HADOOP_CLIENT}*.jar"))
    if not found:
        raise JarsMissing(f"no {_HADOOP_CLIENT}*.jar in {pyspark_jars()}")
    return found[-1].name.removeprefix(_HADOOP_CLIENT).removesuffix(".jar")


def s3_jars(root: Path | None = None, version: str | None = None) -> list[Path]:
    """The jars that give Spark the ``s3a://`` file system, sorted by name."""
    version = version or hadoop_version()
    root = root or Path(os.environ.get("LAGASSIGN_SPARK_S3_DIR") or S3_JARS_ROOT)
    folder = root / version
    return fetched_jars(
        folder,
        f"{CONNECTOR_ARTIFACT}-{version}.jar",
        f"Hadoop's S3A connector for Hadoop {version} (PySpark's) is not in {folder}: "
        "run bash scripts/spark-s3.sh",
    )
