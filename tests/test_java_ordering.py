"""Java's string order, String.hashCode and HashMap iteration order (lagassign.java_ordering),
which range and the sticky assignors follow to reproduce Kafka's results in Kafka's order."""

from __future__ import annotations

import pytest

from lagassign.java_ordering import java_hashmap_order, java_order, java_string_hash


def test_java_order_is_utf16_code_unit_order() -> None:
    # U+FF61 sorts after U+1F600 in code points but before it in UTF-16 code units (0xD83D).
    assert sorted(["\U0001F600", "\uff61"], key=java_order) == ["\U0001F600", "\uff61"]


def test_java_string_hash_matches_string_hashcode() -> None:
    # Values of String.hashCode(): "Aa" and "BB" are the classic collision; U+1F600 is two
    # UTF-16 code units (0xD83D, 0xDE00), which is what Java hashes.
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("Aa") == java_string_hash("BB") == 2112
    assert java_string_hash("\U0001F600") == 0xD83D * 31 + 0xDE00
    assert java_string_hash("") == 0


def test_hashmap_order_of_short_topic_names() -> None:
    # "t4" hashes to bucket 0 of a 16-slot table, "t0".."t3" to buckets 12..15.
    assert java_hashmap_order(["t0", "t1", "t2", "t3", "t4"]) == ["t4", "t0", "t1", "t2", "t3"]
    assert java_hashmap_order(["T1", "T2", "T3", "T4", "T5"]) == ["T4", "T5", "T1", "T2", "T3"]
    # colliding keys keep their insertion order
    assert java_hashmap_order(["BB", "Aa"]) == ["BB", "Aa"]


# Orders captured from OpenJDK 17's HashMap for the same keys, inserted in the same order.
_COLLIDING = ["".join("Aa" if (i >> b) & 1 else "BB" for b in range(4)) for i in range(10)]


@pytest.mark.parametrize(("keys", "computed", "java"), [
    # Kafka's test members: consecutive hashes, the last one's bucket first
    (["consumer1", "consumer2", "consumer3", "consumer4"], False,
     ["consumer4", "consumer3", "consumer2", "consumer1"]),
    # '!\t \uff61' and '\t' share a bucket: put keeps insertion order, computeIfAbsent reverses it
    (["!\t \uff61", ",", ",t+Aa", "\t"], False, [",t+Aa", "!\t \uff61", "\t", ","]),
    (["!\t \uff61", ",", ",t+Aa", "\t"], True, [",t+Aa", "\t", "!\t \uff61", ","]),
    # ten keys with one String.hashCode: the full bin doubles the table twice, up to 64
    ([*_COLLIDING, "x", "y"], False, [*_COLLIDING, "x", "y"]),
    ([*_COLLIDING, "x", "y"], True, [*reversed(_COLLIDING), "x", "y"]),
])
def test_java_hashmap_order(keys: list[str], computed: bool, java: list[str]) -> None:
    assert java_hashmap_order(keys, computed=computed) == java
