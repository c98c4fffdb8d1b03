"""What a group leader does with a lagassign strategy, whatever the Kafka client.

The consumer-group adapters (:mod:`lagassign.kafka.kafka_python`, :mod:`lagassign.kafka.aiokafka`)
only translate their client's types. Everything else happens here, once:

1. build a model :class:`~lagassign.model.Group` from the leader's view: each member's id,
   subscription, previous assignment and generation (:class:`Subscription`), and the partitions
   of every subscribed topic from the client's cluster metadata;
2. if the strategy reads lag (``Strategy.uses_lag``), read the group's committed offsets and the
   partitions' log start and end offsets with an
   :class:`~lagassign.kafka.offsets.OffsetsReader` of the leader's own, under a deadline;
   if that fails or runs out of time, log **one** warning and assign as if every lag were 0
   (the strategy then balances partition counts): a rebalance never fails because of lag;
3. run the strategy and hand back partitions per member (:class:`LeaderAssignment`); for a
   strategy that supports the cooperative protocol, without the partitions another member
   still consumes (:mod:`lagassign.strategies.cooperative`), whatever protocol the leader runs
   itself: members of one group may run different ones while it switches.

What both adapters take from the application is in :mod:`lagassign.kafka.settings`
(:class:`~lagassign.kafka.settings.AssignorSettings`); what a member sends the leader, and the
user data codec, in :mod:`lagassign.kafka.wire`.
"""

from __future__ import annotations

import importlib
import logging
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, Literal

from lagassign.java_ordering import java_order
from lagassign.kafka.settings import AssignorSettings, OffsetsFetch
from lagassign.kafka.wire import sends_consuming, sends_previous
from lagassign.model import (
    Assignment,
    Group,
    Member,
    Offsets,
    Partition,
    Topic,
    TopicPartition,
)
from lagassign.plan import rebalance_round
from lagassign.strategies import RebalanceProtocol, Strategy, create

if TYPE_CHECKING:
    from lagassign.kafka.offsets import OffsetsReader

log = logging.getLogger(__name__)

#: how long past the deadline a reader that overruns its own timeout is waited for
_GRACE = 0.1
#: prefetched offsets older than this (seconds) are read again by the leader's assign()
PREFETCH_MAX_AGE = 60.0
#: a prefetch this recent (seconds) is not repeated (JoinGroup retries)
PREFETCH_REUSE = 5.0

#: partitions of a topic from the client's cluster metadata; None if the topic is unknown
PartitionsForTopic = Callable[[str], Iterable[int] | None]

LagSource = Literal["offsets", "unavailable", "unused"]


@dataclass(frozen=True, slots=True)
class Subscription:
    """A member of the group as the leader sees it in the member's JoinGroup metadata.

    ``owned``: the member's previous assignment, which sticky strategies keep (the
    owned-partitions field, else the user data); ``consuming``: what it still consumes, the
    owned-partitions field only (empty for a member on the eager protocol).
    """

    member_id: str
    topics: tuple[str, ...]
    owned: tuple[TopicPartition, ...] = ()
    generation: int | None = None
    instance_id: str | None = None
    rack: str | None = None
    consuming: tuple[TopicPartition, ...] = ()
    #: messages per second the member says it can read (its assignor's ``capacity``)
    capacity: float | None = None


