"""The pipeline when something goes wrong: bad input found on the executors (one line naming
the file, the row and the column, exit 2, never "Spark failed"), an ``--out`` it cannot write,
SIGINT and SIGTERM (no traceback, staging folder removed, exit 130 and 143), and what it says
on stderr meanwhile (no Spark start-up lines, progress lines that never go backwards).
"""

from __future__ import annotations

import datetime
import decimal
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from lagassign import cli
from lagassign.formats.errors import InputError
from lagassign.formats.snapshot import read_snapshot
from lagassign.spark import pipeline
from lagassign.spark.groups import plan_rows
from lagassign.spark.options import PipelineOptions
from lagassign.spark.outputs import staging
from lagassign.spark.pipeline import Progress, Terminated, run
from lagassign.spark.sources import files as file_sources

ROW = {"group": "g", "topic": "t", "partition": 0, "begin": 0, "end": 10}
PARQUET = {"group": ["g"], "topic": ["t"], "partition": [0], "begin": [0], "end": [10]}


def _jsonl(path: Path, *rows: dict[str, Any] | str) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def _parquet(path: Path, **columns: pa.Array) -> Path:
    pq.write_table(pa.table({**PARQUET, **columns}), path)
    return path


def _bad_files(folder: Path) -> dict[str, tuple[Path, str]]:
    """Kinds of bad input the issue found failing as "Spark failed": the file and where its
    one line must say the problem is (after ``<file>``: the row, and the column when the
    reader knows it)."""
    big = "1" + "0" * 5000
    deep = "[" * 100_000 + "]" * 100_000
    return {
        "5,000-digit integer": (
            _jsonl(
                folder / "big.jsonl",
                ROW,
                f'{{"group":"g","topic":"t","partition":1,"begin":0,"end":{big}}}',
            ),
            ":2: end: ",
        ),
        "5,000-digit integer (CSV)": (
            _jsonl(folder / "big.csv", f"group,topic,partition,begin,end\ng,t,0,0,{big}"),
            ":2: end: ",
        ),
        "deep nesting": (
            _jsonl(
                folder / "deep.jsonl",
                f'{{"group":"g","topic":"t","partition":0,"subscribed":{deep}}}',
            ),
            ":1: ",
        ),
        "timestamp column": (
            _parquet(
                folder / "ts.parquet",
                committed=pa.array([datetime.datetime(2026, 1, 1)], pa.timestamp("ms")),
            ),
            ": row 1: committed: ",
        ),
        "binary column": (
            _parquet(folder / "bin.parquet", member_id=pa.array([b"m"], pa.binary())),
            ": row 1: member_id: ",
        ),
        "decimal column": (
            _parquet(
                folder / "dec.parquet", end=pa.array([decimal.Decimal(10)], pa.decimal128(10, 0))
            ),
            ": row 1: end: ",
        ),
        "end offset 2^64 - 1 (unsigned Parquet)": (
            _parquet(folder / "u64.parquet", end=pa.array([2**64 - 1], pa.uint64())),
            ": row 1: end: ",
        ),
        "end offset 2^63": (_jsonl(folder / "over.jsonl", {**ROW, "end": 2**63}), ":1: end: "),
        "surrogate group id": (
            _jsonl(
                folder / "sur.jsonl",
                '{"group":"g\\udc80","topic":"t","partition":0,"begin":0,"end":1}',
            ),
            ":1: group: ",
        ),
        "surrogate in a list": (
            _jsonl(folder / "sur-list.jsonl", {**ROW, "member_id": "m", "subscribed": ["t\udc80"]}),
            ":1: subscribed: ",
        ),
        "end offsets of 2^63 - 1: the group's lag passes 64 bits": (
            _jsonl(
                folder / "max.jsonl",
                {**ROW, "end": 2**63 - 1, "committed": 0, "member_id": "m"},
                {**ROW, "partition": 1, "end": 2**63 - 1, "committed": 0, "member_id": "m"},
            ),
            ":2: end: the lag of group 'g' adds up to more than 2^63 − 1 here",
        ),
    }


def _first_error(path: Path) -> str:
    """The error of reading and planning ``path`` without Spark, as an executor does."""
    try:
        rows = [r for batch in read_snapshot(str(path)) for r in batch.to_pylist()]
    except InputError as e:
        return str(e)
    results = plan_rows(rows, ["lag"]).table().to_pylist()
    [error] = [f"{r['source']}: {r['error']}" for r in results if r["kind"] == "error"]
    return error


