"""The sticky assignors' constrained builder: every member subscribes to the same topics.

Kafka's ``AbstractStickyAssignor.ConstrainedAssignmentBuilder``: quotas, linear time.
"""

from __future__ import annotations

from collections import deque
from itertools import repeat

from lagassign.java_ordering import java_order
from lagassign.model import TopicPartition
from lagassign.strategies.sticky_builders.subscriptions import (
    Key,
    Owned,
    Racks,
    Subscriptions,
    key_of,
)


class ConstrainedBuilder:
    """Quota-based assignment for groups whose members all subscribe to the same topics.

    With P partitions and N members every member gets ``P // N`` partitions and ``P % N`` of
    them one more. Members first keep owned partitions up to those quotas (rack-aligned ones
    only, lowest partition numbers first); the rest are handed out round-robin, rack-aligned
    where possible. Partitions that were owned by another member, or contested, are recorded as
    transferring ownership for the cooperative protocol.
    """

    def __init__(self, subs: Subscriptions, racks: Racks, owned: Owned) -> None:
        self.subs = subs
        self.racks = racks
        self.owned = owned
        total = sum(len(ns) for ns in subs.topics.values())
        self.min_quota, self.expected_over_min = divmod(total, len(subs.order))
        self.max_quota = self.min_quota + (1 if self.expected_over_min else 0)
        self.over_min = 0
        self.assignment: dict[str, list[TopicPartition]] = {mid: [] for mid in subs.order}
        self.kept: dict[str, int] = {}
        self.under_min: list[str] = []
        self.at_min: list[str] = []
        self.given_up: dict[Key, str] = {}
        self.transferring: dict[TopicPartition, str] = {}
        self._taken: dict[str, set[int]] = {t: set() for t in subs.topics}

    def build(self) -> dict[str, list[TopicPartition]]:
        self._keep_owned()
        unassigned = self._unassigned()
        self.under_min.sort(key=java_order)
        self.at_min.sort(key=java_order)
        unassigned = self.racks.by_rack_members(unassigned)
        if self.racks.enabled:
            unassigned = self._fill_on_racks(unassigned)
        self._fill_round_robin(unassigned)
        self._check_filled()
        self._find_transferring()
        return self.assignment

    def _keep_owned(self) -> None:
        rank = {t: i for i, t in enumerate(self.subs.topic_order)}
        width = len(rank)
        contested = self.owned.contested
        for mid in self.subs.map_order:
            claims = self.owned.by_member[mid]
            if self.racks.enabled:
                kept = []
                for key, tp in claims.items():
                    if self.racks.mismatch(mid, tp.topic, tp.partition):
                        self.given_up[key] = mid
                    else:
                        kept.append(tp)
            else:
                kept = list(claims.values())
            # Lowest partition numbers first, across topics, so a member that must give some
            # up keeps a spread over its topics rather than whole topics.
            kept.sort(key=lambda tp: tp.partition * width + rank[tp.topic])
            if contested:
                kept = [tp for tp in kept if key_of(tp) not in contested]
            self._keep(mid, kept)

    def _keep(self, mid: str, kept: list[TopicPartition]) -> None:
        if len(kept) < self.min_quota:
            quota = len(kept)
            self.under_min.append(mid)
        elif len(kept) >= self.max_quota and self.over_min < self.expected_over_min:
            quota = self.max_quota
            self.over_min += 1
            if self.over_min == self.expected_over_min:
                self.at_min.clear()
        else:
            quota = self.min_quota
            if self.over_min < self.expected_over_min:
                self.at_min.append(mid)
        self.assignment[mid].extend(kept[:quota])
        self.kept[mid] = quota
        for tp in kept[:quota]:
            self._taken[tp.topic].add(tp.partition)
        for tp in kept[quota:]:
            self.given_up[key_of(tp)] = mid

    def _unassigned(self) -> list[TopicPartition]:
        result: list[TopicPartition] = []
        for topic in self.subs.topic_order:
            taken = self._taken[topic]
            numbers = self.subs.topics[topic]
            free = [n for n in numbers if n not in taken] if taken else numbers
            result.extend(map(TopicPartition, repeat(topic), free))
        return result

    def _fill_on_racks(self, unassigned: list[TopicPartition]) -> list[TopicPartition]:
        """Hand out partitions to members on their racks, within the quotas; returns the rest."""
        under, at_min, racks = self.under_min, self.at_min, self.racks
        rest: list[TopicPartition] = []
        start = 0
        for tp in unassigned:
            mid: str | None = None
            index = racks.next_on_rack(tp, under, start)
            if index >= 0:
                mid = under[index]
                count = len(self.assignment[mid]) + 1
                if count >= self.min_quota:
                    del under[index]
                    if count < self.max_quota and self.over_min < self.expected_over_min:
                        at_min.append(mid)
                else:
                    index += 1
                start = index % len(under) if under else 0
            elif at_min:
                index = racks.next_on_rack(tp, at_min, 0)
                if index >= 0:
                    mid = at_min[index]
                    if len(self.assignment[mid]) + 1 == self.max_quota:
                        del at_min[index]
                        self.over_min += 1
                        if self.over_min == self.expected_over_min:
                            at_min.clear()
            if mid is None:
                rest.append(tp)
            else:
                self.assignment[mid].append(tp)
        return rest

    def _fill_round_robin(self, unassigned: list[TopicPartition]) -> None:
        """Members under the minimum quota in turn, then one more each for members at it.

        A member reaching the minimum quota leaves the turn and queues for one more partition.
        Whole turns in which nobody leaves are handed out as slices.
        """
        under, assignment, min_quota = self.under_min, self.assignment, self.min_quota
        at_min = deque(self.at_min)
        done, total = 0, len(unassigned)
        while under:
            n = len(under)
            turns = min(min(min_quota - len(assignment[mid]) for mid in under), (total - done) // n)
            if turns == 0:
                break
            end = done + turns * n
            for i, mid in enumerate(under):
                assignment[mid].extend(unassigned[done + i:end:n])
            done = end
            at_min.extend(mid for mid in under if len(assignment[mid]) == min_quota)
            under[:] = [mid for mid in under if len(assignment[mid]) < min_quota]
        # What is left does not make a whole turn: one partition at a time, as Kafka does.
        cursor = 0
        for tp in unassigned[done:]:
            if cursor < len(under):
                mid = under[cursor]
                cursor += 1
            elif under:
                mid = under[0]
                cursor = 1
            elif at_min:
                mid = at_min.popleft()
            else:
                raise RuntimeError("sticky assignor: partitions left but every member is full")
            assigned = assignment[mid]
            assigned.append(tp)
            if len(assigned) == min_quota:
                cursor -= 1
                del under[cursor]
                at_min.append(mid)
            elif len(assigned) == self.max_quota:
                self.over_min += 1

    def _check_filled(self) -> None:
        if not self.under_min:
            return
        if self.over_min != self.expected_over_min:
            raise RuntimeError("sticky assignor: members under quota but no partitions left")
        for mid in self.under_min:
            if len(self.assignment[mid]) != self.min_quota:
                raise RuntimeError(f"sticky assignor: member {mid!r} is under its quota")

    def _find_transferring(self) -> None:
        """Newly given partitions that another member gave up, or that were contested."""
        given_up, contested = self.given_up, self.owned.contested
        if not given_up and not contested:
            return
        for mid, assigned in self.assignment.items():
            for tp in assigned[self.kept[mid]:]:
                key = (tp.topic, tp.partition)
                previous = given_up.get(key)
                if (previous is not None and previous != mid) or key in contested:
                    self.transferring[tp] = mid
