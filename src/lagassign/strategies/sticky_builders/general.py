"""The sticky assignors' general builder: members subscribe to different topics.

Kafka's ``AbstractStickyAssignor.GeneralAssignmentBuilder``: free partitions to the least loaded
subscriber, then moves until no move improves the balance.
"""

from __future__ import annotations

import bisect
import heapq
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import groupby
from operator import itemgetter
from typing import NamedTuple

from lagassign.java_ordering import TopicPartitionHashSet, java_order, java_string_hash
from lagassign.model import TopicPartition
from lagassign.strategies.sticky_builders.subscriptions import (
    Key,
    Owned,
    Racks,
    Subscriptions,
    member_generation,
)


class _Previous(NamedTuple):
    member: str
    generation: int


def _previous_owners(subs: Subscriptions, max_generation: int) -> dict[Key, _Previous]:
    """The newest claim on each partition from members behind the group's newest generation.

    The general path moves a partition back to such a member when that improves the balance.
    """
    previous: dict[Key, _Previous] = {}
    for mid in subs.order:
        generation = member_generation(subs.members[mid])
        if generation >= max_generation:
            continue
        for tp in subs.claims[mid]:
            key = (tp.topic, tp.partition)
            known = previous.get(key)
            if known is None or generation > known.generation:
                previous[key] = _Previous(mid, generation)
    return previous


class _Movements:
    """Where partitions moved during rebalancing, to undo a move rather than make another.

    If a partition is to move from A to B while another partition of the same topic already
    moved from B to A, that earlier move is reverted instead.
    """

    def __init__(self, topics: Iterable[str]) -> None:
        self._topic_hash = {t: java_string_hash(t) for t in topics}
        self._moved: dict[Key, tuple[str, str]] = {}
        self._by_topic: dict[str, dict[tuple[str, str], TopicPartitionHashSet]] = {}

    def partition_to_move(self, key: Key, old: str, new: str) -> Key:
        moves = self._by_topic.get(key[0])
        if moves is None:
            return key
        earlier = self._moved.get(key)
        source = old if earlier is None else earlier[0]
        back = moves.get((new, source))
        return key if back is None else back.first()

    def record(self, key: Key, old: str, new: str) -> None:
        earlier = self._moved.pop(key, None)
        if earlier is None:
            self._add(key, (old, new))
            return
        self._remove(key, earlier)
        if earlier[0] != new:
            self._add(key, (earlier[0], new))

    def _add(self, key: Key, pair: tuple[str, str]) -> None:
        self._moved[key] = pair
        moves = self._by_topic.setdefault(key[0], {})
        moved = moves.get(pair)
        if moved is None:
            moved = moves[pair] = TopicPartitionHashSet(self._topic_hash)
        moved.add(key)

    def _remove(self, key: Key, pair: tuple[str, str]) -> None:
        moves = self._by_topic[key[0]]
        moves[pair].discard(key)
        if not moves[pair]:
            del moves[pair]
        if not moves:
            del self._by_topic[key[0]]


class _LoadOrder:
    """Members ordered by (number of partitions, id) like Kafka's ``TreeSet`` of consumers."""

    def __init__(self, counts: Mapping[str, int], keys: Mapping[str, bytes]) -> None:
        self._key = keys
        self._entries = sorted((n, keys[mid], mid) for mid, n in counts.items())

    def __iter__(self) -> Iterator[str]:
        return (mid for _, _, mid in self._entries)

    def change(self, mid: str, old: int, new: int) -> None:
        key = self._key[mid]
        del self._entries[bisect.bisect_left(self._entries, (old, key, mid))]
        bisect.insort(self._entries, (new, key, mid))

    def remove(self, mid: str, count: int) -> None:
        del self._entries[bisect.bisect_left(self._entries, (count, self._key[mid], mid))]