@dataclass(frozen=True)
class LeaderAssignment:
    """What the leader computed: the group it saw, the assignment and where lag came from.

    ``lag`` is ``"offsets"`` when the offsets were read, ``"unavailable"`` when reading them
    failed (every lag was taken as 0; ``error`` says why) and ``"unused"`` when the strategy
    does not read lag (or no subscribed topic has partitions). ``seconds`` is the time the
    whole assignment took, reading included; ``prefetched`` says the offsets (or the failure)
    came from :meth:`GroupAssignor.prefetch`, for some topics at least. ``protocol`` is the
    one the leader runs.
    ``withheld``: the partitions held back this round because a member other than the one the
    strategy gives them to still consumes them (whatever ``protocol``; only strategies that
    support the cooperative protocol withhold); ``consuming``: what each member reported it
    still consumes (members that consume nothing are left out).
    """

    strategy: str
    group: Group
    assignment: Assignment
    lag: LagSource
    seconds: float
    error: str | None = None
    prefetched: bool = False
    protocol: RebalanceProtocol = RebalanceProtocol.EAGER
    withheld: tuple[TopicPartition, ...] = ()
    consuming: Mapping[str, tuple[TopicPartition, ...]] = field(default_factory=dict)
    #: seconds from the start of the read whose offsets were used to the start of the
    #: assignment (None when none were): a read still running is not waited for when an
    #: earlier one serves (:meth:`GroupAssignor.assign`)
    offsets_age: float | None = None

    def partitions(self, member_id: str) -> tuple[TopicPartition, ...]:
        return self.assignment[member_id]

    def by_topic(self, member_id: str) -> list[tuple[str, list[int]]]:
        """A member's partitions grouped by topic, topics in the order they first appear."""
        grouped: dict[str, list[int]] = {}
        # a topic's partitions mostly come in runs: each run taken at C speed
        for topic, run in groupby(self.assignment[member_id], _topic_of):
            numbers = grouped.get(topic)
            if numbers is None:
                grouped[topic] = list(map(_partition_of, run))
            else:
                numbers.extend(map(_partition_of, run))
        return list(grouped.items())


class OffsetsUnavailable(Exception):
    """Reading offsets failed or ran out of time (the leader then assigns with lag 0)."""


def read_offsets(
    config: Mapping[str, str], group: str, topics: Sequence[str], timeout: float
) -> Mapping[TopicPartition, Offsets]:
    """Committed, earliest and latest offsets through a new :class:`OffsetsReader`."""
    # imported here: confluent-kafka is only needed when a strategy reads lag
    from lagassign.kafka.offsets import OffsetsReader

    with OffsetsReader(config, timeout=timeout) as reader:
        return reader.offsets(group, topics)


class KeptReader:
    """The leader's offsets read through one :class:`OffsetsReader` kept from read to read, so
    a rebalance reads on connections that are already open (librdkafka's, and those of the
    protocol path to every partition leader and the group coordinator) with its requests
    already built. The adapters' default ``fetch``.

    One read at a time: a read that finds the reader still busy with one that outlived its
    deadline reads through a new reader of its own (:func:`read_offsets`). A reader whose
    timeout differs is replaced. A failed read keeps the reader (it starts its next read on
    new clients after a fault)."""

    def __init__(self, config: Mapping[str, str]) -> None:
        self.config = dict(config)
        self._reader: OffsetsReader | None = None
        self._lock = threading.Lock()

    def __call__(
        self, group: str, topics: Sequence[str], timeout: float
    ) -> Mapping[TopicPartition, Offsets]:
        from lagassign.kafka.offsets import OffsetsReader

        if not self._lock.acquire(blocking=False):
            return read_offsets(self.config, group, topics, timeout)
        try:
            reader = self._reader
            if reader is None or reader.timeout != timeout:
                if reader is not None:
                    reader.close()
                reader = self._reader = OffsetsReader(self.config, timeout=timeout)
            return reader.offsets(group, topics)
        finally:
            self._lock.release()

    def close(self) -> None:
        with self._lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None


def fetch_within(
    fetch: OffsetsFetch, group: str, topics: Sequence[str], timeout: float
) -> Mapping[TopicPartition, Offsets]:
    """``fetch`` in a worker thread; its answer, or :class:`OffsetsUnavailable` at the deadline.

    The fetch gets ``timeout`` as its own deadline; a fetch that overruns it is left to finish
    on its own (the thread is a daemon), so the caller never waits much longer than
    ``timeout``.
    """
    return _Fetching(fetch, group, topics, timeout).result()


