"""Spark's classes kept between runs: a class-data-sharing archive for the JVM that a local
pipeline run starts (Java's dynamic archives, ``-XX:ArchiveClassesAtExit`` and
``-XX:SharedArchiveFile``, Java 13 and later).

Most of a local run's start is the cold JVM loading and verifying Spark's classes: about 9 s of
the JVM's CPU of a run's 10-11 (bench/pipeline.py). The first run has its JVM write the classes
it loaded into an archive as it exits, and waits for that (:func:`keep`); later runs map the
archive instead of loading those classes again (about half of that CPU, see docs/pipeline.md).

The archive is named for what it must fit (:func:`archive_for`: the Java that runs Spark,
Spark's jars, the class path and JVM options the settings add) and kept under the user's cache
folder (``$XDG_CACHE_HOME/lagassign/spark-classes/``, about 110 MB each); the JVM checks it
again and ignores one that does not fit. A JVM writes it under a name of its own, renamed when
whole, so that a run never maps half of one. ``LAGASSIGN_SPARK_CLASSES=off``: none made or
used. Pure Python: importing this module does not import PySpark.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

#: the variable that turns the archive off (``off``)
SWITCH = "LAGASSIGN_SPARK_CLASSES"
#: a JVM's class data sharing logs off: Java warns of every class it cannot archive (hundreds of
#: lines at exit) and of an archive that does not fit, and either only costs the speed-up
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
#: seconds the first run waits for its JVM to write the archive as it exits
WRITE_TIMEOUT_S = 120.0

_WRITE_FLAG = "-XX:ArchiveClassesAtExit="


def folder() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(cache) / "lagassign" / "spark-classes"


def _java() -> Path | None:
    """The Java that spark-submit runs: ``$JAVA_HOME/bin/java``, else ``java`` on the PATH."""
    home = os.environ.get("JAVA_HOME")
    found = os.path.join(home, "bin", "java") if home else shutil.which("java")
    return Path(found).resolve() if found and os.path.isfile(found) else None


def _spark_jars() -> Path:
    """The folder of the jars Spark runs: ``$SPARK_HOME/jars``, else PySpark's own."""
    home = os.environ.get("SPARK_HOME")
    if home:
        return Path(home) / "jars"
    from lagassign.spark.jars import pyspark_jars

    return pyspark_jars()


def archive_for(settings: dict[str, str], jvm_options: str) -> Path | None:
    """The archive of a JVM started with ``settings`` and ``jvm_options``; None when it is
    turned off or the Java cannot be found."""
    java = _java()
    if os.environ.get(SWITCH, "").lower() == "off" or java is None:
        return None
    jars = _spark_jars()
    fits = [
        str(java),
        str(java.stat().st_mtime_ns),
        str(jars.resolve()),
        str(jars.stat().st_mtime_ns) if jars.is_dir() else "",
        settings.get("spark.driver.extraClassPath", ""),
        settings.get("spark.jars", ""),
        jvm_options,
    ]
    key = hashlib.sha256("\n".join(fits).encode()).hexdigest()[:16]
    return folder() / f"{key}.jsa"


def jvm_options(archive: Path) -> str:
    """The JVM options that map ``archive``, or have the JVM write it when there is none yet
    (under a name of this process's own, :func:`keep` renames it)."""
    if archive.is_file():
        return f"-XX:SharedArchiveFile={archive} {QUIET}"
    return f"{_WRITE_FLAG}{_writing(archive)} {QUIET}"


def described(options: str) -> str | None:
    """What a JVM started with ``options`` did with the archive, as summary.json says it:
    ``mapped`` (an earlier run's), ``written`` (as it exits), or None (no archive)."""
    if "-XX:SharedArchiveFile=" in options:
        return "mapped"
    return "written" if _WRITE_FLAG in options else None


def _writing(archive: Path) -> Path:
    return archive.with_name(f".{archive.name}.{os.getpid()}.tmp")


#: the JVM writing the archive at exit: its process, the name it writes, the archive's name
_pending: tuple[subprocess.Popen[bytes], Path, Path] | None = None


def started(options: str, jvm: subprocess.Popen[bytes] | None) -> None:
    """A JVM was started with ``options`` (``jvm``: its process, as PySpark launched it): when
    it writes the archive, the archive is kept as this process ends (:func:`keep`)."""
    global _pending
    written = next((o for o in options.split() if o.startswith(_WRITE_FLAG)), None)
    if written is None or jvm is None or _pending is not None:
        return
    writing = Path(written.removeprefix(_WRITE_FLAG))
    archive = writing.with_name(writing.name.removeprefix(".").rsplit(".", 2)[0])
    writing.parent.mkdir(parents=True, exist_ok=True)
    _pending = (jvm, writing, archive)
    atexit.register(keep)


def keep() -> None:
    """Ends the JVM as this process's exit would (its standard input closed: PySpark's gateway
    then exits), waits while it writes the archive, and puts the archive in place."""
    global _pending
    if _pending is None:
        return
    (jvm, writing, archive), _pending = _pending, None
    with contextlib.suppress(OSError, ValueError):
        if jvm.stdin is not None:
            jvm.stdin.close()
    try:
        status = jvm.wait(WRITE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        status = None
    if status == 0 and writing.is_file():
        os.replace(writing, archive)
    else:
        writing.unlink(missing_ok=True)


def abandon() -> None:
    """An interrupted run does not wait for the archive: its JVM ends at once, the archive
    unwritten (a later run writes it)."""
    global _pending
    if _pending is None:
        return
    (jvm, writing, _), _pending = _pending, None
    if jvm.poll() is None:
        jvm.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            jvm.wait(10)
    writing.unlink(missing_ok=True)
