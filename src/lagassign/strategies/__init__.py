"""Strategies, one module each, behind :class:`Strategy`; the registry maps names to them.

Modules in :data:`COMPILED` may run compiled: scripts/compile.py (run by scripts/setup.sh)
builds them with mypyc into C extensions beside their sources, which Python imports instead of
the ``.py``, and only while the source is the one they were built from
(:mod:`lagassign.extensions`). The plans are the same (tests/test_compiled.py);
:func:`interpreted` gives the module from its source beside it.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from lagassign import extensions
from lagassign.strategies import registry
from lagassign.strategies.base import RebalanceProtocol, Strategy
from lagassign.strategies.registry import UnknownStrategy, create, names

__all__ = [
    "COMPILED",
    "RebalanceProtocol",
    "Strategy",
    "UnknownStrategy",
    "compiled",
    "create",
    "interpreted",
    "names",
    "unregistered",
]

#: the strategy modules scripts/compile.py compiles with mypyc
COMPILED = tuple(
    module.removeprefix(f"{__name__}.")
    for module in extensions.MODULES
    if module.startswith(f"{__name__}.")
)


def compiled(module: str) -> bool:
    """Whether the strategy module ``module`` (e.g. ``"balanced"``) runs compiled."""
    loaded = importlib.import_module(f"{__name__}.{module}")
    return not (loaded.__file__ or "").endswith(".py")


def interpreted(module: str) -> ModuleType:
    """The strategy module ``module`` run from its source, beside the one imported (compiled
    or not), its strategies not registered: for tests that reach into its internals (a
    compiled module's constants and methods cannot be patched) and benchmarks that compare."""
    name = f"{__name__}._interpreted_{module}"
    if name not in sys.modules:
        unregistered(name, extensions.source(f"{__name__}.{module}"))
    return sys.modules[name]


def unregistered(name: str, source: Path) -> ModuleType:
    """The strategy module at ``source`` (a file of any name) imported as ``name``, its
    strategies not registered: a second copy of one, as :func:`interpreted` or a benchmark
    comparing an earlier revision's has it."""
    registry._quiet = True
    try:
        return _from_source(name, source)
    finally:
        registry._quiet = False


def _from_source(name: str, source: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, source)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[name] = loaded  # before it runs: its dataclasses look their module up
    spec.loader.exec_module(loaded)
    return loaded


def _source_if_stale(module: str) -> None:
    """Imports ``module`` from its source when its compiled extension was built from another
    source: Python would otherwise import the stale extension before the edited ``.py``."""
    source = extensions.source(f"{__name__}.{module}")
    if not extensions.extension(source).exists() or extensions.current(source):
        return  # not compiled (Python imports the source anyway), or compiled from this one
    setattr(sys.modules[__name__], module, _from_source(f"{__name__}.{module}", source))


for _module in COMPILED:
    _source_if_stale(_module)
