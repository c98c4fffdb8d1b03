"""A consumer process for the end-to-end tests: a group member with a lagassign assignor.

    python tests/kafka/consumer_proc.py --client kafka-python|aiokafka --bootstrap HOST:PORT
        --group G --topics a,b [--strategy lag] [--protocol cooperative] [--instance-id I]
        [--consume] ...

It reports on stdout, one JSON object a line, each with ``event`` and the process's ``name``:

* ``{"event": "started"}`` once the consumer exists;
* ``{"event": "rebalanced", "member_id", "generation", "partitions": [[topic, partition], ...]}``
  after every rebalance this member completed: its whole assignment, whatever the protocol;
* ``{"event": "assigned", "member_id", "generation", "partitions"}`` when partitions are
  assigned: the member's whole assignment after the rebalance (eager protocol: after every
  rebalance; cooperative: when it gained partitions);
* ``{"event": "revoked", "member_id", "generation", "partitions", "assignment"}`` when
  partitions are revoked: those revoked and the member's assignment at that moment (eager:
  still the old one; cooperative: what it keeps);
* ``{"event": "leader", "generation", "strategy", "protocol", "lag", "seconds", "error",
  "assignment": {member: [...]}, "withheld": [...], "owned": {member: [...]},
  "consuming": {member: [...]}, "generations": {member: n}}`` after a rebalance this member
  led: what its assignor computed (``LeaderAssignment``) and what it computed from: the
  members' previous assignments, what they still consume (members consuming nothing left out)
  and their generations;
* ``{"event": "consumed", "records": [[topic, partition, first, last], ...]}`` for every batch it
  processed (``--consume``), before committing the batch (``--commit``);
* ``{"event": "committed", ...}`` after each commit, ``{"event": "error", "message"}`` on a
  failure.

Logging (lagassign's warnings among them) goes to stderr. The process ends itself after
``--max-seconds`` or once its parent is gone, so a test that dies leaves no consumer behind.

Both clients run the same loop (:func:`consume`); :class:`KafkaPython` and :class:`AioKafka`
only say how each builds its consumer, polls, commits and names its member id and generation.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

# run as a script: make `lagassign` (src) and `tests` importable without an installed package
_ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(_ROOT / "src"), str(_ROOT)]

from tests.kafka.processes import emit, start_watchdog  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--client", choices=["kafka-python", "aiokafka"], required=True)
    p.add_argument("--name", default=f"proc-{os.getpid()}")
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--offsets-bootstrap", help="bootstrap.servers of the leader's offsets reader")
    p.add_argument("--group", required=True)
    p.add_argument("--topics", required=True, help="comma-separated")
    p.add_argument("--strategy", default="lag")
    p.add_argument("--protocol", choices=["eager", "cooperative"], help="kafka-python only")
    p.add_argument(
        "--instance-id", help="group.instance.id: a static member (kafka-python only)"
    )
    p.add_argument("--auto-offset-reset", default="earliest")
    p.add_argument("--lag-timeout", type=float, default=None)
    p.add_argument("--consume", action="store_true", help="process records (else only report)")
    p.add_argument("--commit", action="store_true", help="commit after every processed batch")
    p.add_argument("--max-records", type=int, default=20)
    p.add_argument("--delay", type=float, default=0.0, help="seconds to sleep per batch")
    p.add_argument("--session-timeout-ms", type=int, default=6000)
    p.add_argument("--heartbeat-interval-ms", type=int, default=1000)
    p.add_argument("--max-poll-interval-ms", type=int, default=20000)
    p.add_argument("--max-seconds", type=float, default=300.0)
    p.add_argument("--debug", action="append", default=[], help="a logger to log at DEBUG")
    return p.parse_args(argv)


def assignor_settings(args: argparse.Namespace) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "group_id": args.group,
        "auto_offset_reset": args.auto_offset_reset,
        "bootstrap_servers": args.offsets_bootstrap or args.bootstrap,
    }
    if args.lag_timeout is not None:
        settings["lag_timeout"] = args.lag_timeout
    return settings


def consumer_settings(args: argparse.Namespace) -> dict[str, Any]:
    """What both clients' consumers take, under the same names."""
    return {
        "bootstrap_servers": args.bootstrap,
        "group_id": args.group,
        "client_id": args.name,
        "enable_auto_commit": False,
        "auto_offset_reset": args.auto_offset_reset,
        "session_timeout_ms": args.session_timeout_ms,
        "heartbeat_interval_ms": args.heartbeat_interval_ms,
        "max_poll_interval_ms": args.max_poll_interval_ms,
    }