class _Fetching:
    """``fetch(group, topics, timeout)`` running in a daemon thread from its creation on;
    :meth:`result` waits for its answer until ``timeout`` (and a little grace) after the start.

    ``prepare``: once the answer is in, the thread also makes the model's topics of it
    (:attr:`topics`, :func:`model_topics`), for a prefetch: what the leader's ``assign()``
    would otherwise make on the client's event loop (a third of its CPU at 10,000 partitions).
    That is not part of the read: an answer within the deadline is used however long they
    take, :meth:`result` waiting for them as ``assign()`` would take making them itself.
    """

    def __init__(
        self,
        fetch: OffsetsFetch,
        group: str,
        topics: Sequence[str],
        timeout: float,
        *,
        prepare: bool = False,
    ) -> None:
        self.started = time.monotonic()
        self.timeout = timeout
        self._answer: list[Mapping[TopicPartition, Offsets]] = []
        self._failure: list[BaseException] = []
        self._answered = threading.Event()  # the read has ended, well or not
        self._prepared = threading.Event()  # and its topics are made, if asked for
        #: the answer's topics as the model has them (``prepare``, once made); else none
        self.topics: Mapping[str, Topic] = {}

        def run() -> None:
            try:
                self._answer.append(fetch(group, topics, timeout))
            except BaseException as exc:  # reported to the caller, whatever it is
                self._failure.append(exc)
            finally:
                self._answered.set()
            try:
                if prepare and not self._failure:
                    self.topics = model_topics(self._answer[0])
            except Exception:
                # a speed-up only: assign() makes the topics itself from the same answer,
                # and meets whatever this met there
                pass
            finally:
                self._prepared.set()

        threading.Thread(target=run, name=f"lagassign-offsets-{group}", daemon=True).start()

    @property
    def done(self) -> bool:
        """Whether the read has ended (its topics may still be being made)."""
        return self._answered.is_set()

    @property
    def settled(self) -> bool:
        """Whether the thread has ended: the read, and the topics if asked for."""
        return self._prepared.is_set()

    def answered(self) -> Mapping[TopicPartition, Offsets] | None:
        """The answer if the read has ended well, at once; else None (running or failed)."""
        if self._answered.is_set() and not self._failure:
            return self._answer[0]
        return None

    def result(self) -> Mapping[TopicPartition, Offsets]:
        left = self.started + self.timeout + _GRACE - time.monotonic()
        if not self._answered.wait(max(left, 0.0)):
            raise OffsetsUnavailable(f"no answer within {self.timeout:g} s")
        if self._failure:
            exc = self._failure[0]
            raise OffsetsUnavailable(f"{type(exc).__name__}: {exc}") from exc
        self._prepared.wait()  # CPU on an answer in hand, which assign() would spend anyway
        return self._answer[0]


def import_ahead(modules: Iterable[str]) -> threading.Thread | None:
    """Imports those of ``modules`` not yet imported, in a daemon thread started now; the
    thread, or None when there is nothing to import.

    A consumer builds its assignor well before it leads a rebalance; imported in the leader's
    ``assign()`` instead, on the client's event loop, ``balanced``'s first handover to owners
    took SciPy's 0.4–0.7 s there, once per process. The price is paid by every member, leader
    or not: NumPy and SciPy took a consumer process from 30 to 85 MiB, and while an extension
    module initialises it holds the interpreter, so the client's loop may stall for tens of
    milliseconds at start-up (``AssignorSettings.import_ahead=False`` turns it off). A module
    that fails to import is left to the strategy, which meets the same error where it needs
    the module. (A process that forks while the thread imports leaves the child a module lock
    held by a thread it does not have: fork before building the assignor, or after its
    ``importing`` thread ended.)
    """
    missing = [name for name in modules if name not in sys.modules]
    if not missing:
        return None

    def run() -> None:
        for name in missing:
            try:
                importlib.import_module(name)
            except Exception as e:  # the strategy meets it again where it needs the module
                log.debug("lagassign: importing %s ahead failed: %s", name, e)

    thread = threading.Thread(target=run, name="lagassign-imports", daemon=True)
    thread.start()
    return thread


