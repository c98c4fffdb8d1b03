"""``lagassign monitor`` on the real broker and real Spark: known counts, known commits from a classic and a KIP-848 group; the command run in
its own process: for ``--duration``, twice on one checkpoint, and stopped by SIGTERM (to it and to its whole process group; its live report then read in Chromium). The last row of every
partition in the ``lag`` table is log end − committed, every micro-batch printed one progress
line, and the process exits 0. The ``groups`` table: a healthy running group OK with its member, stopped ones STOP. An unreachable cluster: exit 1, one line, nothing written."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.dataset as ds
import pytest
from confluent_kafka import TopicPartition as KafkaTopicPartition
from playwright.sync_api import Browser

from tests.kafka.broker import admin_client, closed_port, end_offsets
from tests.kafka.test_consumer_offsets_live import commit_classic, commit_kip848
from tests.kafka.test_offsets import MakeTopic, running_group, unique
from tests.kafka.test_offsets import admin as admin  # fixture used by make_topic
from tests.kafka.test_offsets import make_topic as make_topic  # fixture
from tests.test_monitor_report import browser as browser  # fixture
from tests.test_monitor_report import shows_the_last_batch

COUNTS = [30, 12, 7]
CLASSIC = [(0, 10), (1, 12)]
KIP848 = [(0, 25), (2, 3)]
SPARK = ["--master", "local[1]", "--conf", "spark.ui.enabled=false"]
FIRST_BATCH_S = 240.0


def monitor(*args: str) -> list[str]:
    return [sys.executable, "-m", "lagassign.cli", "monitor", *args, *SPARK]


def on_cluster(bootstrap: str, pattern: str, out: Path, *args: str) -> list[str]:
    return monitor("--bootstrap-server", bootstrap, "--out", str(out), "--group", pattern, *args)


@pytest.fixture
def committed(
    kafka_bootstrap: str, make_topic: MakeTopic
) -> tuple[str, str, dict[tuple[str, int], int]]:
    """A topic of COUNTS and two groups' commits on it: (topic, --group pattern, commits)."""
    topic = make_topic(COUNTS)
    classic, kip848 = unique("q-classic"), unique("q-kip848")
    commit_classic(kafka_bootstrap, classic, topic, [(p, o, "") for p, o in CLASSIC])
    commit_kip848(kafka_bootstrap, kip848, topic, [(p, o, "") for p, o in KIP848])
    commits = {(classic, p): o for p, o in CLASSIC} | {(kip848, p): o for p, o in KIP848}
    return topic, f"{re.escape(classic)}|{re.escape(kip848)}", commits


def check_lag(out: Path, bootstrap: str, topic: str, commits: dict[tuple[str, int], int]) -> None:
    ends = end_offsets(admin_client(bootstrap), {topic: len(COUNTS)})
    rows = ds.dataset(out / "lag", format="parquet", partitioning="hive").to_table().to_pylist()
    last: dict[tuple[str, int], dict[str, object]] = {}
    for r in sorted(rows, key=lambda r: r["time"]):  # type: ignore[arg-type,return-value]
        last[(r["group"], r["partition"])] = r  # type: ignore[index]
    assert {k: (r["committed"], r["end"], r["lag"]) for k, r in last.items()} == {
        (g, p): (c, ends[(topic, p)], ends[(topic, p)] - c) for (g, p), c in commits.items()
    }


