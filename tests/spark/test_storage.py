"""The pipeline at URLs: inputs read from and ``--out`` written to ``s3a://``, against a real S3
API server (moto's, started here on a free port of 127.0.0.1) through Hadoop's S3A connector
(scripts/spark-s3.sh); nothing leaves 127.0.0.1.

A run from S3 to S3 writes the same tables, summary and report files as the same run from and
to local paths; a bad row of a file at S3 is named by its s3a:// URL, row and column, exit 2; a
run that fails leaves nothing at its ``--out`` URL, nor its staging folder beside it. At a
``file://`` URL (Hadoop's local file system, no S3 needed): the commit replaces a previous
output, a failure before it leaves that output as it was, and folders list as local ones do.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from lagassign.formats.errors import InputError
from lagassign.spark import pipeline
from lagassign.spark.options import PipelineOptions
from lagassign.spark.outputs import staging, write_summary
from lagassign.spark.pipeline import PipelineError, run
from lagassign.spark.schema import TABLES
from lagassign.spark.sources.files import list_files
from lagassign.spark.sources.sample import sample_fleet
from lagassign.spark.storage import HadoopFiles, StorageError, hidden, is_url, parent_and_name
from tests.spark.cli import error_lines, run_pipeline

BUCKET = "fleet"
KEY = SECRET = "testing"
#: cooperative-sticky: its first rounds leave partitions unassigned, so `settled` has rows
STRATEGIES = ("lag", "cooperative-sticky")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """moto's S3 server on 127.0.0.1, with an empty bucket :data:`BUCKET`."""
    port = _free_port()
    log = tmp_path_factory.mktemp("moto") / "server.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        client = _client(endpoint)
        deadline = time.monotonic() + 60
        while True:  # until it answers (a readiness wait, not a timed assertion)
            try:
                client.create_bucket(Bucket=BUCKET)
                break
            except Exception:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"moto's server did not start: {log.read_text()}") from None
                time.sleep(0.2)
        yield endpoint
    finally:
        server.terminate()
        server.wait(timeout=30)


def _client(endpoint: str) -> Any:
    import boto3

    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=KEY,
        aws_secret_access_key=SECRET,
        region_name="us-east-1",
    )


def s3a_settings(endpoint: str) -> dict[str, str]:
    """Hadoop's S3A settings for the local server (path-style, plain HTTP, fixed keys: no
    look-up of credentials or region anywhere else)."""
    return {
        "fs.s3a.endpoint": endpoint,
        "fs.s3a.endpoint.region": "us-east-1",
        "fs.s3a.path.style.access": "true",
        "fs.s3a.connection.ssl.enabled": "false",
        "fs.s3a.access.key": KEY,
        "fs.s3a.secret.key": SECRET,
        "fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
    }


@pytest.fixture(scope="module")
def s3(spark: SparkSession, s3_endpoint: str) -> Iterator[Any]:
    """A boto3 client of the server; the shared session reads and writes s3a:// there."""
    settings = s3a_settings(s3_endpoint)
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield _client(s3_endpoint)
    finally:
        for key in settings:
            spark.conf.unset(key)


def keys(s3: Any, prefix: str) -> list[str]:
    listed = s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix)
    return sorted(o["Key"] for o in listed.get("Contents", []))