def test_every_bad_value_names_the_file_row_and_column(tmp_path: Path) -> None:
    for case, (path, message) in _bad_files(tmp_path).items():
        error = _first_error(path)
        assert error.startswith(f"{path}{message}"), (case, error)
        assert "\n" not in error and len(error) < 300, (case, error)


#: the cases the pipeline runs on Spark (each run costs seconds: one of each way to fail)
ON_SPARK = (
    "5,000-digit integer",
    "deep nesting",
    "timestamp column",
    "end offsets of 2^63 - 1: the group's lag passes 64 bits",
    "surrogate group id",
)


def test_bad_input_is_found_on_the_executors_and_named(spark: SparkSession, tmp_path: Path) -> None:
    """Each case stops the run as bad input (not "Spark failed"), nothing written."""
    (tmp_path / "in").mkdir()
    files = _bad_files(tmp_path / "in")
    for case in ON_SPARK:
        path, message = files[case]
        out = tmp_path / "out"
        with pytest.raises(InputError) as e:
            run(PipelineOptions(out=out, inputs=(str(path),), quiet=True, report=False), spark)
        assert str(e.value).startswith(f"{path}{message}"), (case, str(e.value))
        assert sorted(p.name for p in tmp_path.iterdir()) == ["in"], case


def test_a_good_group_beside_offsets_near_the_limit_plans(
    spark: SparkSession, tmp_path: Path
) -> None:
    """An end offset of 2^63 - 1 is a valid offset: alone in its group it plans, and the
    fleet's total lag (two such groups) is summed without overflowing."""
    path = _jsonl(
        tmp_path / "near.jsonl",
        {**ROW, "end": 2**63 - 1, "committed": 0, "member_id": "m"},
        {**ROW, "group": "h", "end": 2**63 - 1, "committed": 0, "member_id": "m"},
    )
    result = run(
        PipelineOptions(out=tmp_path / "out", inputs=(str(path),), quiet=True, report=False), spark
    )
    assert (result.groups, result.total_lag) == (2, 2 * (2**63 - 1))


# ------------------------------------------------------------------------------------------------
# --out


def test_out_in_a_folder_that_cannot_be_written_is_one_line_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """(Tests run as root, for whom permissions do not stop mkdir: the refusal is given.)"""
    locked = tmp_path / "locked"
    locked.mkdir()
    real_mkdir = Path.mkdir

    def mkdir(self: Path, *args: Any, **kw: Any) -> None:
        if self.parent == locked:
            raise PermissionError(13, "Permission denied", str(self))
        real_mkdir(self, *args, **kw)

    monkeypatch.setattr(Path, "mkdir", mkdir)
    with (
        pytest.raises(InputError, match=rf"^--out: cannot write in {locked}: Permission denied$"),
        staging(locked / "out"),
    ):
        pass
    small = _jsonl(tmp_path / "a.jsonl", ROW)
    # the staging folder comes before Spark: the CLI answers at once, without starting it
    args = ["pipeline", "--input", str(small), "--out", str(locked / "out"), "--quiet"]
    assert cli.main(args) == 2
    assert capsys.readouterr().err == (
        f"lagassign: error: --out: cannot write in {locked}: Permission denied\n"
    )
    assert list(locked.iterdir()) == []


# ------------------------------------------------------------------------------------------------
# signals and what stderr says


def _pipeline(tmp_path: Path, session: bool = False) -> subprocess.Popen[str]:
    folder = tmp_path / "in"
    folder.mkdir()
    _jsonl(
        folder / "a.jsonl",
        {**ROW, "committed": 5, "member_id": "m"},
        {**ROW, "partition": 1, "member_id": "n"},
    )
    command = [sys.executable, "-m", "lagassign.cli", "pipeline", "--input", str(folder)]
    command += ["--out", str(tmp_path / "out"), "--master", "local[2]"]
    command += ["--conf", "spark.ui.enabled=false"]
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        start_new_session=session,
    )


