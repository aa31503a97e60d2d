"""Searches on a step size past a theorem's condition: the largest factor over its maximum at which a claim still
held (doubling), the smallest factor at which it is violated *without divergence* (doubling, then bisection on
log f), and their record in a check result: that smallest violation becomes the negative control, recorded with
:func:`fedbounds.checks.verdicts.controls.control` (the one thing changed, the factor, where it was violated, and
divergence, which never counts as the control firing)."""

from __future__ import annotations

import math
from collections.abc import Callable

from fedbounds.checks.registry import CheckResult, Curve, Plot
from fedbounds.checks.verdicts.controls import control
from fedbounds.checks.verdicts.verdict import INCONCLUSIVE, Verdict

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


def smallest_violating_factor(verdict_at: Callable[[float], Verdict], *, first: float = 2.0, cap: float = 2.0**MAX_DOUBLINGS,
                              refine: int = 5) -> tuple[float | None, Verdict | None, list[tuple[float, str, bool]]]:
    """The smallest factor f >= ``first`` whose verdict is violated without divergence: doubling until the first
    violated verdict, then ``refine`` bisections on log f between the last factor that was not violated and it
    (a violated but diverged run counts as "too far": the bisection moves below it). Returns (factor, its verdict,
    the tried (factor, status, diverged) triples); (None, None, tried) when none was found up to ``cap``."""
    tried: list[tuple[float, str, bool]] = []
    lo, hi, v_hi = first / 2.0, None, None
    f = first
    while f <= cap:
        v = verdict_at(f)
        tried.append((f, v.status, bool(v.details.get("diverged"))))
        if v.violated:
            hi, v_hi = f, v
            break
        lo, f = f, 2.0 * f
    if hi is None or v_hi is None:
        return None, None, tried
    best, v_best = (None, None) if v_hi.details.get("diverged") else (hi, v_hi)
    for _ in range(refine):
        mid = math.sqrt(lo * hi)
        v = verdict_at(mid)
        tried.append((mid, v.status, bool(v.details.get("diverged"))))
        if v.violated:
            hi = mid
            if not v.details.get("diverged"):
                best, v_best = mid, v
        else:
            lo = mid
    return best, v_best, tried


def _where(v: Verdict) -> object:
    """Where a verdict was violated: its ``worst_round`` if the check recorded one, else the compared point."""
    if "worst_round" in v.details:
        return int(v.details["worst_round"])
    return f"point {v.details.get('worst_index', '?')} of the comparison"


def record_search(res: CheckResult, tried: list[tuple[float, Verdict]], largest: float, what: str, plot: Plot,
                  verdict_at: Callable[[float], Verdict] | None = None, refine: int = 5) -> None:
    """Record a doubling search: the verdict at factor 1, the tightness (largest factor that held, first failure)
    and the negative control: the first failure, or with ``verdict_at`` the smallest violating factor without
    divergence between the largest that held and it (``refine`` bisections on log f)."""
    res.verdicts.append(tried[0][1].with_details(search=what, factor=1.0))
    last_f, last_v = tried[-1]
    factor, ctrl = last_f, last_v
    if last_v.holds:
        ctrl = Verdict(last_v.claim_id, f"{what}: no failure up to x{last_f:g}", last_v.observed, last_v.bound, last_v.ci_low,
                       last_v.ci_high, str(INCONCLUSIVE), last_v.slack, last_v.exact, {**last_v.details, "search": what})
    elif verdict_at is not None:
        f, v, more = smallest_violating_factor(verdict_at, first=max(largest, 1.0) * 2.0, cap=last_f, refine=refine)
        if v is not None and f is not None:
            factor, ctrl = f, v
        res.tightness.setdefault("refinement", {})[what] = [list(t) for t in more]
    diverged = ctrl.details.get("diverged")
    label = f"{what} x{factor:.4g} past its condition (the smallest violating factor found" + (", by bisection)" if verdict_at else ")")
    res.negatives.append(control(ctrl, changed=what, what=label, before=1.0, after=factor,
                                 violated_at=_where(ctrl) if ctrl.violated else None, diverged=diverged))
    res.tightness[what] = {"largest_factor_that_held": largest, "first_failure": None if last_v.holds else last_f,
                           "smallest_violating_factor": factor if ctrl.violated and not diverged else None,
                           "tried": [[f, v.status, v.slack] for f, v in tried]}
    plot.curves.append(Curve(what, [f for f, _ in tried], [max(v.slack, 1e-12) if v.slack == v.slack else 1e-12 for _, v in tried]))
