"""A registry filled by the modules of a list, as ``strategies/registry.py`` is: each module
registers what it defines (a decorator of its own), the modules are imported when the registry
is first asked (so that they may import it without a cycle), and entries are listed in the
list's order. The input formats, the snapshot formats and the pipeline's sources use it; adding
one of them is a new module and its name in the list."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")
Decorated = TypeVar("Decorated", bound=Callable[..., object])


class ModuleRegistry(Generic[T]):
    def __init__(self, package: str, modules: tuple[str, ...], what: str) -> None:
        #: the modules, in the order their entries are listed
        self.modules = tuple(f"{package}.{m}" for m in modules)
        self.what = what
        self._entries: dict[str, tuple[str, T]] = {}

    def add(self, name: str, module: str, entry: T) -> None:
        """Registers ``entry`` as ``name``, defined in ``module``."""
        if name in self._entries:
            raise ValueError(f"{self.what} {name!r} registered twice")
        self._entries[name] = (module, entry)

    def registering(
        self, name: str, entry: Callable[[Decorated], T]
    ) -> Callable[[Decorated], Decorated]:
        """A decorator that registers as ``name`` the entry made of the function it decorates
        (and leaves the function as it is)."""

        def register(function: Decorated) -> Decorated:
            self.add(name, function.__module__, entry(function))
            return function

        return register

    def entries(self) -> list[T]:
        """Every entry, in the modules' order (a module's own in the order it registers them)."""
        for module in self.modules:
            importlib.import_module(module)
        rank = {module: i for i, module in enumerate(self.modules)}
        ordered = sorted(self._entries.values(), key=lambda e: rank.get(e[0], len(rank)))
        return [entry for _, entry in ordered]