def _signal_when(proc: subprocess.Popen[str], line: str, signum: int, tmp_path: Path) -> str:
    """Waits for ``line`` on the run's stderr (the run is then under way, its staging folder
    made), checks the staging folder is there, sends ``signum``; returns all of stderr."""
    assert proc.stderr is not None
    seen = []
    for text in proc.stderr:
        seen.append(text)
        if text.rstrip("\n") == line:
            break
    else:
        raise AssertionError(f"the run ended before {line!r}: {''.join(seen)}")
    assert [p.name.startswith(".out.tmp-") for p in tmp_path.iterdir() if p.name != "in"] == [True]
    if os.getsid(proc.pid) == proc.pid:  # its own session: the whole group, JVM included
        os.killpg(proc.pid, signum)
    else:
        proc.send_signal(signum)
    _, rest = proc.communicate(timeout=240)
    return "".join(seen) + rest


@pytest.mark.parametrize(
    ("signum", "when", "group", "status", "said"),
    [
        (signal.SIGINT, "reading the input ...", False, 130, "lagassign: interrupted (SIGINT)"),
        (signal.SIGTERM, "starting Spark ...", False, 143, "lagassign: terminated (SIGTERM)"),
        (signal.SIGTERM, "reading the input ...", True, 143, "lagassign: terminated (SIGTERM)"),
    ],
)
def test_a_signal_ends_the_run_cleanly(
    tmp_path: Path, signum: int, when: str, group: bool, status: int, said: str
) -> None:
    """A real ``lagassign pipeline`` process, signalled once its run is under way (during
    Spark's start, and during the job; to the process alone, or to its whole process group as
    a terminal, systemd or docker stop do, so that the JVM dies at once too): no traceback,
    the staging folder removed, nothing at --out, the shell's status for the signal. Every line on stderr is lagassign's own: none
    of Spark's or the JVM's start-up lines."""
    proc = _pipeline(tmp_path, session=group)
    stderr = _signal_when(proc, f"lagassign: {when}", signum, tmp_path)
    assert proc.returncode == status, stderr
    assert stderr.splitlines()[-1] == said, stderr
    assert all(line.startswith("lagassign: ") for line in stderr.splitlines()), stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]


class _SignalledWhenCollected:
    """Sends this process ``signum`` from its finalizer, as a signal that lands while py4j's
    finalizer of a Java object runs: the handler's exception is raised inside the finalizer,
    where Python drops it."""

    def __init__(self, signum: int) -> None:
        self.signum = signum

    def __del__(self) -> None:
        signal.raise_signal(self.signum)
        for _ in range(10):  # a few steps, at which Python runs the handler
            pass


@pytest.mark.parametrize(
    ("signum", "raised"), [(signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, Terminated)]
)
def test_a_signal_dropped_in_a_finalizer_still_ends_the_run(
    capsys: pytest.CaptureFixture[str], signum: int, raised: type[BaseException]
) -> None:
    """A fresh-clone CI run once sent SIGINT as "reading the input ..." was logged and got
    status 0 with --out written: the KeyboardInterrupt was raised in py4j's finalizer of a
    Java object and dropped there. The signal is recorded, Python's "Exception ignored" lines
    are kept off stderr, and the run raises it again at its next step (between steps and
    before --out is written); outside a run nothing is raised."""
    with pipeline._signals_unwind():
        _SignalledWhenCollected(signum)  # collected at once, by reference counting
        assert pipeline._Deferral.signalled == signum
        with pytest.raises(raised):
            pipeline._unwind_if_signalled()
    assert capsys.readouterr().err == ""
    pipeline._unwind_if_signalled()  # the run is over: nothing to raise


def test_a_new_spark_context_keeps_the_sigint_handler(tmp_path: Path) -> None:
    """PySpark's SparkContext replaces the process's SIGINT handler with its own, which left
    the pipeline's unaware of a Ctrl-C (above); start_session puts the caller's back. In a
    process of its own: the tests' shared session started the context already."""
    script = f"""
import signal
from lagassign.spark.options import PipelineOptions
from lagassign.spark.pipeline import start_session

def mine(signum, frame):
    pass

signal.signal(signal.SIGINT, mine)
options = PipelineOptions(out={str(tmp_path / "out")!r}, master="local[1]",
                          conf=(("spark.ui.enabled", "false"),), quiet=True)
session = start_session(options)
try:
    assert signal.getsignal(signal.SIGINT) is mine, signal.getsignal(signal.SIGINT)
finally:
    session.stop()
print("kept")
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == "kept", done.stderr[-2000:]


def test_progress_lines_never_go_backwards_nor_repeat() -> None:
    """Polls of Spark's active stages (id, tasks done, tasks): one line per stage and count."""
    progress = Progress()
    polls = [
        [(3, 0, 8)],
        [(3, 7, 8)],
        [(3, 7, 8)],  # a long task: nothing new to say
        [(4, 0, 8)],  # the next stage: its own line, not "0 of 8" after "7 of 8"
        [(4, 0, 8), (5, 2, 4)],
        [(4, 3, 8), (5, 1, 4)],  # a count that seems to drop (a retried task) is not said
    ]
    said = [progress.lines(poll) for poll in polls]
    assert said == [
        ["stage 3: 0 of 8 tasks done"],
        ["stage 3: 7 of 8 tasks done"],
        [],
        ["stage 4: 0 of 8 tasks done"],
        ["stage 5: 2 of 4 tasks done"],
        ["stage 4: 3 of 8 tasks done"],
    ]


