"""The `fair` strategy (KIP-49)."""

from lagassign.strategies.fair import FairAssignor
from tests.builders import group, partitions_of

KIP49_TOPICS = {"T1": 2, "T2": 1, "T3": 2, "T4": 1, "T5": 2}
KIP49_SUBSCRIPTIONS = {
    "C1": ["T1", "T2", "T3", "T4", "T5"],
    "C2": ["T1", "T3", "T5"],
    "C3": ["T1", "T3", "T5"],
    "C4": ["T1", "T2", "T3", "T4", "T5"],
}


def test_kip_49_example():
    """shared/seeds/003 (KIP-49), its "Fair" table."""
    a = FairAssignor().assign(group(KIP49_TOPICS, KIP49_SUBSCRIPTIONS))
    assert partitions_of(a) == {
        "C1": ["T2-0", "T3-0"],
        "C2": ["T1-0", "T3-1"],
        "C3": ["T1-1", "T5-0"],
        "C4": ["T4-0", "T5-1"],
    }


def test_more_partitions_first_among_equally_subscribed_topics():
    # big (3 partitions) goes before small (1): a, b get big's first two, so small goes to c
    g = group(
        {"big": 3, "small": 1},
        {"a": ["big", "small"], "b": ["big", "small"], "c": ["big", "small"]},
    )
    assert partitions_of(FairAssignor().assign(g)) == {
        "a": ["big-0", "small-0"],
        "b": ["big-1"],
        "c": ["big-2"],
    }


def test_identical_subscriptions_balance_counts():
    g = group({"t0": 5, "t1": 4}, {m: ["t0", "t1"] for m in ("a", "b", "c")})
    counts = sorted(len(ps) for ps in FairAssignor().assign(g).partitions.values())
    assert counts == [3, 3, 3]