class GroupAssignor:
    """One strategy, as a member running ``protocol`` uses it (see the module docstring).

    ``strategy`` must support ``protocol``, which decides what the member sends
    (:attr:`sends_consuming`, :attr:`sends_previous`). As the leader, for a strategy that
    supports the cooperative protocol, it gives a member no partition that another member still
    consumes (:func:`lagassign.plan.rebalance_round`), whatever ``protocol``.
    """

    def __init__(
        self,
        strategy: str | Strategy,
        settings: AssignorSettings,
        protocol: RebalanceProtocol = RebalanceProtocol.EAGER,
    ) -> None:
        self.strategy = create(strategy) if isinstance(strategy, str) else strategy
        if protocol not in self.strategy.protocols:
            raise ValueError(
                f"strategy {self.strategy.name!r} does not support the {protocol.value} protocol"
            )
        self.settings = settings
        self.protocol = protocol
        fetch = settings.fetch
        if fetch is None:
            config = dict(settings.offsets_config)
            if self.strategy.uses_lag and "bootstrap.servers" not in config:
                raise ValueError(
                    f"strategy {self.strategy.name!r} reads lag: offsets_config needs "
                    "bootstrap.servers"
                )
            fetch = KeptReader(config)

        self._fetch = fetch
        #: imports what the strategy loads on first use (:func:`import_ahead`), if asked to
        self.importing = (
            import_ahead(self.strategy.imported_on_use) if settings.import_ahead else None
        )
        self._prefetched: _Prefetch | None = None
        # reads started by prefetch() that no assign() took (a member that did not lead, a
        # leader that took an earlier read), and the newest read that ended well
        self._unused: list[_Prefetch] = []
        self._known: _Known | None = None
        # whether this member assigned since it last sent JoinGroup (it leads this rebalance),
        # and the topics its group subscribed when it last led
        self._assigned = False
        self._group_topics: frozenset[str] = frozenset()

    @property
    def group_id(self) -> str:
        return self.settings.group_id

    @property
    def lag_timeout(self) -> float:
        return self.settings.lag_timeout

    @property
    def sends_consuming(self) -> bool:
        """Whether the member lists its assignment in the owned-partitions field
        (:func:`~lagassign.kafka.wire.sends_consuming`)."""
        return sends_consuming(self.protocol)

    @property
    def sends_previous(self) -> bool:
        """Whether the member sends its previous assignment in the user data
        (:func:`~lagassign.kafka.wire.sends_previous`)."""
        return sends_previous(self.strategy, self.protocol)

    @property
    def name(self) -> str:
        return self.strategy.name

    def __repr__(self) -> str:
        return (
            f"GroupAssignor({self.name!r}, group_id={self.group_id!r}, "
            f"protocol={self.protocol.value!r})"
        )

    def joining(self, topics: Iterable[str]) -> None:
        """This member sends JoinGroup subscribed to ``topics`` (an adapter calls this as its
        client asks for the member's subscription): it starts the read the leader's
        :meth:`assign` takes, since any member may come out of JoinGroup as the leader (the
        first of a group, the next after the leader left) and only JoinGroup's answer says
        which. It reads its own topics, and the group's as well when it led the last
        rebalance (:meth:`prefetch`); a member that does not lead drops its read
        (:meth:`synced`)."""
        self._assigned = False  # a new join attempt: what an earlier one assigned never arrived
        self.prefetch(frozenset(topics) | self._group_topics)

    def synced(self) -> None:
        """This member's assignment arrived (SyncGroup's answer). A member that did not
        :meth:`assign` it (it did not lead) drops its read and the group's topics: its next
        join reads its own topics only."""
        led, self._assigned = self._assigned, False
        if not led:
            self.discard_prefetch()
            self._group_topics = frozenset()

    def prefetch(self, topics: Iterable[str]) -> None:
        """Starts reading the offsets of ``topics`` in a worker thread, for the next
        :meth:`assign` to use, and returns at once.

        For a member that may lead the coming rebalance (:meth:`joining`: the leader is known
        only from JoinGroup's answer), so that the leader's read runs off its client's event
        loop and ``assign()`` waits at most for what is left of it; the read has
        ``lag_timeout`` from its start. A failure is kept and reported (one warning) by the
        ``assign()`` that uses it. Does nothing for strategies that do not read lag, or when a
        prefetch of the same topics is younger than :data:`PREFETCH_REUSE` seconds (a retried
        JoinGroup).
        """
        if not self.strategy.uses_lag:
            return
        wanted = frozenset(topics)
        if not wanted:
            return
        now = time.monotonic()
        kept = self._prefetched
        if kept is not None and wanted <= kept.topics and now - kept.at <= PREFETCH_REUSE:
            return
        self.discard_prefetch()
        ordered = sorted(wanted, key=java_order)
        fetching = _Fetching(self._fetch, self.group_id, ordered, self.lag_timeout, prepare=True)
        self._prefetched = _Prefetch(fetching.started, wanted, fetching)

    def discard_prefetch(self) -> None:
        """Drops the prefetch for the next :meth:`assign`; what it reads (it may still run)
        is kept as an earlier read."""
        if self._prefetched is not None:
            self._unused.append(self._prefetched)
            self._prefetched = None
        # a member that never leads would otherwise keep every read it made
        self._newest_read()

    def _remember(
        self,
        at: float,
        topics: frozenset[str],
        offsets: Mapping[TopicPartition, Offsets],
        prepared: Mapping[str, Topic],
    ) -> None:
        if self._known is None or at > self._known.at:
            self._known = _Known(at, topics, offsets, prepared)

    def _newest_read(self) -> _Known | None:
        """The newest read that ended well, of those :meth:`prefetch` started; reads still
        running (or making their topics) are kept for a later look, the others let go."""
        running = []
        for kept in self._unused:
            if not kept.fetching.settled:
                running.append(kept)
                continue
            answer = kept.fetching.answered()
            if answer is not None:
                self._remember(kept.at, kept.topics, answer, kept.fetching.topics)
        self._unused = running
        return self._known

    def assign(
        self, subscriptions: Sequence[Subscription], partitions_for_topic: PartitionsForTopic
    ) -> LeaderAssignment:
        """Partitions for every member of ``subscriptions``; never fails because of lag.

        Uses the offsets of a :meth:`prefetch` younger than :data:`PREFETCH_MAX_AGE` seconds
        for the subscribed topics it read, and reads the others now, under ``lag_timeout``
        (all of them without such a prefetch).

        A member that prefetched does not wait for its read when waiting would gain nothing
        or when an earlier one serves: ``assign()`` runs on the client's event loop (with
        either adapter), which a wait blocks. If that read is still running (the JoinGroup
        answer came first: this member joined last), the newest earlier read that ended well
        (this member's from an earlier join, younger than :data:`PREFETCH_MAX_AGE`) is used
        when it covers every subscribed topic (``LeaderAssignment.offsets_age`` says how old);
        and a group of one member gets every partition whatever the lags, so it is assigned
        without them (``lag`` is ``"unused"``). Otherwise (a leader's first read) it waits,
        under ``lag_timeout``.
        """
        started = time.monotonic()
        prefetched, self._prefetched = self._prefetched, None
        counts = _partitions(subscriptions, partitions_for_topic)
        lag: LagSource = "unused"
        error: str | None = None
        offsets: Mapping[TopicPartition, Offsets] = {}
        # topics of the offsets made ahead, in the read's thread (see _Fetching)
        prepared: Mapping[str, Topic] = {}
        read_at: float | None = None
        topics = sorted((t for t, ps in counts.items() if ps), key=java_order)
        if prefetched is not None and started - prefetched.at > PREFETCH_MAX_AGE:
            prefetched = None
        # what a prefetch did not read (a new leader's group subscribes topics it does not)
        missing = [t for t in topics if prefetched is None or t not in prefetched.topics]
        used_prefetch = prefetched is not None and len(missing) < len(topics)
        # settled without waiting for a read (its offsets, or none, are decided)
        settled = False
        if (
            used_prefetch
            and self.strategy.uses_lag
            and topics
            and (missing or prefetched is None or not prefetched.fetching.done)
        ):
            assert prefetched is not None
            # the read still runs, or misses topics: not waited for on the event loop when an
            # earlier read serves or when lags cannot change the assignment (one member)
            earlier = self._newest_read()
            if (
                earlier is not None
                and started - earlier.at <= PREFETCH_MAX_AGE
                and earlier.topics.issuperset(topics)
            ):
                offsets, read_at, lag = earlier.offsets, earlier.at, "offsets"
                prepared = earlier.prepared
                settled = True
            elif len(subscriptions) == 1:
                used_prefetch, settled = False, True
            if settled:
                self._unused.append(prefetched)  # what it reads serves a later rebalance
        if self.strategy.uses_lag and topics and not settled:
            try:
                if not used_prefetch:
                    read_at = time.monotonic()
                    offsets = fetch_within(self._fetch, self.group_id, topics, self.lag_timeout)
                else:
                    assert prefetched is not None
                    read_at = prefetched.at
                    rest = (
                        _Fetching(self._fetch, self.group_id, missing, self.lag_timeout)
                        if missing
                        else None
                    )
                    offsets = prefetched.fetching.result()
                    prepared = prefetched.fetching.topics
                    if rest is not None:
                        offsets = {**offsets, **rest.result()}
                    topics_read = prefetched.topics.union(missing)
                    self._remember(prefetched.at, topics_read, offsets, prepared)
                lag = "offsets"
            except OffsetsUnavailable as exc:
                lag, error = "unavailable", str(exc)
                log.warning(
                    "lagassign: could not read the offsets of group %r (%s); strategy %r "
                    "assigns %d partitions to %d members as if every lag were 0",
                    self.group_id,
                    error,
                    self.name,
                    sum(len(ps) for ps in counts.values()),
                    len(subscriptions),
                )
        group = build_group(
            self.group_id,
            subscriptions,
            counts,
            offsets,
            auto_offset_reset=self.settings.auto_offset_reset,
            prepared=prepared,
        )
        consuming = _consuming(subscriptions, group)
        # the core's round: a strategy that supports the cooperative protocol withholds what
        # another member still consumes, whatever protocol this leader runs
        assignment, moving = rebalance_round(self.strategy, group, consuming)
        withheld = tuple(sorted(moving, key=TopicPartition.sort_key))
        seconds = time.monotonic() - started
        if log.isEnabledFor(logging.DEBUG):  # the lists are built only for a debug log
            log.debug(
                "lagassign: group %r, strategy %r (%s), lag %s%s: %s, withheld %s (%.3f s)",
                self.group_id,
                self.name,
                self.protocol.value,
                lag,
                (
                    f" (prefetched, {started - read_at:.3f} s old)"
                    if used_prefetch and lag == "offsets" and read_at is not None
                    else ""
                ),
                assignment.as_lists(),
                [(tp.topic, tp.partition) for tp in withheld],
                seconds,
            )
        self._assigned = True
        self._group_topics = frozenset(t for s in subscriptions for t in s.topics)
        return LeaderAssignment(
            self.name,
            group,
            assignment,
            lag,
            seconds,
            error,
            used_prefetch and lag != "unused",
            self.protocol,
            withheld,
            consuming,
            started - read_at if lag == "offsets" and read_at is not None else None,
        )


