"""Linear speedup (FedNMap, Theorem 5 / Theorem 8 and Table 1: rates sigma^2/(nQT)): rounds to a target.

In the noise-dominated regime the rounds needed to reach a fixed target accuracy fall as 1/(nQ), so the
log-log slopes of rounds-to-target against n and against Q should both be -1. This module holds the
measurement (:func:`rounds_to_target`, imported by the sweeps) and the check built on it
(:func:`check_linear_speedup`, in :mod:`checks.speedup_check`).
"""

from __future__ import annotations

import numpy as np

from checks.stats import mean_ci

__all__ = ["rounds_to_target", "target_curve"]


def target_curve(metric: np.ndarray, *, upper: bool = False, level: float = 0.95) -> np.ndarray:
    """The per-round curve that is compared with a target: the replica mean of ``metric`` (shape
    ``(rounds + 1, R)``), or its one-sided upper confidence bound when ``upper``."""
    m = np.asarray(metric, dtype=float)
    if m.ndim == 1:
        m = m[:, None]
    if m.ndim != 2 or m.shape[0] == 0:
        raise ValueError(f"metric must have shape (rounds + 1, R), got {np.shape(metric)}")
    mean, _low, high = mean_ci(m.T, level=level, one_sided=True)
    return np.atleast_1d(high if upper else mean)


def rounds_to_target(metric: np.ndarray, target: float, *, upper: bool = False, level: float = 0.95) -> int | None:
    """First round t such that the replica mean of ``metric`` (or, with ``upper``, its one-sided upper
    confidence bound at ``level``) is <= ``target`` at t and at every later recorded round.

    ``metric`` has shape ``(rounds + 1, R)`` (row t = after t rounds; a 1-d array is one replica). Returns
    ``None`` when the curve never stays below the target within the recorded rounds (a plateau above the
    target, or a non-finite value at the end: non-finite rounds never count as below).
    """
    if not np.isfinite(target):
        raise ValueError(f"target must be finite, got {target!r}")
    c = target_curve(metric, upper=upper, level=level)
    below = np.isfinite(c) & (c <= target)
    if not below[-1]:
        return None
    bad = np.flatnonzero(~below)
    return int(bad[-1] + 1) if bad.size else 0