def test_signals_are_caught_only_while_the_pipeline_runs() -> None:
    """The handlers the run installs are removed again (a library caller keeps its own)."""
    from lagassign.spark.pipeline import _signals_unwind

    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    with _signals_unwind():
        assert signal.getsignal(signal.SIGTERM) is not before[0]
        assert signal.getsignal(signal.SIGINT) is not before[1]
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_whose_exception_was_lost_still_ends_the_run_as_signalled(signum: int) -> None:
    """Raised inside py4j (a finalizer, a call to the JVM), the signal's exception was lost or
    became another (PySpark's TypeError, then the JVM's closed connection): the run still
    ends as the signal says, not as "Spark failed" with status 1."""
    from lagassign.spark import pipeline

    with pipeline._signals_unwind():
        try:
            os.kill(os.getpid(), signum)
            time.sleep(1)  # the handler runs here, in the main thread
        except (pipeline.Terminated, KeyboardInterrupt):
            pass  # lost, as inside a finalizer
        lost_in = pipeline.PipelineError("Spark failed: Connection refused")
        assert pipeline._ended_by(lost_in) == signum
    with pipeline._signals_unwind():
        assert pipeline._ended_by(lost_in) is None


def test_a_reader_failure_no_check_foresaw_still_names_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On an executor, a reader that raises something other than InputError gives an error
    row naming the file (exit 2 by the driver), not an exception that Spark reports as
    "Spark failed" without the file."""

    def broken(path: str, *args: Any, **kw: Any) -> Any:
        raise TypeError("Object of type datetime is not\nJSON serializable")

    monkeypatch.setattr(file_sources, "read_snapshot_file", broken)
    path = str(_jsonl(tmp_path / "a.jsonl", ROW))
    read = file_sources._file_reader(False, None, None, "latest")
    [batch] = list(read(iter([pa.record_batch({"path": [path]})])))
    [row] = batch.to_pylist()
    assert (row["source"], row["error"]) == (
        path,
        "cannot read: TypeError: Object of type datetime is not JSON serializable",
    )


def test_the_run_time_counts_every_step_spark_start_included() -> None:
    """The report's run time is the whole run's, Spark's start included (it said "387 s so
    far (read, plan, write)"), the step under way counted until now."""
    from lagassign.spark.pipeline import _Clock, _run_time

    clock = _Clock()
    for name in ("start", "read", "plan", "write"):
        with clock.step(name, name):
            pass
    clock.seconds.update(start=15.2, read=23.4, plan=185.0, write=10.9)
    clock.started -= 240
    with clock.step("report", "report"):
        said = _run_time(clock)
    assert re.fullmatch(
        r"24\d s \(starting Spark 15 s, reading 23 s, planning 185 s, writing the tables 11 s, "
        r"the report 0 s\)",
        said,
    ), said


def test_a_sigterm_in_a_deferred_section_ends_the_run_when_the_section_ends() -> None:
    """A SIGTERM that comes while threading's locks are in use (a progress thread starting or
    being joined) is held back, not raised there, and ends the run as the section ends: raised
    in the middle, it broke the lock and the run ended on a RuntimeError with status 1."""
    from lagassign.spark import pipeline

    finished = False
    with (
        pipeline._signals_unwind(),
        pytest.raises(pipeline.Terminated),
        pipeline._sigterm_deferred(),
    ):
        os.kill(os.getpid(), signal.SIGTERM)
        with pipeline._sigterm_deferred():  # nested: still held at the inner end
            pass
        finished = True
    assert finished
    assert not pipeline._Deferral.pending and pipeline._Deferral.held == 0
