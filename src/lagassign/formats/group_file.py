"""The group file: one consumer group as JSON.

::

    {"group": "g", "auto_offset_reset": "earliest",
     "topics": {"t0": {"partitions": [{"partition": 0, "lag": 100000},
                                      {"partition": 1, "begin": 0, "end": 900,
                                       "committed": null, "racks": ["a", "b"]}]},
                "t1": {"partitions": 3}},
     "members": [{"id": "C0", "topics": ["t0", "t1"], "instance_id": null, "rack": "a",
                  "owned": [["t0", 0]], "generation": 4}]}

``"partitions": N`` means partitions 0..N-1 with lag 0. A partition has a ``lag`` or offsets
(``begin``, ``end``, ``committed``), optional replica ``racks`` and rates ``rate_in`` /
``rate_out`` (messages per second). Only ``id`` and ``topics`` are required on a member; its
``capacity`` is the messages per second it can read (:func:`lagassign.rates.capacities`
estimates it when not given).
Unknown keys are errors, so a typo never silently changes a plan, and every value is within
:mod:`lagassign.formats.limits` (at most ``MAX_PARTITIONS`` partitions in all, counted before
any is made).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lagassign.formats.inputs import input_format
from lagassign.formats.json_reader import JsonReader, load_json
from lagassign.formats.limits import (
    MAX_GENERATION,
    MAX_OFFSET,
    MAX_PARTITION,
    MAX_PARTITIONS,
    MAX_RATE,
    shown,
)
from lagassign.lag_rules import AUTO_OFFSET_RESETS, DEFAULT_AUTO_OFFSET_RESET, known_reset
from lagassign.model import Group, Member, ModelError, Offsets, Partition, Topic, TopicPartition

_GROUP_KEYS = {"group", "auto_offset_reset", "topics", "members"}
_PARTITION_KEYS = {"partition", "lag", "begin", "end", "committed", "racks", "rate_in", "rate_out"}
_MEMBER_KEYS = {"id", "topics", "instance_id", "rack", "owned", "generation", "capacity"}


def load_group(path: str | Path) -> Group:
    """Read a group file. Raises :class:`InputError` naming the file and the key."""
    return parse_group(load_json(path), source=str(path))


@input_format("group", (".json",), "a group file (JSON)", fallback=True)
def read_group_file(path: str) -> list[Group]:
    """The group of a group file, as ``--input`` reads it (also any name no format says)."""
    return [load_group(path)]


def parse_group(data: Any, source: str = "<group>") -> Group:
    return GroupReader(source).group(data)


class GroupReader(JsonReader):
    """The group file's keys; formats that hold a group object (the scenario file) extend it."""

    def __init__(self, source: str) -> None:
        super().__init__(source)
        #: partitions of the group read so far, against MAX_PARTITIONS
        self.partitions_read = 0

    def count_partitions(self, n: int) -> None:
        """Counts ``n`` more partitions of the group, before any is made."""
        self.partitions_read += n
        if self.partitions_read > MAX_PARTITIONS:
            raise self.fail(
                f"{self.partitions_read:,} partitions in the group so far, more than the "
                f"{MAX_PARTITIONS:,} lagassign reads (formats/limits.py)"
            )

    def group(self, data: Any) -> Group:
        obj = self.expect(data, dict, "a JSON object")
        self.keys(obj, _GROUP_KEYS, {"topics", "members"})
        group_id = self.optional(obj, "group", str, "a string") or Path(self.source).stem
        reset = self.optional(obj, "auto_offset_reset", str, "a string")
        if reset is not None and not known_reset(reset):
            with self.at("auto_offset_reset"):
                raise self.fail(f"expected {AUTO_OFFSET_RESETS}, got {shown(reset)}")
        with self.at("topics"):
            topics_obj = self.expect(obj["topics"], dict, "an object of topics")
            topics = {}
            for name, spec in topics_obj.items():
                with self.at(name):
                    self.text(name)
                    topics[name] = self.topic(name, spec)
        with self.at("members"):
            members_list = self.expect(obj["members"], list, "a list of members")
            members = []
            for i, spec in enumerate(members_list):
                with self.at(i):
                    members.append(self.member(spec))
        try:
            return Group(group_id, topics, tuple(members), reset or DEFAULT_AUTO_OFFSET_RESET)
        except ModelError as e:
            raise self.fail(e.message, e.where) from None

    def topic(self, name: str, spec: Any) -> Topic:
        obj = self.expect(spec, dict, 'an object with "partitions"')
        self.keys(obj, {"partitions"}, {"partitions"})
        with self.at("partitions"):
            parts = self.expect(obj["partitions"], (int, list), "a count or a list of partitions")
            if isinstance(parts, int):
                if parts < 0:
                    raise self.fail(f"partition count must not be negative, got {parts}")
                self.count_partitions(parts)
                return Topic.of(name, parts)
            self.count_partitions(len(parts))
            partitions = []
            for i, p in enumerate(parts):
                with self.at(i):
                    partitions.append(self.partition(name, p))
        # Outside "partitions": the model names the place as partitions[i] itself.
        return Topic(name, tuple(partitions))

    def partition(self, topic: str, spec: Any) -> Partition:
        obj = self.expect(spec, dict, "a partition object")
        self.keys(obj, _PARTITION_KEYS, {"partition"})
        with self.at("partition"):
            number = self.within(self.expect(obj["partition"], int, "an integer"), MAX_PARTITION)
        lag = self.bounded(obj, "lag", int, "an integer", MAX_OFFSET)
        offsets = None
        if any(k in obj for k in ("begin", "end", "committed")):
            for key in ("begin", "end"):
                if key not in obj:
                    raise self.fail(f"missing key {key!r} (offsets need begin and end)")
            offsets = self._offsets(obj)
        racks = self.optional(obj, "racks", list, "a list of rack ids") or []
        with self.at("racks"):
            for i, rack in enumerate(racks):
                with self.at(i):
                    self.expect(rack, str, "a string")
        rates = {
            k: self.bounded(obj, k, (int, float), "a number", MAX_RATE)
            for k in ("rate_in", "rate_out")
        }
        return Partition(topic, number, lag=lag, offsets=offsets, racks=frozenset(racks), **rates)

    def _offsets(self, obj: dict[str, Any]) -> Offsets:
        begin = self.bounded(obj, "begin", int, "an integer", MAX_OFFSET)
        end = self.bounded(obj, "end", int, "an integer", MAX_OFFSET)
        committed = self.bounded(obj, "committed", int, "an integer or null", MAX_OFFSET)
        return Offsets(begin, end, committed)

    def member(self, spec: Any) -> Member:
        obj = self.expect(spec, dict, "a member object")
        self.keys(obj, _MEMBER_KEYS, {"id", "topics"})
        with self.at("id"):
            member_id = self.expect(obj["id"], str, "a string")
        with self.at("topics"):
            topics = self.expect(obj["topics"], list, "a list of topic names")
            for i, t in enumerate(topics):
                with self.at(i):
                    self.expect(t, str, "a topic name")
        owned = []
        with self.at("owned"):
            for i, pair in enumerate(self.expect(obj.get("owned") or [], list, "a list")):
                with self.at(i):
                    ok = (
                        isinstance(pair, list)
                        and len(pair) == 2
                        and isinstance(pair[0], str)
                        and isinstance(pair[1], int)
                        and not isinstance(pair[1], bool)
                    )
                    if not ok:
                        raise self.fail(f'expected ["topic", partition], got {shown(pair)}')
                    self.text(pair[0])
                    owned.append(TopicPartition(pair[0], pair[1]))
        return Member(
            id=member_id,
            topics=frozenset(topics),
            instance_id=self.optional(obj, "instance_id", str, "a string or null"),
            rack=self.optional(obj, "rack", str, "a string or null"),
            owned=tuple(owned),
            generation=self.bounded(obj, "generation", int, "an integer or null", MAX_GENERATION),
            capacity=self.bounded(
                obj, "capacity", (int, float), "a number (messages per second)", MAX_RATE
            ),
        )
