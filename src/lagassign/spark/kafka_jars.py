"""The jars of Spark's Kafka source for ``spark.jars``: what scripts/spark-kafka.sh fetched.

scripts/spark-kafka.sh (run by scripts/test.sh, as scripts/java-reference.sh is)
copies ``org.apache.spark:spark-sql-kafka-0-10_2.13`` at exactly the installed PySpark's
version, with its runtime dependencies, from Maven Central into
``.cache/spark-kafka/<version>/``. :func:`kafka_jars` lists those jars, less the artifacts
PySpark already ships in ``pyspark/jars`` (Scala, Hadoop's client, the compression codecs,
slf4j): two versions of one library on a classpath is a conflict waiting to happen. Nothing
is downloaded at run time: a missing fetch is a :class:`KafkaJarsMissing` that names the
command to run.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

#: where scripts/spark-kafka.sh puts the jars (the repository's .cache/), unless
#: LAGASSIGN_SPARK_KAFKA_DIR names another folder holding the <version>/ folders
DEFAULT_ROOT = Path(__file__).resolve().parents[3] / ".cache" / "spark-kafka"
SOURCE_ARTIFACT = "spark-sql-kafka-0-10_2.13"
#: artifact-version.jar, the version the last "-digits.", maybe with a qualifier (-7, -preview1)
_VERSIONED = re.compile(r"^(?P<artifact>.+)-\d+\.[^-]*(?:-[A-Za-z0-9.]+)?\.jar$")


class KafkaJarsMissing(RuntimeError):
    """Spark's Kafka source was not fetched for the installed PySpark."""


def artifact_of(jar: str) -> str:
    """A jar's artifact name without its version: kafka-clients-3.9.2.jar -> kafka-clients."""
    match = _VERSIONED.match(jar)
    return match.group("artifact") if match else jar.removesuffix(".jar")


def kafka_jars(root: Path | None = None, version: str | None = None) -> list[Path]:
    """The jars to pass as ``spark.jars`` for Spark's Kafka source, sorted by name."""
    import pyspark

    version = version or pyspark.__version__
    root = root or Path(os.environ.get("LAGASSIGN_SPARK_KAFKA_DIR") or DEFAULT_ROOT)
    folder = root / version
    source = folder / f"{SOURCE_ARTIFACT}-{version}.jar"
    if not (folder / ".complete").is_file() or not source.is_file():
        raise KafkaJarsMissing(
            f"Spark's Kafka source for PySpark {version} is not in {folder}: "
            "run bash scripts/spark-kafka.sh"
        )
    shipped = {artifact_of(j.name) for j in (Path(pyspark.__file__).parent / "jars").glob("*.jar")}
    return sorted(j for j in folder.glob("*.jar") if artifact_of(j.name) not in shipped)
