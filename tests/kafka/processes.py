"""Child processes that report on stdout, one JSON object a line.

The real-broker tests (``tests/kafka/consumer_proc.py``) and benchmarks
(``bench/consumer_capped.py``) run their group members as such processes and read what they
report: :class:`Processes` starts them and reads each one's events on a thread of its own;
:meth:`Processes.close` ends every process it started. The children write their events with
:func:`emit` and bound their own life with :func:`start_watchdog`. No pytest here: the
benchmarks use it too.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

# -- the child's side ----------------------------------------------------------------------

_emitting = threading.Lock()


def emit(name: str, event: str, **fields: Any) -> None:
    """One event on stdout: a JSON object with ``event``, ``name`` and ``time`` (``time.time()``),
    a line of its own even when threads report at once."""
    line = json.dumps({"event": event, "name": name, "time": time.time(), **fields})
    with _emitting:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def start_watchdog(max_seconds: float) -> None:
    """End this process after ``max_seconds`` or once its parent is gone. A thread, because a
    client's poll loop may block without a deadline (kafka-python's does)."""

    def watch() -> None:
        deadline = time.monotonic() + max_seconds
        parent = os.getppid()
        while time.monotonic() < deadline and os.getppid() == parent:
            time.sleep(0.5)
        sys.stdout.flush()
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


# -- the parent's side ---------------------------------------------------------------------


class WaitFailed(RuntimeError):
    """What :func:`wait_for` waited for did not come: the deadline passed or a process exited."""


@dataclass
class Reporting:
    """One process and the events it reported so far (a line that is not JSON: ``raw``)."""

    name: str
    popen: subprocess.Popen[str]
    stderr_path: Path
    events: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def of(self, event: str) -> list[dict[str, Any]]:
        with self.lock:
            return [e for e in self.events if e.get("event") == event]

    def latest(self, event: str) -> dict[str, Any] | None:
        found = self.of(event)
        return found[-1] if found else None

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stderr(self) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")
        except OSError:
            return ""

    def tail(self, lines: int = 15) -> str:
        """The process's exit status and the last ``lines`` lines of its stderr."""
        text = self.stderr().splitlines()[-lines:]
        header = f"--- {self.name} (pid {self.popen.pid}, exit {self.popen.poll()}) ---"
        return "\n".join([header, *("  stderr: " + line for line in text)])

    def send(self, line: str) -> None:
        """A line on the process's stdin (started with ``stdin=True``)."""
        assert self.popen.stdin is not None
        self.popen.stdin.write(line + "\n")
        self.popen.stdin.flush()


class Processes:
    """Starts reporting processes, their stderr in ``log_dir``; :meth:`close` ends them all."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.procs: list[Reporting] = []
        self._readers: list[threading.Thread] = []

    def start(self, name: str, cmd: Sequence[str], *, stdin: bool = False) -> Reporting:
        """Runs ``cmd``; with ``stdin``, :meth:`Reporting.send` writes to it."""
        stderr_path = self.log_dir / f"{name}.stderr"
        with stderr_path.open("w") as stderr:
            popen = subprocess.Popen(
                list(cmd),
                stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        proc = Reporting(name, popen, stderr_path)
        reader = threading.Thread(target=_read, args=(proc,), daemon=True)
        reader.start()
        self.procs.append(proc)
        self._readers.append(reader)
        return proc

    def kill(self, proc: Reporting) -> None:
        """SIGKILL: the process gets no chance to leave its group."""
        if proc.alive():
            proc.popen.send_signal(signal.SIGKILL)
        proc.popen.wait(timeout=30)

    def close(self, grace: float = 0.0) -> None:
        """Ends every process: SIGTERM and up to ``grace`` seconds to exit, then SIGKILL."""
        for proc in self.procs:
            if proc.alive():
                if grace:
                    proc.popen.terminate()
                else:
                    proc.popen.kill()
        for proc in self.procs:
            try:
                proc.popen.wait(timeout=grace or 30)
            except subprocess.TimeoutExpired:
                proc.popen.kill()
                with contextlib.suppress(subprocess.TimeoutExpired):  # SIGKILL does not fail
                    proc.popen.wait(timeout=30)
            if proc.popen.stdin is not None:
                with contextlib.suppress(OSError):
                    proc.popen.stdin.close()
        for reader in self._readers:
            reader.join(timeout=5)

    def summary(self) -> str:
        return "\n".join(p.tail() for p in self.procs)


def wait_for(
    check: Callable[[], T | None],
    timeout: float,
    what: str,
    procs: Sequence[Reporting],
    poll: float = 0.25,
) -> T:
    """Polls ``check`` until it returns something other than None and returns that.

    Raises :class:`WaitFailed`, with the tail of every process's stderr, after ``timeout``
    seconds or as soon as one of ``procs`` exits other than by a SIGKILL (:meth:`Processes.kill`
    is how a test takes a member away).
    """
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value is not None:
            return value
        summary = "\n".join(p.tail() for p in procs)
        if any(p.popen.poll() not in (None, -signal.SIGKILL) for p in procs):
            raise WaitFailed(f"a process exited while waiting for {what}\n{summary}")
        if time.monotonic() > deadline:
            raise WaitFailed(f"timed out after {timeout:.0f} s waiting for {what}\n{summary}")
        time.sleep(poll)


def _read(proc: Reporting) -> None:
    assert proc.popen.stdout is not None
    for line in proc.popen.stdout:
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            event = {"event": "raw", "line": line.rstrip("\n")}
        with proc.lock:
            proc.events.append(event)
