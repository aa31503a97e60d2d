"""Doubling searches on a step size: the largest factor over a theorem's maximum at which a claim still held,
and its record in a check result (the first failure becomes the negative control)."""

from __future__ import annotations

from collections.abc import Callable

from fedbounds.checks.core.verdict import INCONCLUSIVE, Verdict
from fedbounds.checks.registry import CheckResult, Curve, Plot

#: the doubling search stops after this many doublings (factor 2^MAX_DOUBLINGS)
MAX_DOUBLINGS = 14


def doubling_search(verdict_at: Callable[[float], Verdict],
                    max_doublings: int = MAX_DOUBLINGS) -> tuple[list[tuple[float, Verdict]], float]:
    """Evaluate ``verdict_at(2^k)`` for k = 0, 1, ... until a verdict is not ``holds`` (or the cap); returns the
    tried (factor, verdict) pairs and the largest factor that held (0 if factor 1 did not)."""
    tried: list[tuple[float, Verdict]] = []
    largest = 0.0
    for k in range(max_doublings + 1):
        f = float(2**k)
        v = verdict_at(f)
        tried.append((f, v))
        if not v.holds:
            break
        largest = f
    return tried, largest


def record_search(res: CheckResult, tried: list[tuple[float, Verdict]], largest: float, what: str, plot: Plot) -> None:
    res.verdicts.append(tried[0][1].with_details(search=what, factor=1.0))
    last_f, last_v = tried[-1]
    if last_v.holds:
        ctrl = Verdict(last_v.claim_id, f"{what}: no failure up to x{last_f:g}", last_v.observed, last_v.bound, last_v.ci_low,
                       last_v.ci_high, str(INCONCLUSIVE), last_v.slack, last_v.exact, {**last_v.details, "search": what})
    else:
        ctrl = last_v
    res.negatives.append(ctrl.with_details(control=f"{what} doubled to x{last_f:g} (first failure of the doubling search)"))
    res.tightness[what] = {"largest_factor_that_held": largest, "first_failure": None if last_v.holds else last_f,
                           "tried": [[f, v.status, v.slack] for f, v in tried]}
    plot.curves.append(Curve(what, [f for f, _ in tried], [max(v.slack, 1e-12) if v.slack == v.slack else 1e-12 for _, v in tried]))


