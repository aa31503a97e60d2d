"""A per-process memo of expensive runs: the checks of one suite share trajectories."""

from __future__ import annotations

from collections.abc import Callable

_CACHE: dict[tuple, object] = {}


def cached(key: tuple, make: Callable[[], object]) -> object:
    """Memoise an expensive run within the process (checks of one suite share trajectories)."""
    if key not in _CACHE:
        _CACHE[key] = make()
    return _CACHE[key]


def clear_cache() -> None:
    _CACHE.clear()
