"""The scenario file: what ``lagassign simulate --scenario`` reads (see docs/simulate.md).

::

    {"name": "black friday", "group": "orders-app.json", "throughput": 1000,
     "member_throughput": {"c2": 600}, "rates": {"orders": [400, 150, 150]},
     "events": [{"time": 30, "join": {"id": "c3", "topics": ["orders"], "throughput": 800}},
                {"time": 90, "leave": "c1"}],
     "dt": 0.5, "horizon": 900, "rebalance_pause": 8, "drain_threshold": 0.5}

``group`` is a group file object or a path to one. Unknown keys are errors, as in the group
file, and every error names its key.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from lagassign.formats.group_file import GroupReader, load_group
from lagassign.formats.json_reader import load_json
from lagassign.formats.limits import MAX_PARTITION_STEPS, MAX_RATE
from lagassign.model import Group, Member, ModelError, TopicPartition
from lagassign.simulate.scenario import (
    DEFAULT_DRAIN_THRESHOLD,
    DEFAULT_DT,
    DEFAULT_DURATION,
    DEFAULT_REBALANCE_PAUSE,
    DEFAULT_THROUGHPUT,
    Event,
    Join,
    Leave,
    Scenario,
)

_SCENARIO_KEYS = {
    "name",
    "group",
    "throughput",
    "member_throughput",
    "rates",
    "events",
    "dt",
    "horizon",
    "rebalance_pause",
    "drain_threshold",
}
_EVENT_KEYS = {"time", "join", "leave"}
_JOIN_KEYS = {"id", "topics", "throughput", "rack", "instance_id"}


def load_scenario(path: str | Path) -> Scenario:
    """Read a scenario file; a group given as a path is relative to the file. Raises
    :class:`InputError` naming the file and the key."""
    file = Path(path)
    return parse_scenario(load_json(file), str(file), groups_in=file.parent)


def parse_scenario(
    data: Any, source: str = "<scenario>", groups_in: Path | None = None
) -> Scenario:
    """A scenario from its JSON document (see docs/simulate.md).

    ``group`` is a group file object, or the path of a group file relative to ``groups_in``
    (the scenario file's folder; None: a path is an error). Raises :class:`InputError` naming
    the key.
    """
    return _ScenarioReader(source, groups_in).scenario(data)


class _ScenarioReader(GroupReader):
    """The group file's reader, extended to the scenario's keys; errors in the same style."""

    def __init__(self, source: str, groups_in: Path | None) -> None:
        super().__init__(source)
        self.groups_in = groups_in

    def number(
        self, obj: dict[str, Any], key: str, default: float, largest: float = math.inf
    ) -> float:
        value = self.bounded(obj, key, (int, float), "a number", largest)
        return default if value is None else float(value)

    def scenario(self, data: Any) -> Scenario:
        obj = self.expect(data, dict, "a JSON object")
        self.keys(obj, _SCENARIO_KEYS, {"group"})
        name = self.optional(obj, "name", str, "a string") or Path(self.source).stem
        with self.at("group"):
            spec = self.expect(obj["group"], (dict, str), "a group object or a group file path")
            if isinstance(spec, str):
                if self.groups_in is None:
                    raise self.fail("a group file path is not supported here")
                group = load_group(self.groups_in / spec)
            else:
                group = self.group(spec)
        throughput = self.number(obj, "throughput", DEFAULT_THROUGHPUT, MAX_RATE)
        member_throughput: dict[str, float] = {}
        with self.at("member_throughput"):
            spec = self.expect(obj.get("member_throughput") or {}, dict, "an object")
            ids = {m.id for m in group.members}
            for mid, value in spec.items():
                with self.at(mid):
                    if mid not in ids:
                        raise self.fail(
                            "not a member of the group (a joining member's throughput goes in "
                            "its join event)"
                        )
                    rate = self.expect(value, (int, float), "a number")
                    member_throughput[mid] = float(self.within(rate, MAX_RATE))
        rates = self.rates(obj.get("rates") or {}, group)
        events: list[Event] = []
        with self.at("events"):
            for i, spec in enumerate(self.expect(obj.get("events") or [], list, "a list")):
                with self.at(i):
                    events.append(self.event(spec, group, member_throughput))
        try:
            scenario = Scenario(
                group=group,
                throughput=throughput,
                member_throughput=member_throughput,
                rates=rates,
                events=tuple(events),
                dt=self.number(obj, "dt", DEFAULT_DT),
                horizon=self.number(obj, "horizon", DEFAULT_DURATION),
                rebalance_pause=self.number(obj, "rebalance_pause", DEFAULT_REBALANCE_PAUSE),
                drain_threshold=self.number(obj, "drain_threshold", DEFAULT_DRAIN_THRESHOLD),
                name=name,
            )
        except ModelError as e:
            raise self.fail(e.message, e.where) from None
        work = scenario.steps * len(scenario.partitions())
        if work > MAX_PARTITION_STEPS:
            with self.at("horizon"):
                raise self.fail(
                    f"horizon ÷ dt × partitions is {work:,} partition-steps, more than the "
                    f"{MAX_PARTITION_STEPS:,} lagassign simulates (formats/limits.py): a larger "
                    "dt or a shorter horizon"
                )
        return scenario

    def rates(self, spec: Any, group: Group) -> dict[TopicPartition, float]:
        rates: dict[TopicPartition, float] = {}
        with self.at("rates"):
            obj = self.expect(spec, dict, "an object of topics")
            for topic, value in obj.items():
                with self.at(topic):
                    if topic not in group.topics:
                        raise self.fail("unknown topic")
                    numbers = sorted(p.partition for p in group.topics[topic].partitions)
                    given = self.expect(value, (int, float, list), "a number or a list of numbers")
                    if not isinstance(given, list):
                        given = [given] * len(numbers)
                    elif len(given) != len(numbers):
                        raise self.fail(f"{len(given)} rates for {len(numbers)} partitions")
                    for n, rate in zip(numbers, given, strict=True):
                        with self.at(n):
                            self.within(self.expect(rate, (int, float), "a number"), MAX_RATE)
                        rates[TopicPartition(topic, n)] = float(rate)
        return rates

    def event(self, spec: Any, group: Group, member_throughput: dict[str, float]) -> Event:
        obj = self.expect(spec, dict, "an event object")
        self.keys(obj, _EVENT_KEYS, {"time"})
        with self.at("time"):
            time = float(self.expect(obj["time"], (int, float), "a number of seconds"))
        if ("join" in obj) == ("leave" in obj):
            raise self.fail('expected exactly one of "join" and "leave"')
        if "leave" in obj:
            with self.at("leave"):
                return Leave(time, self.expect(obj["leave"], str, "a member id"))
        with self.at("join"):
            join = self.expect(obj["join"], dict, "a member object")
            self.keys(join, _JOIN_KEYS, {"id"})
            with self.at("id"):
                member_id = self.expect(join["id"], str, "a string")
            topics: list[str] = sorted(group.topics)
            if "topics" in join:
                with self.at("topics"):
                    topics = self.expect(join["topics"], list, "a list of topic names")
                    for i, t in enumerate(topics):
                        with self.at(i):
                            self.expect(t, str, "a topic name")
            rate = self.bounded(join, "throughput", (int, float), "a number", MAX_RATE)
            if rate is not None:
                if member_id in member_throughput:
                    with self.at("throughput"):
                        raise self.fail(f"{member_id!r} has a throughput already")
                member_throughput[member_id] = float(rate)
            member = Member(
                member_id,
                frozenset(topics),
                instance_id=self.optional(join, "instance_id", str, "a string or null"),
                rack=self.optional(join, "rack", str, "a string or null"),
            )
        return Join(time, member)
