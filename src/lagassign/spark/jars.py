"""Jars that a set-up script fetched from Maven Central for Spark, less what PySpark ships.

scripts/fetch-jars.sh (called by scripts/spark-kafka.sh and scripts/spark-s3.sh, which
scripts/test.sh runs) copies an artifact's runtime dependencies into
``.cache/<name>/<version>/`` and marks the folder complete. :func:`fetched_jars` lists those
jars, less the artifacts PySpark already ships in ``pyspark/jars`` (Scala, Hadoop's client,
the compression codecs, slf4j): two versions of one library on a classpath is a conflict
waiting to happen. Nothing is downloaded at run time: a missing fetch is a
:class:`JarsMissing` that names the command to run.
"""

from __future__ import annotations

import re
from pathlib import Path

#: where the set-up scripts put the jars: the repository's .cache/
CACHE = Path(__file__).resolve().parents[3] / ".cache"
#: artifact-version.jar, the version the last "-digits.", maybe with a qualifier (-7, -preview1)
_VERSIONED = re.compile(r"^(?P<artifact>.+)-\d+\.[^-]*(?:-[A-Za-z0-9.]+)?\.jar$")


class JarsMissing(RuntimeError):
    """The jars were not fetched for the installed PySpark."""


def artifact_of(jar: str) -> str:
    """A jar's artifact name without its version: kafka-clients-3.9.2.jar -> kafka-clients."""
    match = _VERSIONED.match(jar)
    return match.group("artifact") if match else jar.removesuffix(".jar")


def pyspark_jars() -> Path:
    """The folder of the jars PySpark ships."""
    import pyspark

    return Path(pyspark.__file__).parent / "jars"


def fetched_jars(folder: Path, main: str, missing: str) -> list[Path]:
    """The jars of ``folder`` (a complete fetch holding the jar ``main``) that PySpark does not
    ship, sorted by name; :class:`JarsMissing` with the message ``missing`` when the fetch is
    missing or unfinished."""
    if not (folder / ".complete").is_file() or not (folder / main).is_file():
        raise JarsMissing(missing)
    shipped = {artifact_of(j.name) for j in pyspark_jars().glob("*.jar")}
    return sorted(j for j in folder.glob("*.jar") if artifact_of(j.name) not in shipped)
