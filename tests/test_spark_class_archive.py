"""The class-data-sharing archive of a local pipeline run's JVM (lagassign.spark.class_archive):
which options a run's JVM gets, and how the archive it writes at exit is kept or dropped. No
JVM here: a shell stands in for it (it "writes the archive" when its standard input closes)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from lagassign.spark import class_archive
from lagassign.spark.options import PipelineOptions
from lagassign.spark.pipeline import LOCAL_JVM_OPTIONS, session_settings


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(class_archive.SWITCH, raising=False)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    # A JVM of this test process that writes an archive (tests/spark's shared session, when
    # its archive is not there yet) is set aside, not abandoned: abandoning it kills the
    # session that later tests and its own teardown still use.
    shared, class_archive._pending = class_archive._pending, None
    yield tmp_path / "cache" / "lagassign" / "spark-classes"
    class_archive.abandon()
    class_archive._pending = shared


def java_options(tmp_path: Path, *conf: tuple[str, str]) -> str:
    return session_settings(PipelineOptions(out=tmp_path / "out", conf=conf))[
        "spark.driver.extraJavaOptions"
    ]


def test_the_first_run_writes_the_archive_and_later_runs_map_it(
    tmp_path: Path, cache: Path
) -> None:
    first = java_options(tmp_path)
    assert LOCAL_JVM_OPTIONS in first and class_archive.QUIET in first
    [written] = [o for o in first.split() if o.startswith("-XX:ArchiveClassesAtExit=")]
    writing = Path(written.split("=", 1)[1])
    assert writing.parent == cache and writing.name.startswith(".")
    archive = cache / writing.name.removeprefix(".").rsplit(".", 2)[0]
    archive.parent.mkdir(parents=True)
    archive.write_bytes(b"classes")
    assert f"-XX:SharedArchiveFile={archive}" in java_options(tmp_path).split()


def test_other_class_paths_have_archives_of_their_own(tmp_path: Path) -> None:
    plain = java_options(tmp_path)
    more = java_options(tmp_path, ("spark.driver.extraClassPath", "/x/hadoop-aws.jar"))
    assert plain.split()[-3] != more.split()[-3]


def test_none_when_turned_off_or_the_jvm_options_are_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert java_options(tmp_path, ("spark.driver.extraJavaOptions", "-Xmx1g")) == "-Xmx1g"
    monkeypatch.setenv(class_archive.SWITCH, "off")
    assert "-XX:" not in java_options(tmp_path).replace(LOCAL_JVM_OPTIONS, "")


def jvm(writes: Path) -> subprocess.Popen[bytes]:
    """A stand-in for PySpark's JVM: writes ``writes`` once its standard input closes."""
    return subprocess.Popen(
        ["sh", "-c", f"cat >/dev/null; echo classes > '{writes}'"], stdin=subprocess.PIPE
    )


def test_the_archive_is_kept_once_the_jvm_has_written_it(tmp_path: Path, cache: Path) -> None:
    archive = cache / "key.jsa"
    writing = cache / f".key.jsa.{12345}.tmp"
    cache.mkdir(parents=True)
    process = jvm(writing)
    class_archive.started(f"-Xss1m -XX:ArchiveClassesAtExit={writing} -Xlog:cds=off", process)
    class_archive.keep()
    assert process.returncode == 0
    assert archive.read_text() == "classes\n" and not writing.exists()


def test_an_interrupted_run_leaves_no_archive(tmp_path: Path, cache: Path) -> None:
    writing = cache / ".key.jsa.1.tmp"
    cache.mkdir(parents=True)
    process = jvm(writing)
    class_archive.started(f"-XX:ArchiveClassesAtExit={writing}", process)
    class_archive.abandon()
    assert process.returncode is not None
    class_archive.keep()  # nothing left to keep at exit
    assert list(cache.iterdir()) == []