@dataclass(frozen=True, slots=True)
class _Known:
    """A read that ended well: when it started, its topics, its answer."""

    at: float
    topics: frozenset[str]
    offsets: Mapping[TopicPartition, Offsets]
    #: the model's topics of ``offsets``, made in the read's thread (some or none)
    prepared: Mapping[str, Topic]


@dataclass(frozen=True, slots=True)
class _Prefetch:
    #: when the read started
    at: float
    topics: frozenset[str]
    fetching: _Fetching


def _consuming(
    subscriptions: Sequence[Subscription], group: Group
) -> dict[str, tuple[TopicPartition, ...]]:
    """What each member still consumes, of the partitions ``group`` knows (as for owned
    partitions, those of deleted or unsubscribed topics are left out); members consuming
    nothing are left out."""
    if not any(s.consuming for s in subscriptions):  # eager members: no set of 10,000 keys
        return {}
    known = {p.tp for p in group.partitions()}
    consuming = {s.member_id: tuple(tp for tp in s.consuming if tp in known) for s in subscriptions}
    return {mid: tps for mid, tps in consuming.items() if tps}


def _partitions(
    subscriptions: Sequence[Subscription], partitions_for_topic: PartitionsForTopic
) -> dict[str, list[int]]:
    """Partition numbers of every subscribed topic (empty for a topic the metadata lacks)."""
    counts: dict[str, list[int]] = {}
    for topic in sorted({t for s in subscriptions for t in s.topics}, key=java_order):
        numbers = partitions_for_topic(topic)
        if numbers is None:
            # as Kafka's assignors do; kafka-python's first rebalance often lacks the metadata
            # and rebalances again once it has it
            log.info("lagassign: no partition metadata for topic %r", topic)
            counts[topic] = []
        else:
            counts[topic] = sorted(numbers)
    return counts


