"""A real Kafka broker for the tests under tests/kafka.

The session fixture ``kafka_bootstrap`` runs the same ``scripts/kafka.sh start`` a developer runs
by hand, with ``LAGASSIGN_KAFKA_DIR`` set to a session temp dir, and ``scripts/kafka.sh stop`` at
teardown. It never skips: a broker that cannot start fails the tests, with the broker's log tail.
Every test in this folder gets the ``kafka`` marker (``pytest -m "not kafka"`` leaves them out).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KAFKA_SH = ROOT / "scripts" / "kafka.sh"
HERE = Path(__file__).resolve().parent

# The first start may fetch the jars from Maven Central; the broker's own start-up timeout is
# inside kafka.sh (LAGASSIGN_KAFKA_START_TIMEOUT, 120 s by default).
START_TIMEOUT_S = 1200
STOP_TIMEOUT_S = 120

KafkaSh = Callable[[str], subprocess.CompletedProcess[str]]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "kafka: tests against a real Kafka broker started by scripts/kafka.sh "
        "(needs Java 17 and Maven Central)",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.kafka)


def _run(cmd: str, run_dir: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "LAGASSIGN_KAFKA_DIR": str(run_dir),
        # the broker stops by itself if this test session dies without its teardown
        "LAGASSIGN_KAFKA_PARENT_PID": str(os.getpid()),
    }
    try:
        return subprocess.run(
            ["bash", str(KAFKA_SH), cmd],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(
            f"scripts/kafka.sh {cmd} did not finish within {timeout:.0f} s\n"
            f"stderr:\n{exc.stderr!s}",
            pytrace=False,
        )


def _log_tail(run_dir: Path, lines: int = 60) -> str:
    parts = []
    for name in ("logs/server.log", "logs/console.out", "format.log"):
        path = run_dir / name
        if path.is_file():
            tail = path.read_text(errors="replace").splitlines()[-lines:]
            parts.append(f"----- last {len(tail)} lines of {path} -----\n" + "\n".join(tail))
    return "\n".join(parts) or f"(no log files in {run_dir})"


@pytest.fixture(scope="session")
def kafka_run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The broker's run dir (server.properties, data, logs, pid file) for this session."""
    return tmp_path_factory.mktemp("kafka-run")


@pytest.fixture(scope="session")
def kafka_sh(kafka_run_dir: Path) -> KafkaSh:
    """Runs ``scripts/kafka.sh CMD`` against this session's broker."""

    def run(cmd: str) -> subprocess.CompletedProcess[str]:
        return _run(cmd, kafka_run_dir, START_TIMEOUT_S if cmd == "start" else STOP_TIMEOUT_S)

    return run


@pytest.fixture(scope="session")
def kafka_bootstrap(kafka_sh: KafkaSh, kafka_run_dir: Path) -> Iterator[str]:
    """``127.0.0.1:PORT`` of a single-node Kafka broker started for this test session."""
    started = kafka_sh("start")
    lines = started.stdout.strip().splitlines()
    if started.returncode != 0 or not lines or not lines[-1].startswith("bootstrap="):
        kafka_sh("stop")
        # kafka.sh prints the log tail itself when the broker fails; not when, say, mvn fails
        tail = "" if "----- last " in started.stderr else _log_tail(kafka_run_dir)
        pytest.fail(
            f"scripts/kafka.sh start failed (exit {started.returncode})\n"
            f"stdout:\n{started.stdout}\nstderr:\n{started.stderr}\n{tail}",
            pytrace=False,
        )
    bootstrap = lines[-1].removeprefix("bootstrap=")
    try:
        yield bootstrap
    finally:
        stopped = kafka_sh("stop")
        if stopped.returncode != 0:
            pytest.fail(
                f"scripts/kafka.sh stop failed (exit {stopped.returncode})\n{stopped.stderr}",
                pytrace=False,
            )
