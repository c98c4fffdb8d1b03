"""How `balanced` ran, for the tables a benchmark writes: compiled (scripts/compile.py) or not."""

from __future__ import annotations

from lagassign.strategies import compiled


def build() -> str:
    if compiled("balanced"):
        return "compiled with mypyc (scripts/compile.py)"
    return "interpreted (not compiled: scripts/compile.py has not run)"
