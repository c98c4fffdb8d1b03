"""README's screenshot of the monitor's live report, from a real run (docs/img/monitor-report.png).

Starts the development broker (scripts/kafka.sh, its own run dir, stopped at the end), and on
it five consumer groups that behave as their names say, while ``lagassign monitor`` runs for
``--duration`` seconds beside them:

* ``orders-ok``: a consumer that reads ``orders`` (60 records a second) and commits every
  second: OK, 1 member;
* ``orders-slow``: a consumer that reads ``orders`` ten records a second and commits every
  second: its lag grows;
* ``billing-stalled``: commits the same offset of ``billing`` every two seconds while records
  keep coming: STALL;
* ``billing-behind``: commits ``billing`` every four seconds (longer than the monitor's
  interval, so that each commit's lag is read against a log end of its own), 2 records a
  second further on each partition while 5 a second come: its lag grows from commit to
  commit, WARN;
* ``audit-stopped``: committed twice with lag at the start, then nothing: STOP;
* ``search-rewind``: committed 60 then 20: REWIND.

Then headless Chromium (Debian's, through Playwright, as the report's test) takes the page's
screenshot. Run it with the venv of scripts/setup.sh, after scripts/spark-kafka.sh:

    .venv/bin/python scripts/monitor-screenshot.py [--duration 100] [--out FILE.png]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
TOPICS = {"orders": 6, "billing": 2, "audit": 2, "search": 1}


def start_broker(run_dir: Path) -> str:
    env = {
        **os.environ,
        "LAGASSIGN_KAFKA_DIR": str(run_dir),
        "LAGASSIGN_KAFKA_PARENT_PID": str(os.getpid()),
    }
    started = subprocess.run(
        ["bash", str(ROOT / "scripts" / "kafka.sh"), "start"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return started.stdout.strip().splitlines()[-1].removeprefix("bootstrap=")


def stop_broker(run_dir: Path) -> None:
    env = {**os.environ, "LAGASSIGN_KAFKA_DIR": str(run_dir)}
    subprocess.run(["bash", str(ROOT / "scripts" / "kafka.sh"), "stop"], env=env, check=False)


def create_topics(bootstrap: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(t, n, 1) for t, n in TOPICS.items()])
    for future in futures.values():
        future.result(30)


def produce(bootstrap: str, topic: str, count: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(count):
        producer.produce(topic, value=b"x" * 100, partition=i % TOPICS[topic])
    producer.flush(30)


def commit(bootstrap: str, group: str, topic: str, offsets: dict[int, int]) -> None:
    """Commits ``offsets`` for ``group`` without joining it (the group stays empty)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        consumer.commit(
            offsets=[TopicPartition(topic, p, o) for p, o in offsets.items()], asynchronous=False
        )
    finally:
        consumer.close()


def every(seconds: float, stop: threading.Event, action: Callable[[], None]) -> threading.Thread:
    def loop() -> None:
        while not stop.wait(seconds):
            action()

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return thread


def consume(bootstrap: str, group: str, stop: threading.Event, per_second: float | None) -> None:
    """A member of ``group`` reading ``orders`` (``per_second`` records a second at most, or
    all it can), committing every second."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "auto.commit.interval.ms": 1000,
        }
    )
    consumer.subscribe(["orders"])
    try:
        while not stop.is_set():
            consumer.poll(0.5)
            if per_second is not None:
                time.sleep(1 / per_second)
    finally:
        consumer.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=100)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "monitor-report.png")
    args = parser.parse_args()
    chromium = shutil.which("chromium")
    if chromium is None:
        print("monitor-screenshot: chromium is missing: bash scripts/setup.sh", file=sys.stderr)
        return 1

    work = Path(tempfile.mkdtemp(prefix="lagassign-monitor-screenshot-"))
    run_dir, out = work / "kafka", work / "monitor"
    bootstrap = start_broker(run_dir)
    stop = threading.Event()
    threads: list[threading.Thread] = []
    try:
        create_topics(bootstrap)
        for topic, count in (("orders", 600), ("billing", 400), ("audit", 300), ("search", 200)):
            produce(bootstrap, topic, count)
        commit(bootstrap, "audit-stopped", "audit", {0: 20, 1: 30})
        commit(bootstrap, "audit-stopped", "audit", {0: 60, 1: 50})
        commit(bootstrap, "search-rewind", "search", {0: 60})
        time.sleep(1.5)  # a second commit within 1 s of the first would replace it
        commit(bootstrap, "search-rewind", "search", {0: 20})
        threads.append(every(1.0, stop, lambda: produce(bootstrap, "orders", 60)))
        threads.append(every(1.0, stop, lambda: produce(bootstrap, "billing", 10)))
        threads.append(
            every(2.0, stop, lambda: commit(bootstrap, "billing-stalled", "billing", {0: 50}))
        )
        behind = [100]

        def fall_behind() -> None:
            behind[0] += 8
            commit(bootstrap, "billing-behind", "billing", {0: behind[0], 1: behind[0]})

        threads.append(every(4.0, stop, fall_behind))
        for group, rate in (("orders-ok", None), ("orders-slow", 10.0)):
            thread = threading.Thread(
                target=consume, args=(bootstrap, group, stop, rate), daemon=True
            )
            thread.start()
            threads.append(thread)

        monitor = [
            str(ROOT / ".venv" / "bin" / "lagassign"),
            "monitor",
            "--bootstrap-server",
            bootstrap,
            "--out",
            str(out),
            "--interval",
            "3",
            "--duration",
            str(args.duration),
            "--master",
            "local[1]",
            "--conf",
            "spark.ui.enabled=false",
        ]
        subprocess.run(monitor, check=True)
    finally:
        stop.set()
        for thread in threads:
            thread.join(10)
        stop_broker(run_dir)

    args.out.parent.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto((out / "report.html").as_uri())
        page.screenshot(path=str(args.out), full_page=True)
        browser.close()
    shutil.rmtree(work, ignore_errors=True)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
