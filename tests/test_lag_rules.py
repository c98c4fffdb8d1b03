"""The lag rules (lagassign.lag_rules), with the Java original's four lag cases."""

import pytest

from lagassign.lag_rules import group_lags, lag_from_offsets, partition_lag
from lagassign.model import Group, Member, Offsets, Partition, Topic, TopicPartition


@pytest.mark.parametrize(
    ("begin", "end", "committed", "reset", "expected"),
    [
        # grantneale/kafka-lag-based-assignor, its lag rule tests (shared/seeds/README.md)
        (1111, 9999, 5555, "none", 4444),
        (0, 0, 5555, "none", 0),
        (1111, 9999, None, "latest", 0),
        (1111, 9999, None, "earliest", 8888),
    ],
)
def test_java_original_lag_cases(begin, end, committed, reset, expected):
    assert lag_from_offsets(begin, end, committed, reset) == expected


@pytest.mark.parametrize("reset", ["latest", "LATEST", "Latest"])
def test_latest_is_case_insensitive(reset):
    assert lag_from_offsets(10, 50, None, reset) == 0


@pytest.mark.parametrize("reset", ["earliest", "none", "by_duration:PT1H", "anything"])
def test_every_other_reset_counts_the_whole_log(reset):
    assert lag_from_offsets(10, 50, None, reset) == 40


def test_latest_is_the_default():
    assert lag_from_offsets(10, 50, None) == 0


def test_committed_below_log_start_follows_the_reset_rule():
    # the consumer's position would be out of range and reset, so lag is what the reset gives
    assert lag_from_offsets(100, 500, 20, "latest") == 0
    assert lag_from_offsets(100, 500, 20, "earliest") == 400


def test_committed_at_log_start_is_not_out_of_range():
    assert lag_from_offsets(100, 500, 100, "latest") == 400


def test_committed_past_log_end_is_zero_not_negative():
    assert lag_from_offsets(0, 10, 25, "earliest") == 0


def test_partition_lag_prefers_given_lag_then_offsets_then_zero():
    assert partition_lag(Partition("t", 0, lag=7)) == 7
    assert partition_lag(Partition("t", 0, offsets=Offsets(0, 90, None)), "earliest") == 90
    assert partition_lag(Partition("t", 0)) == 0


def test_group_lags_use_the_groups_reset_policy():
    topic = Topic("t", (Partition("t", 0, offsets=Offsets(5, 25, None)), Partition("t", 1, lag=3)))
    members = [Member("m", frozenset({"t"}))]
    earliest = Group.of([topic], members, auto_offset_reset="earliest")
    latest = Group.of([topic], members)
    assert group_lags(earliest) == {TopicPartition("t", 0): 20, TopicPartition("t", 1): 3}
    assert group_lags(latest) == {TopicPartition("t", 0): 0, TopicPartition("t", 1): 3}
