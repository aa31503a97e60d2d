"""Worst cases searched, not assumed (design.md, principle 4): an adversarial search over the instances and
parameters a claim's hypotheses allow, maximising observed / bound.

A claim's check describes its search space as :class:`Dimension` s (the instance family, the dimension, the
conditioning, the heterogeneity, sigma^2, the start point, each step size as a fraction of its maximum under the
claim's conditions, Q, n, m) and an objective that builds the instance at a point, runs it, and returns
observed / bound at the rounds where the claim is informative. :func:`search_worst` maximises it with scipy's
differential evolution on the unit cube (seeded, so a reported worst case can be rebuilt from its point and seed)
under a hard budget of objective evaluations, and returns a :class:`WorstCase`.

The worst ratio found is the claim's ``tightness``: far below 1 means the bound is loose by that factor over
what was searched, which is itself a finding. :func:`calibrated_scale` turns it into the calibrated negative
control of principle 3: the bound multiplied by ``ratio / 2`` sits a factor 2 below the worst case seen, so a
check with teeth must call it violated there.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import differential_evolution

__all__ = ["Dimension", "SearchBudgetExhausted", "WorstCase", "calibrated_scale", "search_worst"]


@dataclass(frozen=True)
class Dimension:
    """One axis of the search space.

    ``low``/``high``: the range (inclusive); ``log``: searched on a log scale (positive ranges only);
    ``integer``: rounded to an integer; ``choices``: a categorical axis (``low``/``high`` ignored), e.g. the
    instance family.
    """

    name: str
    low: float = 0.0
    high: float = 1.0
    log: bool = False
    integer: bool = False
    choices: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        if self.choices:
            return
        if not (math.isfinite(self.low) and math.isfinite(self.high)) or self.low > self.high:
            raise ValueError(f"dimension {self.name}: need finite low <= high, got [{self.low}, {self.high}]")
        if self.log and self.low <= 0:
            raise ValueError(f"dimension {self.name}: a log-scale range must be positive, got low = {self.low}")

    def value(self, u: float) -> Any:
        """The value at ``u`` in [0, 1]."""
        u = min(max(float(u), 0.0), 1.0)
        if self.choices:
            return self.choices[min(int(u * len(self.choices)), len(self.choices) - 1)]
        if self.log:
            v = math.exp(math.log(self.low) + u * (math.log(self.high) - math.log(self.low)))
        else:
            v = self.low + u * (self.high - self.low)
        if self.integer:
            return int(min(max(round(v), math.ceil(self.low)), math.floor(self.high)))
        return v

    def unit(self, value: Any) -> float:
        """The position in [0, 1] of ``value`` (the inverse of :meth:`value`, for seeding the search)."""
        if self.choices:
            return (self.choices.index(value) + 0.5) / len(self.choices)
        if self.high == self.low:
            return 0.5
        if self.log:
            return (math.log(value) - math.log(self.low)) / (math.log(self.high) - math.log(self.low))
        return (value - self.low) / (self.high - self.low)


@dataclass
class WorstCase:
    """The result of a search: the largest observed / bound found, where, and how it was searched."""

    ratio: float
    point: dict[str, Any]
    seed: int
    evaluations: int
    history: list[tuple[dict[str, Any], float]] = field(default_factory=list)
    failures: int = 0

    @property
    def loose_by(self) -> float:
        """bound / observed at the worst case: how loose the bound is over what was searched."""
        return math.inf if self.ratio <= 0 else 1.0 / self.ratio

    def to_dict(self) -> dict[str, Any]:
        return {
            "worst_ratio": self.ratio,
            "loose_by": self.loose_by,
            "instance": dict(self.point),
            "seed": self.seed,
            "evaluations": self.evaluations,
            "failed_evaluations": self.failures,
        }


class SearchBudgetExhausted(Exception):
    """Raised inside the objective wrapper to stop the optimiser once the budget is spent."""


def search_worst(
    objective: Callable[[Mapping[str, Any]], float],
    space: Sequence[Dimension],
    *,
    budget: int,
    seed: int = 0,
    starts: Sequence[Mapping[str, Any]] = (),
) -> WorstCase:
    """Maximise ``objective(point)`` (observed / bound) over ``space`` with at most ``budget`` evaluations.

    ``starts`` are points evaluated first and placed in the initial population (for example the check's
    default instance, or a worst case replayed from a PEP solution). An evaluation that raises
    ``FloatingPointError``, ``ArithmeticError`` or ``ValueError``, or returns a non-finite value, counts as a
    failure with ratio 0 (a point outside the claim's domain is not a worst case). Deterministic given
    ``seed``.
    """
    if budget < 1:
        raise ValueError(f"budget must be >= 1, got {budget}")
    if not space:
        raise ValueError("the search space has no dimension")
    names = [d.name for d in space]
    if len(set(names)) != len(names):
        raise ValueError(f"duplicate dimension names in {names}")
    history: list[tuple[dict[str, Any], float]] = []
    failures = 0

    def point_at(u: np.ndarray) -> dict[str, Any]:
        return {d.name: d.value(x) for d, x in zip(space, u)}

    def evaluate(point: dict[str, Any]) -> float:
        nonlocal failures
        if len(history) >= budget:
            raise SearchBudgetExhausted
        try:
            r = float(objective(point))
        except (FloatingPointError, ArithmeticError, ValueError):
            r = math.nan
        if not math.isfinite(r):
            failures += 1
            r = 0.0
        history.append((point, r))
        return r

    init = [np.array([d.unit(s[d.name]) for d in space]) for s in starts]
    for u in init:
        if len(history) < budget:
            evaluate(point_at(u))
    dim = len(space)
    popsize = max(4, min(15, (budget - len(history)) // max(1, 3 * dim)))
    rng = np.random.default_rng(seed)
    # at most a third of the budget in the initial population, so that a small (quick-profile) budget still runs
    # generations of differential evolution instead of only sampling its initial population
    population = rng.random((max(5, min(popsize * dim, (budget - len(history)) // 3)), dim))
    for k, u in enumerate(init[: len(population)]):
        population[k] = np.clip(u, 0.0, 1.0)
    if len(history) < budget:
        try:
            differential_evolution(
                lambda u: -evaluate(point_at(u)),
                bounds=[(0.0, 1.0)] * dim,
                init=population,
                maxiter=10_000,
                tol=0.0,
                atol=0.0,
                seed=seed,
                polish=False,
                updating="immediate",
            )
        except SearchBudgetExhausted:
            pass
    best_point, best = max(history, key=lambda h: h[1])
    return WorstCase(best, best_point, seed, len(history), history, failures)


def calibrated_scale(worst_ratio: float) -> float:
    """The factor for the calibrated control: the bound times ``worst_ratio / 2`` sits a factor 2 below the
    worst observed / bound found, so it must come out violated there (the planted bug of the mutation harness: a bound
    divided by twice its measured slack)."""
    if not (math.isfinite(worst_ratio) and worst_ratio > 0):
        raise ValueError(f"a calibrated control needs a positive finite worst ratio, got {worst_ratio}")
    return worst_ratio / 2.0
