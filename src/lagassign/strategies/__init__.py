"""Strategies, one module each, behind :class:`Strategy`; the registry maps names to them."""

from __future__ import annotations

from lagassign.strategies.base import RebalanceProtocol, Strategy
from lagassign.strategies.registry import UnknownStrategy, create, names

__all__ = ["RebalanceProtocol", "Strategy", "UnknownStrategy", "create", "names"]
