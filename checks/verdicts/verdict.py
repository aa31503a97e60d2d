"""Verdicts (design.md, principle 4): a measured quantity against a claimed upper bound.

A measured expectation is either exact (linear-Gaussian instances, where moments propagate in closed
form, or a deterministic pointwise quantity) or a Monte Carlo mean with a one-sided confidence interval.
Three outcomes:

* ``holds``: the upper confidence bound lies below the bound (for exact values: the value does);
* ``violated``: the lower confidence bound lies above the bound;
* ``inconclusive``: otherwise.

When one claim is compared at many points at once (every round of a trajectory, several instances) the
confidence level is Bonferroni-corrected, so that "holds everywhere" and "violated somewhere" are
statements at the requested level for the whole family. The slack is bound / observed (> 1: room to
spare), reported at the worst point.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum

import numpy as np
from fedbounds.checks.verdicts.stats import mean_ci

__all__ = ["HOLDS", "INCONCLUSIVE", "VIOLATED", "Verdict", "VerdictStatus", "combine", "compare", "decide", "slack_of"]


class VerdictStatus(StrEnum):
    HOLDS = "holds"
    VIOLATED = "violated"
    INCONCLUSIVE = "inconclusive"

    def __str__(self) -> str:
        return self.value


HOLDS, VIOLATED, INCONCLUSIVE = VerdictStatus.HOLDS, VerdictStatus.VIOLATED, VerdictStatus.INCONCLUSIVE

#: relative tolerance for exact comparisons (floating-point round-off only)
EXACT_RTOL = 1e-9


def _json_float(v: object) -> object:
    if isinstance(v, float | np.floating):
        v = float(v)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return v
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, np.ndarray):
        return [_json_float(x) for x in v.tolist()] if v.ndim else _json_float(v.item())
    if isinstance(v, dict):
        return {str(k): _json_float(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_json_float(x) for x in v]
    return v


def to_json_safe(v: object) -> object:
    """Convert numpy scalars/arrays and non-finite floats ("inf", "-inf", "nan") into strict-JSON values."""
    return _json_float(v)


def _from_json_float(v: object) -> float:
    if isinstance(v, str):
        return float(v)
    return float(v)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Verdict:
    """The outcome of comparing one claim with measurements on one instance.

    ``observed`` is the measured value at the worst point (exact, or a Monte Carlo mean) and
    ``[ci_low, ci_high]`` its one-sided confidence bounds (equal to ``observed`` when ``exact``);
    ``bound`` is the claim's value there; ``slack`` = bound / observed (the smallest over the points).
    """

    claim_id: str
    instance: str
    observed: float
    bound: float
    ci_low: float
    ci_high: float
    status: str
    slack: float
    exact: bool
    details: dict = field(default_factory=dict)

    @property
    def holds(self) -> bool:
        return self.status == HOLDS

    @property
    def violated(self) -> bool:
        return self.status == VIOLATED

    def with_details(self, **extra: object) -> Verdict:
        return replace(self, details={**self.details, **extra})

    def to_dict(self) -> dict:
        """Strict-JSON dictionary (non-finite floats as strings)."""
        d = asdict(self)
        d["status"] = str(self.status)
        return to_json_safe(d)  # type: ignore[return-value]

    @classmethod
    def from_dict(cls, d: dict) -> Verdict:
        kw = dict(d)
        for k in ("observed", "bound", "ci_low", "ci_high", "slack"):
            kw[k] = _from_json_float(kw[k])
        return cls(**kw)


def slack_of(bound: float, observed: float) -> float:
    """bound / observed for an upper bound: ``inf`` when the observed value is <= 0 < bound, ``0`` when the
    bound is <= 0 < observed, ``nan`` when both are <= 0 (checks arrange positive bounds)."""
    if observed > 0 and bound > 0:
        return bound / observed
    if observed <= 0 < bound:
        return math.inf
    if bound <= 0 < observed:
        return 0.0
    return math.nan


def decide(ci_low: float, ci_high: float, bound: float, *, exact: bool = False) -> VerdictStatus:
    """holds if ``ci_high`` <= bound, violated if ``ci_low`` > bound, inconclusive otherwise. Exact values
    (``ci_low == ci_high``) are compared with a relative round-off tolerance ``EXACT_RTOL``."""
    if not (math.isfinite(bound) or bound == math.inf):
        return INCONCLUSIVE
    tol = EXACT_RTOL * max(abs(bound), 1e-300) if exact else 0.0
    if math.isnan(ci_low) or math.isnan(ci_high):
        return INCONCLUSIVE
    if ci_high <= bound + tol:
        return HOLDS
    if ci_low > bound + tol:
        return VIOLATED
    return INCONCLUSIVE


def compare(
    claim_id: str,
    instance: str,
    values: np.ndarray,
    bound: np.ndarray | float,
    *,
    exact: bool,
    level: float = 0.95,
    simultaneous: bool = True,
    details: dict | None = None,
) -> Verdict:
    """Compare measurements with an upper bound at K points (rounds, sizes, ...).

    ``values``: with ``exact``, the exact values, shape ``(K,)`` or scalar; otherwise Monte Carlo samples
    of shape ``(R,)`` or ``(R, K)`` (replicas along axis 0). ``bound``: scalar or ``(K,)``. With
    ``simultaneous`` the one-sided level is Bonferroni-corrected to ``1 - (1 - level) / K``. Overall:
    violated if some point is violated, holds if every point holds, inconclusive otherwise; the reported
    point is the violated one with the largest lower-bound excess, else the inconclusive one with the largest
    upper-bound excess, else the point of least slack.
    """
    v = np.asarray(values, dtype=float)
    if exact:
        obs = np.atleast_1d(v)
        low = high = obs
    else:
        if v.ndim == 0:
            raise ValueError("Monte Carlo values need a replica axis (axis 0)")
        if v.ndim == 1:
            v = v[:, None]
        k = v.shape[1]
        lvl = 1.0 - (1.0 - level) / k if simultaneous and k > 1 else level
        m, lo, hi = mean_ci(v, level=lvl, one_sided=True)
        obs, low, high = np.atleast_1d(m), np.atleast_1d(lo), np.atleast_1d(hi)
    b = np.broadcast_to(np.asarray(bound, dtype=float), obs.shape)
    statuses = [decide(float(lo), float(hi), float(bb), exact=exact) for lo, hi, bb in zip(low, high, b)]
    slacks = np.array([slack_of(float(bb), float(o)) for bb, o in zip(b, obs)])
    if VIOLATED in statuses:
        scale = np.maximum(np.abs(b), 1e-300)
        excess = np.where([s == VIOLATED for s in statuses], (low - b) / scale, -np.inf)
        i = int(np.argmax(excess))
        overall = VIOLATED
    elif all(s == HOLDS for s in statuses):
        finite = np.where(np.isnan(slacks), np.inf, slacks)
        i = int(np.argmin(finite))
        overall = HOLDS
    else:  # the most doubtful point: largest upper-bound excess
        scale = np.maximum(np.abs(b), 1e-300)
        excess = np.where([s == INCONCLUSIVE for s in statuses], (high - b) / scale, -np.inf)
        i = int(np.argmax(excess))
        overall = INCONCLUSIVE
    worst_slack = float(np.nanmin(slacks)) if np.any(~np.isnan(slacks)) else math.nan
    info = {
        "points": int(obs.size),
        "worst_index": i,
        "points_holding": int(sum(s == HOLDS for s in statuses)),
        "points_violated": int(sum(s == VIOLATED for s in statuses)),
        "level": level,
    }
    if not exact:
        info["replicas"] = int(v.shape[0])
    info.update(details or {})
    return Verdict(
        claim_id=claim_id,
        instance=instance,
        observed=float(obs[i]),
        bound=float(b[i]),
        ci_low=float(low[i]),
        ci_high=float(high[i]),
        status=str(overall),
        slack=worst_slack,
        exact=bool(exact),
        details=info,
    )


def combine(verdicts: Sequence[Verdict] | Iterable[Verdict]) -> str:
    """Overall status of several verdicts: violated if any is, holds if all do, inconclusive otherwise."""
    vs = list(verdicts)
    if not vs:
        return str(INCONCLUSIVE)
    if any(v.violated for v in vs):
        return str(VIOLATED)
    if all(v.holds for v in vs):
        return str(HOLDS)
    return str(INCONCLUSIVE)


def worst_slack(verdicts: Iterable[Verdict]) -> float:
    """The smallest finite-or-infinite slack among verdicts (nan if none has one)."""
    s = [v.slack for v in verdicts if not math.isnan(v.slack)]
    return min(s) if s else math.nan