def ranges(records: Iterable[Any]) -> list[list[Any]]:
    """[[topic, partition, first offset, last offset], ...] of a batch's records."""
    spans: dict[tuple[str, int], list[int]] = {}
    for r in records:
        span = spans.setdefault((r.topic, r.partition), [r.offset, r.offset])
        span[0], span[1] = min(span[0], r.offset), max(span[1], r.offset)
    return [[t, p, first, last] for (t, p), (first, last) in sorted(spans.items())]


def tp_list(tps: Iterable[Any]) -> list[list[Any]]:
    return sorted([tp.topic, tp.partition] for tp in tps)


# -- what the tests see of a member ----------------------------------------------------------


class Reporter:
    """Reports the member's rebalances: the listener's callbacks and the assignor's.

    The listener only hears of changes (cooperative: of partitions gained or lost), so the
    assignor's ``on_assignment``, which both clients call after every rebalance, reports the
    whole assignment too; and, on the leader, what its ``assign()`` computed for that
    rebalance (an assignment overtaken by a new join is never reported).
    """

    def __init__(self, name: str, consumer: Any, member: Callable[[], tuple[str, int]]) -> None:
        self.name = name
        self.consumer = consumer
        self.member = member
        self._computed: list[Any] = []

    def observe(self, assignor: Any) -> None:
        metadata, assign, on_assignment = (
            assignor.metadata,
            assignor.assign,
            assignor.on_assignment,
        )

        def joining(*args: Any) -> Any:
            self._computed.clear()  # a new join: what an earlier one computed never arrived
            return metadata(*args)

        def assigning(*args: Any) -> Any:
            result = assign(*args)
            self._computed[:] = [assignor.last_result]
            return result

        def assigned(assignment: Any, *args: Any) -> None:
            on_assignment(assignment, *args)
            self.rebalanced(assignment.partitions(), self._computed[0] if self._computed else None)
            self._computed.clear()

        assignor.metadata, assignor.assign, assignor.on_assignment = joining, assigning, assigned

    def rebalanced(self, partitions: Iterable[Any], result: Any) -> None:
        generation = self.report("rebalanced", partitions=tp_list(partitions))
        if result is None:
            return
        emit(
            self.name,
            "leader",
            generation=generation,
            strategy=result.strategy,
            protocol=result.protocol.value,
            lag=result.lag,
            seconds=result.seconds,
            error=result.error,
            prefetched=result.prefetched,
            assignment={m: tp_list(tps) for m, tps in result.assignment.partitions.items()},
            withheld=tp_list(result.withheld),
            owned={m.id: tp_list(m.owned) for m in result.group.members},
            consuming={m: tp_list(tps) for m, tps in result.consuming.items()},
            generations={m.id: m.generation for m in result.group.members},
        )

    def report(self, event: str, **fields: Any) -> int:
        """Emits ``event`` with the member's id and generation; returns the generation."""
        member_id, generation = self.member()
        emit(self.name, event, member_id=member_id, generation=generation, **fields)
        return generation

    def listener(self, base: type) -> Any:
        """A rebalance listener of the client's own class (each client checks it) reporting to
        this reporter."""
        reporter = self

        class Listener(base):  # type: ignore[misc, valid-type]
            def on_partitions_revoked(self, revoked: Any) -> None:
                reporter.revoked(revoked)

            def on_partitions_assigned(self, assigned: Any) -> None:
                reporter.assigned()

        return Listener()

    def revoked(self, revoked: Any) -> None:
        self.report(
            "revoked",
            partitions=tp_list(revoked),
            assignment=tp_list(self.consumer.assignment()),
        )

    def assigned(self) -> None:
        self.report("assigned", partitions=tp_list(self.consumer.assignment()))


# -- the two clients -------------------------------------------------------------------------


