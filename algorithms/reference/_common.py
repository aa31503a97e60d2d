"""Shared pieces of the reference implementations: replaying the oracle draws and recording histories."""

from __future__ import annotations

from typing import Any

import numpy as np

from algorithms.rng import stream


def draw(oracle: Any, problem: Any, points: list[list[np.ndarray]], seed: int, t: int, l: int) -> np.ndarray:
    """One oracle call at (t, l) on the stack of ``points[r][i]``; returns g with g[r, i] for client i, replica r."""
    return oracle.sample(problem, np.array(points, dtype=float), stream(seed, t, l))


def initial(params: dict, key: str, p: int) -> np.ndarray:
    """The initial point ``params[key]`` or zeros."""
    v = params.get(key)
    return np.zeros(p) if v is None else np.array(v, dtype=float)


class History:
    """Collects snapshots of named per-replica lists and stacks them into arrays (rounds + 1, R, ...)."""

    def __init__(self) -> None:
        self._rows: dict[str, list[np.ndarray]] = {}

    def record(self, **fields: list) -> None:
        for name, value in fields.items():
            self._rows.setdefault(name, []).append(np.array(value, dtype=float))

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: np.stack(rows) for name, rows in self._rows.items()}
