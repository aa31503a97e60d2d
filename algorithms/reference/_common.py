"""Shared pieces of the reference implementations: one client's gradient, the replayed oracle noise, histories.

The references compute every stochastic gradient the plain way, one client and one replica at a time:

    g = grad f_i(x) + xi[r, i],

with ``grad f_i(x)`` from :func:`client_grad` (for a quadratic problem H_i x - h_i, read off the problem's
``hessians`` and ``linear``; it shares no code with the vectorised ``problem.grad``) and the noise ``xi`` of
round t, local step l replayed from the engine's stream: the engine calls ``oracle.sample`` once per (t, l) on the
full (R, n, p) stack, and an additive-noise oracle draws its noise there as ``oracle.noise(stream(seed, t, l),
(R, n, p))``; :func:`round_noise` draws that same array and the references read entry ``[r, i]``. This needs an
oracle with additive noise (``GaussianOracle``, ``ExactOracle``: a ``noise(rng, shape)`` method); a minibatch
oracle is a ValueError.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from fedbounds.algorithms.rng import stream


def client_grad(problem: Any, i: int, x: np.ndarray) -> np.ndarray:
    """grad f_i(x) of client i alone at the point x (p,).

    Quadratic problems (``hessians`` (n, p, p), ``linear`` (n, p): f_i(x) = x^T H_i x / 2 - h_i^T x + const)
    give H_i x - h_i. Any other problem evaluates its ``grad`` on a stack with x in row i (the other rows are
    zeros and are not read).
    """
    if hasattr(problem, "hessians") and hasattr(problem, "linear"):
        return problem.hessians[i] @ x - problem.linear[i]
    X = np.zeros((problem.n, problem.p))
    X[i] = x
    return np.asarray(problem.grad(X), dtype=float)[i]


def round_noise(oracle: Any, seed: int, t: int, steps: int, shape: tuple[int, ...]) -> list[np.ndarray]:
    """The additive oracle noise of round t: entry l is ``oracle.noise(stream(seed, t, l), shape)``, l < steps.

    ``shape`` is the engine's stack (R, n, p) (or (R, p) for a one-point draw); the reference reads [r, i].
    """
    noise = getattr(oracle, "noise", None)
    if noise is None:
        raise ValueError(
            f"oracle must add its noise to the exact gradient (a noise(rng, shape) method, e.g. GaussianOracle or "
            f"ExactOracle) for the reference loops to replay it, got {type(oracle).__name__}"
        )
    return [np.asarray(noise(stream(seed, t, l), shape), dtype=float) for l in range(steps)]


def initial(params: dict, key: str, p: int) -> np.ndarray:
    """The initial point ``params[key]`` or zeros."""
    v = params.get(key)
    return np.zeros(p) if v is None else np.array(v, dtype=float)


class History:
    """Collects snapshots of named per-replica lists and stacks them into arrays (rounds + 1, R, ...).

    ``keep`` names the fields to record (None: all); the others are dropped (the benchmark keeps only z and x,
    since the full history of the corrections c is rounds x R x n x p numbers).
    """

    def __init__(self, keep: tuple[str, ...] | None = None) -> None:
        self._rows: dict[str, list[np.ndarray]] = {}
        self._keep = None if keep is None else frozenset(keep)

    def record(self, **fields: list) -> None:
        for name, value in fields.items():
            if self._keep is None or name in self._keep:
                self._rows.setdefault(name, []).append(np.array(value, dtype=float))

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: np.stack(rows) for name, rows in self._rows.items()}
