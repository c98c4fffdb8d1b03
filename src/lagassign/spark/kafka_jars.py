"""The jars of Spark's Kafka source for ``spark.jars``: what scripts/spark-kafka.sh fetched.

scripts/spark-kafka.sh (run by scripts/test.sh, as scripts/java-reference.sh is) copies
``org.apache.spark:spark-sql-kafka-0-10_2.13`` at exactly the installed PySpark's version, with
its runtime dependencies, from Maven Central into ``.cache/spark-kafka/<version>/``.
:func:`kafka_jars` lists those jars, less the artifacts PySpark already ships
(:func:`lagassign.spark.jars.fetched_jars`). Nothing is downloaded at run time: a missing fetch
is a :class:`KafkaJarsMissing` that names the command to run.
"""

from __future__ import annotations

import os
from pathlib import Path

from lagassign.spark.jars import CACHE, JarsMissing, artifact_of, fetched_jars

__all__ = ["KAFKA_JARS_ROOT", "KafkaJarsMissing", "artifact_of", "kafka_jars"]

#: where scripts/spark-kafka.sh puts the jars (the repository's .cache/), unless
#: LAGASSIGN_SPARK_KAFKA_DIR names another folder holding the <version>/ folders
KAFKA_JARS_ROOT = CACHE / "spark-kafka"
SOURCE_ARTIFACT = "spark-sql-kafka-0-10_2.13"


class KafkaJarsMissing(JarsMissing):
    """Spark's Kafka source was not fetched for the installed PySpark."""


def kafka_jars(root: Path | None = None, version: str | None = None) -> list[Path]:
    """The jars to pass as ``spark.jars`` for Spark's Kafka source, sorted by name."""
    import pyspark

    version = version or pyspark.__version__
    root = root or Path(os.environ.get("LAGASSIGN_SPARK_KAFKA_DIR") or KAFKA_JARS_ROOT)
    folder = root / version
    try:
        return fetched_jars(
            folder,
            f"{SOURCE_ARTIFACT}-{version}.jar",
            f"Spark's Kafka source for PySpark {version} is not in {folder}: "
            "run bash scripts/spark-kafka.sh",
        )
    except JarsMissing as e:
        raise KafkaJarsMissing(str(e)) from None