class KafkaPython:
    """kafka-python 3. ``poll()`` without a deadline: kafka-python 3.0.12 loses a rebalance
    whose leader is still assigning when the ``poll()`` that started it times out
    (docs/consumers.md); the watchdog thread ends the process instead of a bounded loop."""

    def __init__(self, args: argparse.Namespace) -> None:
        from kafka import KafkaConsumer
        from kafka.consumer.subscription_state import ConsumerRebalanceListener

        from lagassign.kafka.kafka_python import assignor

        self.assignor = assignor(args.strategy, protocol=args.protocol, **assignor_settings(args))
        self.consumer = KafkaConsumer(
            **consumer_settings(args),
            group_instance_id=args.instance_id,
            partition_assignment_strategy=[self.assignor],
        )
        self.listener_base = ConsumerRebalanceListener

    def member(self) -> tuple[str, int]:
        meta = self.consumer.group_metadata()
        return meta.member_id, meta.generation_id

    async def start(self) -> None:
        pass

    async def poll(self, max_records: int) -> dict[Any, list[Any]]:
        batches: dict[Any, list[Any]] = self.consumer.poll(
            timeout_ms=float("inf"), max_records=max_records
        )
        return batches

    async def commit(self) -> None:
        self.consumer.commit()

    async def close(self) -> None:
        self.consumer.close(autocommit=False)


class AioKafka:
    """aiokafka 0.14 (eager protocol only)."""

    def __init__(self, args: argparse.Namespace) -> None:
        from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener

        from lagassign.kafka.aiokafka import assignor

        if args.protocol not in (None, "eager"):
            raise SystemExit("aiokafka runs the eager protocol only")
        if args.instance_id is not None:
            raise SystemExit("--instance-id: kafka-python only")
        self.assignor = assignor(args.strategy, **assignor_settings(args))
        self.consumer = AIOKafkaConsumer(
            **consumer_settings(args),
            rebalance_timeout_ms=args.max_poll_interval_ms,
            partition_assignment_strategy=[self.assignor],
        )
        self.listener_base = ConsumerRebalanceListener

    def member(self) -> tuple[str, int]:
        # aiokafka has no public accessor for the member id and generation
        coordinator = self.consumer._coordinator
        return coordinator.member_id, coordinator.generation

    async def start(self) -> None:
        await self.consumer.start()

    async def poll(self, max_records: int) -> dict[Any, list[Any]]:
        batches: dict[Any, list[Any]] = await self.consumer.getmany(
            timeout_ms=200, max_records=max_records
        )
        return batches

    async def commit(self) -> None:
        await self.consumer.commit()

    async def close(self) -> None:
        await self.consumer.stop()


async def consume(args: argparse.Namespace, client: KafkaPython | AioKafka) -> None:
    name = args.name
    reporter = Reporter(name, client.consumer, client.member)
    reporter.observe(client.assignor)
    client.consumer.subscribe(
        args.topics.split(","), listener=reporter.listener(client.listener_base)
    )
    await client.start()
    emit(name, "started", client=args.client, pid=os.getpid())
    try:
        while True:
            batches = await client.poll(args.max_records)
            records = [r for batch in batches.values() for r in batch]
            if not records or not args.consume:
                continue
            emit(name, "consumed", records=ranges(records))
            if args.delay:
                await asyncio.sleep(args.delay)
            if args.commit:
                try:
                    await client.commit()
                    emit(name, "committed", records=ranges(records))
                except Exception as exc:  # a rebalance in between: the next owner re-reads
                    emit(name, "error", message=f"commit: {type(exc).__name__}: {exc}")
    finally:
        await client.close()


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING,
        stream=sys.stderr,
        format=f"%(asctime)s {args.name} %(levelname)s %(name)s: %(message)s",
    )
    for logger in args.debug:
        logging.getLogger(logger).setLevel(logging.DEBUG)
    start_watchdog(args.max_seconds)

    async def run() -> None:
        # aiokafka's consumer must be made inside the running event loop
        client = KafkaPython(args) if args.client == "kafka-python" else AioKafka(args)
        await consume(args, client)

    try:
        asyncio.run(run())
    except Exception as exc:
        emit(args.name, "error", message=f"{type(exc).__name__}: {exc}")
        raise


if __name__ == "__main__":
    main()
