"""Protocol name -> strategy class. The CLI, the consumer-group adapters and the pipeline all
look strategies up here, so a strategy registered once is available everywhere."""

from __future__ import annotations

import importlib
from typing import Any

from lagassign.strategies.base import Strategy

_MODULES = ("range", "roundrobin", "sticky", "fair", "lag", "balanced")
_REGISTRY: dict[str, type[Strategy]] = {}


class UnknownStrategy(KeyError):
    def __str__(self) -> str:
        return f"unknown strategy {self.args[0]!r} (known: {', '.join(names())})"


#: while a module is imported a second time from its source (``strategies.interpreted``): its
#: classes are not registered, the first import's are
_quiet = False


def register(cls: type[Strategy]) -> type[Strategy]:
    if _quiet:
        return cls
    if cls.name in _REGISTRY:
        raise ValueError(f"strategy {cls.name!r} registered twice")
    _REGISTRY[cls.name] = cls
    return cls


def _load() -> None:
    # Importing a module registers its classes. Done lazily so that strategy modules may import
    # the registry without a cycle; the order here is the order `names()` lists them in.
    for module in _MODULES:
        importlib.import_module(f"lagassign.strategies.{module}")


def names() -> list[str]:
    """Registered names, in ``_MODULES`` order whichever module happened to be imported first."""
    _load()
    rank = {f"lagassign.strategies.{module}": i for i, module in enumerate(_MODULES)}
    return sorted(_REGISTRY, key=lambda n: rank.get(_REGISTRY[n].__module__, len(rank)))


def create(name: str, **options: Any) -> Strategy:
    _load()
    try:
        cls = _REGISTRY[name]
    except KeyError:
        raise UnknownStrategy(name) from None
    return cls(**options)