def build_group(
    group_id: str,
    subscriptions: Sequence[Subscription],
    partitions: Mapping[str, Collection[int]],
    offsets: Mapping[TopicPartition, Offsets],
    *,
    auto_offset_reset: str = "latest",
    prepared: Mapping[str, Topic] | None = None,
) -> Group:
    """The model group the leader sees.

    ``partitions`` gives the partition numbers of each subscribed topic; a partition with
    offsets gets them (the lag rules of :mod:`lagassign.lag_rules` then apply), one without gets lag
    0. Owned partitions that are not in ``partitions`` (a topic deleted or no longer
    subscribed) are left out, as Kafka's assignors ignore them.

    ``prepared``: topics made ahead from ``offsets`` (:func:`model_topics`); one is taken as it
    is where its partitions are those ``partitions`` gives (else the metadata and the read
    disagree, and the topic is made here as without it): the same topic either way.
    """
    topics = []
    known: set[TopicPartition] = set()
    for name, numbers in partitions.items():
        ready = prepared.get(name) if prepared else None
        if ready is not None and list(map(_number, ready.partitions)) == sorted(numbers):
            known.update(map(_tp, ready.partitions))
            topics.append(ready)
            continue
        # looked up by a plain tuple (equal to the TopicPartition key, and cheaper to make);
        # each Partition makes its own key once, which ``known`` keeps
        parts = []
        for number in sorted(numbers):
            o = offsets.get((name, number))  # type: ignore[call-overload]
            parts.append(
                Partition(name, number, offsets=o) if o else Partition(name, number, lag=0)
            )
        known.update(map(_tp, parts))
        topics.append(Topic(name, tuple(parts)))
    members = [
        Member(
            id=s.member_id,
            topics=frozenset(t for t in s.topics if t in partitions),
            instance_id=s.instance_id,
            rack=s.rack,
            owned=s.owned
            if known.issuperset(s.owned)
            else tuple(tp for tp in s.owned if tp in known),
            generation=s.generation,
            capacity=s.capacity,
        )
        for s in subscriptions
    ]
    return Group.of(topics, members, id=group_id, auto_offset_reset=auto_offset_reset)


def model_topics(offsets: Mapping[TopicPartition, Offsets]) -> dict[str, Topic]:
    """The topics of a read's ``offsets`` as :func:`build_group` makes them, every partition
    with its offsets: made ahead where the metadata may give the same partitions."""
    by_topic: dict[str, list[Partition]] = {}
    for (name, number), o in offsets.items():
        # as build_group tests them: a partition without (it then makes the topic itself)
        if o:
            by_topic.setdefault(name, []).append(Partition(name, number, offsets=o))
    return {name: Topic(name, tuple(parts)) for name, parts in by_topic.items()}


_tp = attrgetter("tp")
_number = attrgetter("partition")
_topic_of = itemgetter(0)
_partition_of = itemgetter(1)