def upload(s3: Any, folder: Path, prefix: str) -> None:
    for file in sorted(folder.rglob("*")):
        if file.is_file():
            s3.upload_file(str(file), BUCKET, f"{prefix}/{file.relative_to(folder).as_posix()}")


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of snapshots in two formats and a subfolder, with what a walk skips beside
    them (Spark's _SUCCESS, a hidden folder, a file whose name says no format)."""
    folder = tmp_path_factory.mktemp("snapshots")
    fleet = pq.read_table(sample_fleet() / "generated.parquet")
    some = fleet.filter(pc.match_substring_regex(fleet["group"], r"-00[01]$"))
    pq.write_table(some, folder / "generated.parquet")
    (folder / "describe").mkdir()
    shutil.copy(sample_fleet() / "seed002.jsonl", folder / "describe" / "seed002.jsonl")
    (folder / "_SUCCESS").write_bytes(b"")
    (folder / ".hidden").mkdir()
    (folder / ".hidden" / "stale.jsonl").write_text("not json\n")
    (folder / "notes.txt").write_text("not a snapshot\n")
    return folder


def _options(out: Path | str, inputs: str) -> PipelineOptions:
    # two planning tasks: fewer files to write (and, at S3, to copy in Spark's commits)
    return PipelineOptions(
        out=out, inputs=(inputs,), strategies=STRATEGIES, partitions=2, quiet=True
    )


def _rows(spark: SparkSession, folder: str, name: str) -> list[Any]:
    frame = spark.read.parquet(f"{folder}/{name}")
    return frame.orderBy(*frame.columns).collect()


def test_a_run_from_s3_to_s3_writes_what_a_local_run_writes(
    spark: SparkSession, s3: Any, snapshots: Path, tmp_path: Path
) -> None:
    upload(s3, snapshots, "snap")
    local = run(_options(tmp_path / "local", str(snapshots)), spark)
    url = f"s3a://{BUCKET}/out/fleet"
    remote = run(_options(url, f"s3a://{BUCKET}/snap"), spark)

    assert remote.out == url and remote.report == f"{url}/report.html"
    assert (remote.groups, remote.partitions, remote.tables) == (
        local.groups,
        local.partitions,
        local.tables,
    )
    assert remote.groups == 12  # generated groups 000 and 001 of 5 families, seed 002's 2
    for name in TABLES:
        assert _rows(spark, url, name) == _rows(spark, str(tmp_path / "local"), name), name
    # report.html, its PNGs and summary.json at the URL too; nothing beside --out
    written = [k.removeprefix("out/fleet/") for k in keys(s3, "out/fleet/")]
    assert "report.html" in written
    assert sorted(p.name for p in (tmp_path / "local").glob("*.png")) == sorted(
        k for k in written if k.endswith(".png")
    )
    assert [k for k in keys(s3, "out/") if not k.startswith("out/fleet/")] in ([], ["out/"])
    summary = json.loads(s3.get_object(Bucket=BUCKET, Key="out/fleet/summary.json")["Body"].read())
    mine = json.loads((tmp_path / "local" / "summary.json").read_text())
    assert summary["input"] == {"snapshots": [f"s3a://{BUCKET}/snap"], "groups": None}
    for key in ("tool", "groups", "partitions", "strategies", "tables"):
        assert summary[key] == mine[key], key


def test_a_bad_row_at_s3_is_named_by_url_row_and_column(
    s3: Any, s3_endpoint: str, tmp_path: Path
) -> None:
    """Through the command line, as a user runs it: a local Spark finds the S3A connector by
    itself (pipeline._s3_class_path); exit 2, one line, nothing at --out."""
    folder = tmp_path / "bad"
    folder.mkdir()
    header = "group,topic,partition,begin,end,committed,member_id,client_id,host\n"
    (folder / "b.csv").write_text(header + "g,t,0,0,10,5,m,c,h\ng,t,1,0,x10,5,m,c,h\n")
    upload(s3, folder, "bad")
    conf = [f"--conf=spark.hadoop.{k}={v}" for k, v in s3a_settings(s3_endpoint).items()]
    done = run_pipeline(
        *("--input", f"s3a://{BUCKET}/bad", "--out", f"s3a://{BUCKET}/failed/fleet", *conf),
        env={**os.environ, "AWS_EC2_METADATA_DISABLED": "true"},
    )
    assert done.returncode == 2, done.stderr
    assert error_lines(done.stderr) == [
        f"lagassign: error: s3a://{BUCKET}/bad/b.csv:3: end: expected an integer, got 'x10'"
    ]
    assert "Traceback" not in done.stderr
    # nothing at --out nor beside it (S3A may keep the parent's own folder marker)
    assert [k for k in keys(s3, "failed/") if k != "failed/"] == []


def test_a_run_that_fails_leaves_nothing_at_the_out_url(
    spark: SparkSession, s3: Any, snapshots: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It fails after the tables are written to the staging folder at the URL (and the report
    locally), when the summary is written."""
    upload(s3, snapshots, "again")
    seen = []

    def broken(folder: Path, summary: dict[str, Any]) -> None:
        seen.append(keys(s3, "dropped/"))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pipeline, "write_summary", broken)
    with pytest.raises(PipelineError, match="No space left on device"):
        run(_options(f"s3a://{BUCKET}/dropped/fleet", f"s3a://{BUCKET}/again"), spark)
    [staged] = seen
    assert any("/groups/" in k for k in staged)  # the tables were written, in staging
    assert all(k.startswith("dropped/.fleet.tmp-") for k in staged if k != "dropped/")
    assert [k for k in keys(s3, "dropped/") if k != "dropped/"] == []


def test_a_missing_input_url_is_bad_input(spark: SparkSession, s3: Any, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=f"^s3a://{BUCKET}/nowhere: no such file or folder$"):
        run(_options(tmp_path / "out", f"s3a://{BUCKET}/nowhere"), spark)
    assert not (tmp_path / "out").exists()


def test_out_at_a_url_of_something_else_is_refused(spark: SparkSession, s3: Any) -> None:
    s3.put_object(Bucket=BUCKET, Key="mine/notes.txt", Body=b"keep")
    with pytest.raises(InputError, match=r"^--out: .* is not a lagassign pipeline output"):
        run(_options(f"s3a://{BUCKET}/mine", str(sample_fleet())), spark)
    assert keys(s3, "mine/") == ["mine/notes.txt"]


def test_urls_and_their_names() -> None:
    assert is_url("s3a://b/k") and is_url("file:///tmp/x") and is_url("file:/tmp/x")
    assert is_url("hdfs://nn:8020/x") and is_url("abfss://c@a.dfs.core.windows.net/x")
    assert not is_url("out/fleet") and not is_url("/tmp/x") and not is_url(Path("s3a://b/k"))
    assert parent_and_name("s3a://b/out/fleet/") == ("s3a://b/out", "fleet")
    assert parent_and_name("s3a://b/fleet") == ("s3a://b", "fleet")
    assert parent_and_name("hdfs://nn:8020/fleet") == ("hdfs://nn:8020", "fleet")
    for root in ("s3a://b", "s3a://b/", "file:///"):
        with pytest.raises(InputError, match=r"^--out: .*name a folder under the bucket"):
            parent_and_name(root)
    assert [n for n in ("_SUCCESS", ".x", "a.crc", "_temporary", "a.csv") if not hidden(n)] == [
        "a.csv"
    ]
    assert str(StorageError("s3a://b/k", "cannot read: X")) == "s3a://b/k: cannot read: X"


def _previous_output(folder: Path) -> None:
    (folder / "groups").mkdir(parents=True)
    (folder / "groups" / "part-0.parquet").write_bytes(b"old")
    (folder / "summary.json").write_text(json.dumps({"tool": "lagassign pipeline", "run": 1}))


def test_the_commit_at_a_file_url_replaces_a_previous_output(
    spark: SparkSession, tmp_path: Path
) -> None:
    """The commit at a URL without a pipeline run: file:// through Hadoop's local file system
    (Spark's writers are stood in for by a put into the staging folder)."""
    out = tmp_path / "out"
    _previous_output(out)
    files = HadoopFiles(spark)
    with staging(f"file://{out}", spark) as output:
        files.put(_write(tmp_path / "part", b"new"), output.table("groups") + "/part-1.parquet")
        _write(output.local / "report.html", b"<html>")
        write_summary(output.local, {"run": 2})
    # (Hadoop's local file system writes a .crc beside each file)
    written = [p for p in out.rglob("*") if p.is_file() and not hidden(p.name)]
    assert sorted(p.relative_to(out).as_posix() for p in written) == [
        "groups/part-1.parquet",
        "report.html",
        "summary.json",
    ]
    assert json.loads((out / "summary.json").read_text())["run"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "part"]  # no staging left


def test_a_failed_block_at_a_file_url_leaves_the_previous_output(
    spark: SparkSession, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    _previous_output(out)
    with pytest.raises(RuntimeError, match="planning failed"), staging(f"file://{out}", spark) as o:
        HadoopFiles(spark).put(_write(tmp_path / "part", b"new"), o.table("groups") + "/p.parquet")
        raise RuntimeError("planning failed")
    assert (out / "groups" / "part-0.parquet").read_bytes() == b"old"
    assert json.loads((out / "summary.json").read_text())["run"] == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "part"]  # no staging left


def test_folders_at_a_url_are_listed_as_local_ones(spark: SparkSession, tmp_path: Path) -> None:
    for name in ("a.jsonl", "sub/b.csv", "_SUCCESS", ".hidden/c.jsonl", "_tmp/d.csv", "e.crc"):
        _write(tmp_path / "in" / name, b"")
    files = HadoopFiles(spark)
    url = f"file://{tmp_path}/in"
    assert files.kind(url) == "folder" and files.kind(f"{url}/a.jsonl") == "file"
    assert files.kind(f"{url}/nothing") is None
    assert files.files(url) == [f"file:{tmp_path}/in/a.jsonl", f"file:{tmp_path}/in/sub/b.csv"]
    assert list_files([url], snapshots=True, files=files) == files.files(url)
    assert list_files([str(tmp_path / "in")], snapshots=True) == [
        str(tmp_path / "in" / "a.jsonl"),
        str(tmp_path / "in" / "sub" / "b.csv"),
    ]


def _write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path