def run_for(
    bootstrap: str, pattern: str, out: Path, seconds: int, groups: int = 2, partitions: int = 4
) -> list[int]:
    """``lagassign monitor --duration seconds``: it exits 0; the batch ids it printed."""
    done = subprocess.run(
        on_cluster(bootstrap, pattern, out, "--interval", "3", "--duration", str(seconds)),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = batch_lines(done.stdout, groups, partitions)
    return [int(line.split(":")[0].split()[1]) for line in lines]


def batch_lines(stdout: str, groups: int = 2, partitions: int = 4) -> list[str]:
    """The progress lines: one per micro-batch, each of all the groups' partitions."""
    lines = [line for line in stdout.splitlines() if line.startswith("batch ")]
    assert lines, stdout
    counts = rf"batch \d+: {groups} groups, {partitions} partitions, "
    assert all(re.match(counts, line) for line in lines), lines
    return lines


def test_monitor_for_a_duration(
    kafka_bootstrap: str, committed: tuple[str, str, dict[tuple[str, int], int]], tmp_path: Path
) -> None:
    """Beside the two groups that committed once with lag and left, a healthy group whose one
    member consumed every partition to its log end and stays in the group while the monitor
    runs: in the last micro-batch's ``lag`` rows the member owns every partition
    (``member_id``), the others' are null; in its ``groups`` rows the healthy group is OK with
    1 member and the two stopped ones STOP (lag, and no commit for longer than their window spans) with 0,
    each with its total lag."""
    topic, pattern, commits = committed
    healthy = unique("q-healthy")
    steps = [(0, 10), (0, COUNTS[0]), (1, COUNTS[1]), (2, COUNTS[2])]
    out = tmp_path / "out"
    with running_group(kafka_bootstrap, healthy, [topic], members=1) as (member,):
        for p, o in steps:
            member.commit(offsets=[KafkaTopicPartition(topic, p, o)], asynchronous=False)
        commits = {**commits, **{(healthy, p): o for p, o in steps}}
        pattern = f"{pattern}|{re.escape(healthy)}"
        assert run_for(kafka_bootstrap, pattern, out, 40, groups=3, partitions=7)[0] == 0
        member_id = member.memberid()
    check_lag(out, kafka_bootstrap, topic, commits)
    lag_rows = ds.dataset(out / "lag", format="parquet", partitioning="hive").to_table()
    newest = max(lag_rows.column("time").to_pylist())
    # the member owns every partition of the topic; the groups that left own nothing
    assert {
        (r["group"], r["partition"], r["member_id"])
        for r in lag_rows.to_pylist()
        if r["time"] == newest
    } == {(g, p, member_id if g == healthy else None) for g, p in commits}

    rows = ds.dataset(out / "groups", format="parquet", partitioning="hive").to_table()
    last = max(rows.column("time").to_pylist())
    final = {r["group"]: r for r in rows.to_pylist() if r["time"] == last}
    lags: dict[str, int] = {}
    for (g, p), c in commits.items():
        lags[g] = lags.get(g, 0) + COUNTS[p] - c
    assert {g: (r["status"], r["total_lag"], r["members"]) for g, r in final.items()} == {
        g: ("OK", lag, 1) if g == healthy else ("STOP", lag, 0) for g, lag in lags.items()
    }
    assert lags[healthy] == 0 and all(lag > 0 for g, lag in lags.items() if g != healthy)


def test_a_restart_from_the_checkpoint_neither_repeats_nor_skips_a_batch(
    kafka_bootstrap: str,
    committed: tuple[str, str, dict[tuple[str, int], int]],
    tmp_path: Path,
) -> None:
    """Two runs on one --out and checkpoint, more commits between them: the batch ids of the
    lag table run 0..N without a gap or a repeat, the second run starts where the first ended,
    and the last rows are the newest commits (a replayed batch replaces its own file)."""
    topic, pattern, commits = committed
    out = tmp_path / "out"
    runs = []
    for _ in range(2):
        runs.append(run_for(kafka_bootstrap, pattern, out, 20))
        if len(runs) == 1:
            group = next(g for g, _ in commits if g.startswith("lagassign-q-classic"))
            commit_classic(kafka_bootstrap, group, topic, [(0, 20, "")])
            commits = {**commits, (group, 0): 20}
    first, second = runs
    assert first and second and first == list(range(len(first)))
    # the second run goes on after the first's last batch, or replays it (a batch stopped
    # before Spark committed it) into the same file
    assert second[0] in (first[-1], first[-1] + 1)
    assert second == list(range(second[0], second[0] + len(second)))
    files = sorted(int(p.stem.split("-")[1]) for p in (out / "lag").rglob("batch-*.parquet"))
    assert files == sorted(set(first + second))
    check_lag(out, kafka_bootstrap, topic, commits)


def sigterm_after_the_first_batch(
    browser: Browser,
    bootstrap: str,
    committed: tuple[str, str, dict[tuple[str, int], int]],
    out: Path,
    whole_group: bool,
) -> None:
    """``lagassign monitor`` (in a session of its own) sent SIGTERM once it printed its first
    progress line, to itself or to its whole process group: it exits 0 having printed a
    progress line per micro-batch, the lag table holds every commit, the live report in
    Chromium shows the groups table's last micro-batch, and its JVM (which it started in a
    process group of its own) is gone after it."""
    topic, pattern, commits = committed
    proc = subprocess.Popen(
        on_cluster(bootstrap, pattern, out, "--interval", "2"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # blocks until the first progress line
        assert first.startswith("batch 0:"), first
        (jvm,) = [pid for pid, name in children(proc.pid) if name == "java"]
        groups = (os.getpgid(jvm), os.getpgid(proc.pid))
        if whole_group:
            os.killpg(proc.pid, signal.SIGTERM)
        else:
            proc.send_signal(signal.SIGTERM)
        rest, err = proc.communicate(timeout=FIRST_BATCH_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err[-3000:]
    batch_lines(first + rest)
    check_lag(out, bootstrap, topic, commits)
    page, _ = shows_the_last_batch(browser, out)
    page.close()
    wait_gone(jvm)
    assert groups[0] != groups[1] == proc.pid  # the JVM: a process group of its own


def children(pid: int) -> list[tuple[int, str]]:
    """The processes whose parent is ``pid``: (pid, name)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # ended meanwhile
            continue
        name = text[text.index("(") + 1 : text.rindex(")")]
        if int(text[text.rindex(")") + 2 :].split()[1]) == pid:
            found.append((int(stat.parent.name), name))
    return found


def wait_gone(pid: int) -> None:
    """Waits (60 s at most) for ``pid`` to end: the JVM exits when the monitor's pipe to it
    closes; kills it and fails if it does not."""
    deadline = time.monotonic() + 60
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    if Path(f"/proc/{pid}").exists():
        os.kill(pid, signal.SIGKILL)
        pytest.fail(f"the monitor's JVM {pid} outlived it")


def test_sigterm_finishes_the_batch_and_exits_0(
    browser: Browser,
    kafka_bootstrap: str,
    committed: tuple[str, str, dict[tuple[str, int], int]],
    tmp_path: Path,
) -> None:
    sigterm_after_the_first_batch(
        browser, kafka_bootstrap, committed, tmp_path / "out", whole_group=False
    )


def test_sigterm_to_the_whole_process_group_finishes_the_batch_and_exits_0(
    browser: Browser,
    kafka_bootstrap: str,
    committed: tuple[str, str, dict[tuple[str, int], int]],
    tmp_path: Path,
) -> None:
    """As a supervisor stops a service (systemd's default, ``kill -- -PGID``): the signal
    reaches the monitor and not its JVM, which has a process group of its own, so the
    micro-batch is finished and committed and the monitor exits 0."""
    sigterm_after_the_first_batch(
        browser, kafka_bootstrap, committed, tmp_path / "out", whole_group=True
    )


def test_an_unreachable_cluster_is_exit_1_and_nothing_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    began = time.monotonic()
    done = subprocess.run(
        monitor("--bootstrap-server", f"127.0.0.1:{closed_port()}", "--out", str(out)),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("\n") == 1 and "Connection refused" in done.stderr, done.stderr
    assert not out.exists()
    assert time.monotonic() - began < 60
