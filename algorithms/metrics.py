"""Per-round, per-replica metrics recorded by the driver (``fedbounds.algorithms.run.run``).

An algorithm exposes what it computed through an :class:`Observation` (its output point ``x``, its normal-map
variable ``z`` where it has one, its prox parameter ``gamma``, and per-round scalars such as the uplink count).
Each metric here maps (problem, params, observation) to an array of shape ``(R,)``, or to ``None`` when it does
not apply (no ``z`` for the normal map, no ``grad_F`` on the problem, ...).

Metric names (design contract):

* ``psi_gap``             psi(x_t) - psi*   (psi* from ``problem.solution()``)
* ``psi``                 psi(x_t)
* ``normal_map_sq``       ||F_nor^gamma(z_t)||^2, F_nor^gamma(z) = grad f(prox(z)) + (z - prox(z))/gamma
                          (FedNMap reconstruction, section 2.1 [V])
* ``natural_residual_sq`` ||F_nat^gamma(x_t)||^2, F_nat^gamma(x) = x - prox(x - gamma grad f(x)) (section 3 [I]),
                          with the algorithm's gamma or, if it has none, ``params["gamma_eval"]``
* ``grad_F_sq``           ||grad F(x_t)||^2 (smooth composite problems with ``grad_F``)
* ``F``                   F(x_t)
* ``dist_sq``             ||x_t - x*||^2
* ``gamma_emp``, ``eta``, ``uplink``: per-round values the algorithm reports in ``Observation.per_round``
  (row t + 1 holds round t; row 0 holds what the initial state reports, which must be finite: 0 by
  convention, so that sums over rows, e.g. the total uplink, come out right).

An algorithm may also report any other metric itself in ``Observation.per_round`` (for example ``F`` and
``grad_F_sq`` when it computes them anyway); a reported value takes precedence over the generic formula.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from fedbounds.algorithms.base import Solution, natural_residual, normal_map

PER_ROUND = ("gamma_emp", "eta", "uplink")
METRIC_NAMES = ("psi_gap", "psi", "normal_map_sq", "natural_residual_sq", "grad_F_sq", "F", "dist_sq", *PER_ROUND)


@dataclass(frozen=True)
class Observation:
    """What the driver can measure on a state of ``R`` replicas.

    x: (R, p) output point x_t; z: (R, p) normal-map variable z_t or None; gamma: the algorithm's prox
    parameter (None if it has none); per_round: metric name -> (R,) array or scalar reported by the algorithm
    (per-round values such as ``uplink`` describe the round just completed).
    """

    x: np.ndarray
    z: np.ndarray | None = None
    gamma: float | None = None
    per_round: Mapping[str, Any] = field(default_factory=dict)


class MetricContext:
    """The problem and validated params of a run, with the solution fetched once, on first use."""

    def __init__(self, problem: Any, params: Mapping[str, Any]) -> None:
        self.problem = problem
        self.params = params
        self._solution: Solution | None = None
        self._solution_error: Exception | None = None

    @property
    def solution(self) -> Solution | None:
        if self._solution is None and self._solution_error is None:
            solve = getattr(self.problem, "solution", None)
            if solve is None:
                self._solution_error = AttributeError("problem has no solution()")
            else:
                try:
                    self._solution = solve()
                except NotImplementedError as err:
                    self._solution_error = err
        return self._solution


def _sq(v: np.ndarray) -> np.ndarray:
    return np.einsum("...p,...p->...", v, v)


def psi(ctx: MetricContext, obs: Observation) -> np.ndarray:
    return np.asarray(ctx.problem.psi(obs.x), dtype=float)


def psi_gap(ctx: MetricContext, obs: Observation) -> np.ndarray | None:
    sol = ctx.solution
    return None if sol is None else psi(ctx, obs) - sol.psi_star


def normal_map_sq(ctx: MetricContext, obs: Observation) -> np.ndarray | None:
    if obs.z is None or obs.gamma is None:
        return None
    return _sq(normal_map(ctx.problem, obs.z, obs.gamma))


def natural_gamma(ctx: MetricContext, obs: Observation) -> float | None:
    """The gamma of the natural residual: the algorithm's own, else ``params['gamma_eval']``, else None."""
    if obs.gamma is not None:
        return float(obs.gamma)
    g = ctx.params.get("gamma_eval")
    return None if g is None else float(g)


def natural_residual_sq(ctx: MetricContext, obs: Observation) -> np.ndarray | None:
    gamma = natural_gamma(ctx, obs)
    return None if gamma is None else _sq(natural_residual(ctx.problem, obs.x, gamma))


def grad_F_sq(ctx: MetricContext, obs: Observation) -> np.ndarray | None:
    g = getattr(ctx.problem, "grad_F", None)
    return None if g is None else _sq(np.asarray(g(obs.x), dtype=float))


def F(ctx: MetricContext, obs: Observation) -> np.ndarray | None:
    f = getattr(ctx.problem, "F", None)
    return None if f is None else np.asarray(f(obs.x), dtype=float)


def dist_sq(ctx: MetricContext, obs: Observation) -> np.ndarray | None:
    sol = ctx.solution
    return None if sol is None else _sq(obs.x - sol.x_star)


def _reported(name: str) -> Callable[[MetricContext, Observation], np.ndarray | None]:
    def metric(ctx: MetricContext, obs: Observation) -> np.ndarray | None:
        return None  # only ever reported by the algorithm, through Observation.per_round

    metric.__name__ = name
    return metric


METRICS: dict[str, Callable[[MetricContext, Observation], np.ndarray | None]] = {
    "psi_gap": psi_gap,
    "psi": psi,
    "normal_map_sq": normal_map_sq,
    "natural_residual_sq": natural_residual_sq,
    "grad_F_sq": grad_F_sq,
    "F": F,
    "dist_sq": dist_sq,
    **{name: _reported(name) for name in PER_ROUND},
}


def _value(name: str, ctx: MetricContext, obs: Observation) -> np.ndarray | None:
    if name in obs.per_round:
        return np.broadcast_to(np.asarray(obs.per_round[name], dtype=float), obs.x.shape[:-1])
    return METRICS[name](ctx, obs)


def applicable(ctx: MetricContext, obs: Observation) -> tuple[str, ...]:
    """The metric names that apply to this problem and observation, in ``METRIC_NAMES`` order."""
    return tuple(name for name in METRIC_NAMES if _value(name, ctx, obs) is not None)


def evaluate(names: tuple[str, ...], ctx: MetricContext, obs: Observation) -> dict[str, np.ndarray]:
    """Evaluate ``names``; a ValueError names any metric that does not apply here."""
    out: dict[str, np.ndarray] = {}
    for name in names:
        if name not in METRICS:
            raise ValueError(f"metrics: unknown metric {name!r}; allowed: {', '.join(METRIC_NAMES)}")
        value = _value(name, ctx, obs)
        if value is None:
            raise ValueError(f"metrics: {name!r} does not apply to this algorithm and problem")
        out[name] = np.asarray(value, dtype=float)
    return out