class _LoadRange:
    """How many members hold each number of partitions, for the lowest and highest load."""

    def __init__(self, counts: Iterable[int]) -> None:
        self._members_at = Counter(counts)

    def change(self, old: int, new: int) -> None:
        self.remove(old)
        self._members_at[new] += 1

    def remove(self, count: int) -> None:
        self._members_at[count] -= 1
        if not self._members_at[count]:
            del self._members_at[count]

    def lowest(self) -> int:
        return min(self._members_at)

    def highest(self) -> int:
        return max(self._members_at)


# Above this many distinct subscriber sets, a load change would feed too many heaps; the
# lightest subscriber is then found by walking the load order, as Kafka does.
_MAX_SUBSCRIBER_SETS = 16


class _SubscriberHeaps:
    """The least loaded member of a subscriber set, optionally among those on given racks.

    One lazy min-heap of (load, id) per subscriber set and member rack; a load change pushes a
    fresh entry and outdated ones are dropped when they surface.
    """

    def __init__(
        self,
        sets: Sequence[tuple[str, ...]],
        member_rack: Mapping[str, str],
        keys: Mapping[str, bytes],
        load: Callable[[str], int],
    ) -> None:
        self._load = load
        self._key = keys
        self._heaps: list[dict[str | None, list[tuple[int, bytes, str]]]] = []
        self._containing: dict[str, list[list[tuple[int, bytes, str]]]] = {}
        for members in sets:
            by_rack: dict[str | None, list[tuple[int, bytes, str]]] = {}
            self._heaps.append(by_rack)
            for mid in members:
                heap = by_rack.setdefault(member_rack.get(mid), [])
                heap.append((load(mid), keys[mid], mid))
                self._containing.setdefault(mid, []).append(heap)
        for by_rack in self._heaps:
            for heap in by_rack.values():
                heapq.heapify(heap)

    def changed(self, mid: str) -> None:
        entry = (self._load(mid), self._key[mid], mid)
        for heap in self._containing.get(mid, ()):
            heapq.heappush(heap, entry)

    def lightest(self, subscriber_set: int, racks: frozenset[str] | None) -> str | None:
        """The lightest member of set number ``subscriber_set`` (an index into the sets given).

        ``racks`` None: any member; else members without a rack or on one of ``racks``.
        """
        best: tuple[int, bytes, str] | None = None
        for rack, heap in self._heaps[subscriber_set].items():
            if racks is not None and rack is not None and rack not in racks:
                continue
            while heap and heap[0][0] != self._load(heap[0][2]):
                heapq.heappop(heap)
            if heap and (best is None or heap[0] < best):
                best = heap[0]
        return None if best is None else best[2]


