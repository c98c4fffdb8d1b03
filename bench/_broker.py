"""A development Kafka broker for one benchmark run, and the admin calls the benchmarks share.

    with Broker() as broker:          # scripts/kafka.sh start in a fresh temp run dir
        admin = admin_client(broker.bootstrap)
        create_topics(admin, {"orders": 8})
        ...
                                      # scripts/kafka.sh stop, run dir removed

The broker, the admin calls and the reporting consumer processes are the tests'
(``tests/kafka/broker.py``, ``tests/kafka/processes.py``), so the benchmarks run the broker and
their group members exactly as the real-broker tests do; this module adds what a benchmark run
wants around them: a temp run dir, progress on stderr, and :func:`exit_on_sigterm`, which turns
SIGTERM and SIGHUP into ``SystemExit`` so that ``finally`` blocks (and ``with Broker()``) run on
them as on Ctrl-C; :func:`measure_and_save` runs a benchmark on a fresh broker and saves its
table.
"""

from __future__ import annotations

import json
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

# run as a script from bench/: the repository root makes tests.kafka.broker importable
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.kafka.broker import (
    BrokerError,
    DevBroker,
    admin_client,
    commit,
    committed_offsets,
    create_topics,
    end_offsets,
    produce,
    wait_leaders,
)
from tests.kafka.processes import Processes, Reporting, WaitFailed, wait_for

__all__ = [
    "Broker",
    "BrokerError",
    "Processes",
    "Reporting",
    "WaitFailed",
    "admin_client",
    "commit",
    "committed_offsets",
    "create_topics",
    "end_offsets",
    "exit_on_sigterm",
    "measure_and_save",
    "produce",
    "wait_for",
    "wait_leaders",
]


RESULTS = Path(__file__).parent / "results"


def measure_and_save(
    name: str,
    run: Callable[[Broker], dict[str, Any]],
    render: Callable[[dict[str, Any]], tuple[Any, str]],
    heap_opts: str | None = None,
    nodes: int = 1,
) -> None:
    """``run`` on a fresh broker (SIGTERM ends it cleanly), or a cluster of ``nodes``; its
    result with ``wall_s`` to ``bench/results/NAME.json``, and ``render``'s table printed and
    its Markdown to ``NAME.md``."""
    from rich.console import Console

    exit_on_sigterm()
    began = time.monotonic()
    with Broker(heap_opts=heap_opts, nodes=nodes) as broker:
        result = run(broker)
    result["wall_s"] = round(time.monotonic() - began, 1)
    table, md = render(result)
    Console().print(table)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(result, indent=1))
    (RESULTS / f"{name}.md").write_text(md)
    print(f"written {RESULTS / name}.md ({result['wall_s']} s in all)", file=sys.stderr)


def exit_on_sigterm() -> None:
    """SIGTERM and SIGHUP raise ``SystemExit`` in the main thread, so cleanup code runs."""

    def handler(signum: int, _frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGHUP, handler)


class Broker(DevBroker):
    """A :class:`DevBroker` in a fresh temp run dir: started on enter, stopped (and the run dir
    removed, unless ``keep_run_dir``) on exit."""

    def __init__(
        self, heap_opts: str | None = None, keep_run_dir: bool = False, nodes: int = 1
    ) -> None:
        super().__init__(Path(tempfile.mkdtemp(prefix="lagassign-bench-kafka-")), heap_opts, nodes)
        self.keep_run_dir = keep_run_dir

    def __enter__(self) -> Broker:
        what = "a Kafka broker" if self.nodes == 1 else f"a {self.nodes}-node Kafka cluster"
        print(f"starting {what} in {self.run_dir} ...", file=sys.stderr)
        try:
            self.start()
        except BaseException:
            self._remove_run_dir()
            raise
        print(f"broker at {self.bootstrap} ({self.started_seconds:.1f} s)", file=sys.stderr)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        print("stopping the broker ...", file=sys.stderr)
        try:
            self.stop()
        except BrokerError as failed:
            print(failed, file=sys.stderr)
        finally:
            self._remove_run_dir()

    def _remove_run_dir(self) -> None:
        if not self.keep_run_dir:
            shutil.rmtree(self.run_dir, ignore_errors=True)
