"""Member ids as every table and chart shows them: short, and never two alike.

Kafka's member ids are long and mostly alike: a Java consumer's is ``consumer-<group>-<n>-``
followed by a UUID, so a column cut at 15 characters shows ``consumer-billin…`` for every member.
:func:`member_labels` elides what all of a group's ids share at the start and keeps what tells
them apart: ``consumer-billing-7-3f2a…d2c1`` and ``consumer-billing-8-99e0…04ab`` become
``…7-3f2a…d2c1`` and ``…8-99e0…04ab``. JSON output keeps whole ids.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: what stands for characters left out of a label
ELIDED = "…"
#: the longest label (the ``…`` included) unless longer ones are needed to tell ids apart
LABEL_WIDTH = 22
#: a shared prefix this short is shown rather than elided: ``…`` would save next to nothing
_MIN_PREFIX = 4


@dataclass(frozen=True, slots=True)
class MemberLabels:
    """Each member id's label, and the prefix the labels elide (``""`` when none)."""

    labels: Mapping[str, str]
    prefix: str

    def __getitem__(self, member_id: str) -> str:
        return self.labels.get(member_id, member_id)

    @property
    def width(self) -> int:
        """The longest label: a column this wide shows every label whole."""
        return max((len(label) for label in self.labels.values()), default=0)

    @property
    def note(self) -> str:
        """What a table's caption says about the labels (``""`` when they are the ids)."""
        parts = []
        if self.prefix:
            parts.append(f"a leading {ELIDED} stands for {self.prefix!r}, which every id shares")
        lead = len(ELIDED) if self.prefix else 0
        if any(ELIDED in label[lead:] for label in self.labels.values()):
            parts.append(f"{ELIDED} within an id leaves characters out")
        if not parts:
            return ""
        return f"member ids: {'; '.join(parts)} (--format json gives them whole)"


def member_labels(ids: Iterable[str], width: int = LABEL_WIDTH) -> MemberLabels:
    """Labels for ``ids`` that no two share: the ids themselves when they all fit ``width``;
    else the prefix they all have elided to ``…`` (when it is longer than a few characters),
    and what is left kept whole when it fits, else its start and its end around ``…``, as long
    as it takes for every label to differ.

    >>> member_labels(["consumer-billing-1-3f2a9c1e", "consumer-billing-2-77d0e4b2"]).labels
    {'consumer-billing-1-3f2a9c1e': '…1-3f2a9c1e', 'consumer-billing-2-77d0e4b2': '…2-77d0e4b2'}
    >>> member_labels(["a-0123456789abcdef0123", "b-0123456789abcdef0123"], width=8).labels
    {'a-0123456789abcdef0123': 'a-0…0123', 'b-0123456789abcdef0123': 'b-0…0123'}
    """
    unique = sorted(set(ids))
    if all(len(i) <= width for i in unique):
        return MemberLabels({i: i for i in unique}, "")
    prefix = _shared_prefix(unique[0], unique[-1]) if len(unique) > 1 else ""
    # every label keeps at least one character of its own
    prefix = prefix[: min((len(i) for i in unique), default=1) - 1]
    if len(prefix) < _MIN_PREFIX:
        prefix = ""
    lead = ELIDED if prefix else ""
    rests = {i: i[len(prefix) :] for i in unique}
    keep = max(width - len(lead), 3)
    while True:
        labels = {i: lead + _shortened(rest, keep) for i, rest in rests.items()}
        # the rests differ (the ids do, past the same prefix), so this ends by keeping them whole
        if len(set(labels.values())) == len(labels):
            return MemberLabels(labels, prefix)
        keep += 1


def _shortened(text: str, keep: int) -> str:
    """``text`` in at most ``keep`` characters: whole, or its start and end around ``…``."""
    if len(text) <= keep:
        return text
    head = (keep - len(ELIDED)) // 2
    tail = keep - len(ELIDED) - head
    return text[:head] + ELIDED + text[len(text) - tail :]


def _shared_prefix(first: str, last: str) -> str:
    """The characters ``first`` and ``last`` (the least and greatest of sorted ids, so every id's
    shared prefix) start with alike."""
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]