class GeneralBuilder:
    """Balance-seeking assignment for groups whose members subscribe to different topics.

    1. Keep every owned partition whose topic the member still subscribes to (and, when racks
       are aligned, that has a replica on the member's rack).
    2. Give each free partition, topics with the fewest subscribers first, to its least loaded
       subscriber (rack-aligned subscribers in a first pass).
    3. While some subscriber of a topic holds two or more partitions fewer than the member
       holding a partition of it, move that partition: back to its owner of an older generation
       if that one is lighter, else to the least loaded subscriber. Keep the moves only if they
       improve the balance score (the sum of load differences over all member pairs).
    """

    def __init__(self, subs: Subscriptions, racks: Racks, owned: Owned) -> None:
        self.subs = subs
        self.racks = racks
        self.owned = owned
        self.topics_of = {
            mid: frozenset(t for t in m.topics if t in subs.topics)
            for mid, m in subs.members.items()
        }
        # Topics with the same subscribers share one entry of ``subscriber_sets``; a small
        # number identifies it, as hashing the tuple of members each time would be slow.
        numbered: dict[tuple[str, ...], int] = {}
        self.potential: dict[str, tuple[str, ...]] = {}
        self.set_of: dict[str, int] = {}
        for topic in subs.topics:
            subscribers = tuple(mid for mid in subs.order if topic in self.topics_of[mid])
            self.set_of[topic] = numbered.setdefault(subscribers, len(numbered))
            self.potential[topic] = subscribers
        self.subscriber_sets = list(numbered)
        self.current: dict[str, dict[Key, None]] = {
            mid: dict.fromkeys(claims) for mid, claims in owned.by_member.items()
        }
        self.owner = {key: mid for mid, claims in self.current.items() for key in claims}
        self.previous = _previous_owners(subs, owned.max_generation)
        self.capacity = {
            mid: sum(len(subs.topics[t]) for t in topics) for mid, topics in self.topics_of.items()
        }
        order = sorted(subs.topics, key=lambda t: (len(self.potential[t]), java_order(t)))
        self.all_partitions = [(t, n) for t in order for n in subs.topics[t]]
        self.movements = _Movements(subs.topics)
        self.keys = keys = {mid: java_order(mid) for mid in subs.order}
        loads = {mid: len(claims) for mid, claims in self.current.items()}
        self.load_range = _LoadRange(loads.values())
        # Either heaps per subscriber set, or Kafka's walk through all members in load order.
        self.heaps: _SubscriberHeaps | None = None
        self.load: _LoadOrder | None = None
        if len(self.subscriber_sets) <= _MAX_SUBSCRIBER_SETS:
            self.heaps = _SubscriberHeaps(
                self.subscriber_sets, racks.member_rack, keys, self._count
            )
        else:
            self.load = _LoadOrder(loads, keys)
        self.participating: set[str] = set(self.current)
        self.holders: dict[str, Counter[str]] = {}
        self._version = 0
        self._balanced_at: tuple[int, bool] = (-1, False)
        self._lightest_at: dict[int, str] = {}

    def build(self) -> dict[str, list[TopicPartition]]:
        revocation_required, kept = self._drop_invalid_claims()
        unassigned = [key for key in self.all_partitions if key not in kept]
        self._balance(unassigned, revocation_required)
        # Hand back the members' own TopicPartition objects where there are some.
        claimed = {k: tp for claims in self.owned.by_member.values() for k, tp in claims.items()}
        return {
            mid: [claimed[k] if k in claimed else TopicPartition(k[0], k[1]) for k in keys]
            for mid, keys in self.current.items()
        }

    def _drop_invalid_claims(self) -> tuple[bool, set[Key]]:
        """Drop claims on unsubscribed topics or off-rack partitions.

        Returns whether any was dropped (then some member must revoke) and the claims kept.
        """
        dropped = False
        kept: set[Key] = set()
        racks = self.racks
        for mid, claims in self.current.items():
            subscribed = self.subs.members[mid].topics
            invalid = [
                k for k in claims
                if k[0] not in subscribed or (racks.enabled and racks.mismatch(mid, *k))
            ]
            # Kafka leaves a dropped claim in its partition -> owner map until the partition
            # is reassigned; nothing reads it before that, so neither do we.
            for key in invalid:
                del claims[key]
            if invalid:
                self._load_changed(mid, len(claims) + len(invalid))
                dropped = True
            kept.update(claims)
        return dropped, kept

    def _count(self, mid: str) -> int:
        return len(self.current[mid])

    def _load_changed(self, mid: str, old: int) -> None:
        new = self._count(mid)
        self.load_range.change(old, new)
        if self.heaps is not None:
            self.heaps.changed(mid)
        else:
            assert self.load is not None
            self.load.change(mid, old, new)
        self._version += 1
        self._lightest_at.clear()

    def _lightest(self, topic: str, on_rack_of: Key | None = None) -> str | None:
        """The first subscriber of ``topic`` in load order; if ``on_rack_of`` is given, the
        first that is rackless or on a rack of that partition's replicas."""
        if self.heaps is not None:
            racks = None if on_rack_of is None else self.racks.of(*on_rack_of)
            return self.heaps.lightest(self.set_of[topic], racks)
        assert self.load is not None
        for mid in self.load:
            if topic in self.topics_of[mid] and not (
                on_rack_of is not None and self.racks.mismatch(mid, *on_rack_of)
            ):
                return mid
        return None

    def _lightest_subscriber(self, topic: str) -> str:
        """Like :meth:`_lightest` without racks, for a topic with subscribers, until a move."""
        subscriber_set = self.set_of[topic]
        cached = self._lightest_at.get(subscriber_set)
        if cached is None:
            found = self._lightest(topic)
            assert found is not None
            cached = self._lightest_at[subscriber_set] = found
        return cached

    # -- step 2

    def _assign_free(self, unassigned: list[Key]) -> None:
        rest = unassigned
        if self.racks.enabled:
            rest = [key for key in unassigned if not self._assign_on_rack(key)]
        before = {mid: self._count(mid) for mid in self.current}
        for topic, keys in groupby(rest, key=itemgetter(0)):
            self._assign_to_lightest(topic, list(keys))
        # The dealing reads loads straight from the claims; the load indexes catch up once.
        for mid, old in before.items():
            if self._count(mid) != old:
                self._load_changed(mid, old)

    def _assign_on_rack(self, key: Key) -> bool:
        """Give the partition to its least loaded subscriber on a rack of its replicas."""
        mid = self._lightest(key[0], key)
        if mid is None:
            return False
        self._take(mid, (key,))
        self._load_changed(mid, self._count(mid) - 1)
        return True

    def _assign_to_lightest(self, topic: str, keys: list[Key]) -> None:
        """Give each partition in turn to the least loaded subscriber (ties: smallest id).

        That deals the partitions level by level: at load level L every subscriber holding at
        most L partitions gets one, in id order. Levels without a newcomer are dealt as slices.
        The load indexes are left for the caller to update.
        """
        current, keys_of = self.current, self.keys
        loads = [(len(current[mid]), keys_of[mid], mid) for mid in self.potential[topic]]
        # Only the len(keys) lightest members can get any of the partitions.
        lightest = heapq.nsmallest(len(keys), loads) if len(keys) < len(loads) else sorted(loads)
        by_load = [mid for _, _, mid in lightest]
        before = {mid: n for n, _, mid in lightest}
        dealing: list[tuple[bytes, str]] = []
        joined, done, level = 0, 0, before[by_load[0]]
        while done < len(keys):
            while joined < len(by_load) and before[by_load[joined]] <= level:
                bisect.insort(dealing, (self.keys[by_load[joined]], by_load[joined]))
                joined += 1
            n, left = len(dealing), len(keys) - done
            if left < n:
                # the last, partial level: the first members in id order get one more each
                for i, (_, mid) in enumerate(dealing[:left]):
                    self._take(mid, keys[done + i:done + i + 1])
                break
            levels = left // n
            if joined < len(by_load):
                levels = min(levels, before[by_load[joined]] - level)
            end = done + levels * n
            for i, (_, mid) in enumerate(dealing):
                self._take(mid, keys[done + i:end:n])
            done, level = end, level + levels

    def _take(self, mid: str, keys: Sequence[Key]) -> None:
        self.current[mid].update(dict.fromkeys(keys))
        self.owner.update(dict.fromkeys(keys, mid))

    # -- step 3

    def _balance(self, unassigned: list[Key], revocation_required: bool) -> None:
        initializing = self.load_range.highest() == 0
        self._assign_free(unassigned)

        movable = [key for key in self.all_partitions if len(self.potential[key[0]]) >= 2]
        movable_free = [key for key in unassigned if len(self.potential[key[0]]) >= 2]
        fixed = {mid: self.current.pop(mid) for mid in self.subs.order if not self._can_move(mid)}
        for mid, claims in fixed.items():
            self.load_range.remove(len(claims))
            if self.load is not None:
                self.load.remove(mid, len(claims))
            self.participating.discard(mid)
        self.holders = {t: Counter() for t, ms in self.potential.items() if len(ms) >= 2}
        for mid, claims in self.current.items():
            for topic, _ in claims:
                if topic in self.holders:
                    self.holders[topic][mid] += 1

        before = {mid: dict(claims) for mid, claims in self.current.items()}
        owner_before = dict(self.owner)
        if not revocation_required:
            self._reassign(movable_free)
        moved = self._reassign(movable)
        if not initializing and moved and _balance_score(self.current) >= _balance_score(before):
            self.current = before
            self.owner = owner_before
        self.current.update(fixed)

    def _can_move(self, mid: str) -> bool:
        """Whether a member can gain partitions or hold one another member could take."""
        claims = self.current[mid]
        if len(claims) < self.capacity[mid]:
            return True
        return any(len(self.potential[topic]) >= 2 for topic, _ in claims)

    def _reassign(self, partitions: list[Key]) -> bool:
        """Kafka's ``performReassignments``: True if any partition moved."""
        moved_any = False
        moved = True
        while moved:
            moved = False
            for key in partitions:
                if self._is_balanced():
                    break
                count = self._count(self.owner[key])
                previous = self.previous.get(key)
                if (
                    previous is not None
                    and self._may_take(previous.member, key)
                    and count > self._count(previous.member) + 1
                ):
                    self._move(key, previous.member)
                    moved = moved_any = True
                    continue
                lightest = self._lightest_subscriber(key[0])
                if count > self._count(lightest) + 1:
                    self._move(key, lightest)
                    moved = moved_any = True
        return moved_any

    def _may_take(self, mid: str, key: Key) -> bool:
        # Kafka moves a partition back to its older-generation owner without checking that the
        # owner still subscribes to its topic; we only do it when that gives a valid assignment.
        return mid in self.participating and key[0] in self.topics_of[mid]

    def _move(self, key: Key, new: str) -> None:
        actual = self.movements.partition_to_move(key, self.owner[key], new)
        old = self.owner[actual]
        self.movements.record(actual, old, new)
        del self.current[old][actual]
        self.current[new][actual] = None
        self.owner[actual] = new
        self._load_changed(old, self._count(old) + 1)
        self._load_changed(new, self._count(new) - 1)
        holders = self.holders.get(actual[0])
        if holders is not None:
            holders[old] -= 1
            if not holders[old]:
                del holders[old]
            holders[new] += 1

    def _is_balanced(self) -> bool:
        """Kafka's ``isBalanced``, cached until the next load change.

        Balanced if loads differ by at most one, or no member below its capacity could take a
        partition of one of its topics from a member holding two or more partitions more.
        """
        version, balanced = self._balanced_at
        if version != self._version:
            balanced = self._compute_balanced()
            self._balanced_at = (self._version, balanced)
        return balanced

    def _compute_balanced(self) -> bool:
        if self.load_range.lowest() >= self.load_range.highest() - 1:
            return True
        # the two heaviest holders of each topic, so "heaviest other than me" is one lookup
        heaviest: dict[str, tuple[int, str | None, int]] = {}
        for topic, holders in self.holders.items():
            first, first_holder, second = -1, None, -1
            for mid in holders:
                n = self._count(mid)
                if n > first:
                    first, first_holder, second = n, mid, first
                elif n > second:
                    second = n
            heaviest[topic] = (first, first_holder, second)
        for mid in self.current:
            count = self._count(mid)
            if count == self.capacity[mid]:
                continue
            for topic in self.topics_of[mid]:
                top = heaviest.get(topic)
                if top is None:
                    continue
                other = top[0] if top[1] != mid else top[2]
                if count + 1 < other:
                    return False
        return True


def _balance_score(assignment: Mapping[str, Mapping[Key, None]]) -> int:
    """Sum of |load difference| over all member pairs (0 when perfectly even)."""
    loads = sorted(len(claims) for claims in assignment.values())
    n = len(loads)
    return sum(load * (2 * i - n + 1) for i, load in enumerate(loads))
