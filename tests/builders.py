"""Short ways to write groups in tests."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from lagassign.model import Assignment, Group, Member, Partition, Topic, TopicPartition


def lag_topic(name: str, lags: Sequence[int]) -> Topic:
    return Topic(name, tuple(Partition(name, i, lag=lag) for i, lag in enumerate(lags)))


def group(
    topics: Iterable[Topic] | Mapping[str, Sequence[int] | int],
    subscriptions: Mapping[str, Iterable[str]],
    **kwargs: object,
) -> Group:
    """``topics``: Topic objects, or name -> lags per partition, or name -> partition count."""
    if isinstance(topics, Mapping):
        built = [
            Topic.of(n, spec) if isinstance(spec, int) else lag_topic(n, spec)
            for n, spec in topics.items()
        ]
    else:
        built = list(topics)
    members = [Member(mid, frozenset(ts)) for mid, ts in subscriptions.items()]
    return Group.of(built, members, **kwargs)  # type: ignore[arg-type]


def tps(*specs: str) -> list[TopicPartition]:
    """``tps("t0-1", "t1-0")`` -> TopicPartitions (the topic is everything before the last -)."""
    out = []
    for spec in specs:
        topic, _, number = spec.rpartition("-")
        out.append(TopicPartition(topic, int(number)))
    return out


def partitions_of(assignment: Assignment) -> dict[str, list[str]]:
    return {mid: [str(tp) for tp in ps] for mid, ps in assignment.partitions.items()}
