"""How every report writes the quantities it shows, so that a table and a page say the same."""

from __future__ import annotations

import math

#: what :func:`duration` shows for a time that is not known
UNKNOWN = "–"
#: what :func:`duration` shows for a member or group that never catches up
NEVER = "never"


def duration(seconds: float | None) -> str:
    """``seconds`` the way a person reads a wait: ``45 s``, ``12 min``, ``3.5 h``; ``never``
    for infinity, ``–`` when unknown."""
    if seconds is None or math.isnan(seconds):
        return UNKNOWN
    if math.isinf(seconds):
        return NEVER
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
