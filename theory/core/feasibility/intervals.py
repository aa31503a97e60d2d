"""One-dimensional feasible sets: the bound a condition places on a parameter, the others held fixed;
and integer searches in integer arithmetic (any size)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# ---------------------------------------------------------------------------------------------------------
# one-dimensional feasible sets: the bound a condition places on a parameter, the others held fixed
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParamBound:
    """The values of one parameter that a condition admits, the other parameters held at the chosen point.

    ``lower``/``upper`` are ``None`` where the condition places no bound on that side (other than > 0).
    For integer parameters (``integer``), the bounds are the admissible integers (floor / ceil).
    """

    parameter: str
    lower: float | None
    upper: float | None
    value: float | None
    meets: bool | None
    integer: bool = False
    note: str = ""

    def describe(self) -> str:
        """``0.1 <= gamma <= 0.3``, ``m <= 12``, ``eta_s`` unconstrained."""
        fmt = (lambda x: f"{int(x)}") if self.integer else (lambda x: f"{x:.6g}")
        if self.lower is None and self.upper is None:
            what = self.note or ("no admissible value" if self.meets is False else "unconstrained")
            return f"{self.parameter}: {what}"
        parts = []
        if self.lower is not None:
            parts.append(f"{fmt(self.lower)} <=")
        parts.append(self.parameter)
        if self.upper is not None:
            parts.append(f"<= {fmt(self.upper)}")
        return " ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "parameter": self.parameter,
            "lower": self.lower,
            "upper": self.upper,
            "value": self.value,
            "meets": self.meets,
            "integer": self.integer,
            "note": self.note,
        }


def _search_ok(margin: Callable[[float], float]) -> Callable[[float], bool]:
    def ok(p: float) -> bool:
        try:
            g = margin(p)
        except (ValueError, ZeroDivisionError, OverflowError):
            return False
        return math.isfinite(g) and g >= 0

    return ok


def _int_ok(ok: Callable[[float], bool]) -> Callable[[int], bool]:
    """``ok`` on an integer of any size (False where it has no float value)."""

    def at(k: int) -> bool:
        try:
            x = float(k)
        except OverflowError:
            return False
        return ok(x)

    return at


def feasible_interval(
    margin: Callable[[float], float],
    value: float,
    *,
    cap: float | None = None,
    integer: bool = False,
    decades: int = 14,
    per_decade: int = 8,
) -> tuple[float | None, float | None, bool]:
    """The feasible interval of ``margin(p) >= 0`` around ``value`` on ``(0, cap)``.

    Scans a logarithmic grid of ``decades`` decades either side of ``value`` and refines every end point
    by bisection (to double precision). Returns ``(lower, upper, any_feasible)``: ``None`` for an end with
    no bound inside the scanned range. If ``value`` itself is infeasible, the feasible interval nearest to
    it is returned. Intended for the conditions of the two papers, which are monotone or unimodal in
    each parameter. ``integer``: the ends are the admissible integers, found in integer arithmetic (any
    size: beyond 2^53 a float cannot be stepped by 1).
    """
    ok = _search_ok(margin)
    v = max(value, 1e-300)
    grid = [v * 10 ** (k / per_decade) for k in range(-decades * per_decade, decades * per_decade + 1)]
    grid = [p for p in grid if math.isfinite(p) and (cap is None or p < cap)]
    if not grid:
        return None, None, False
    flags = [ok(p) for p in grid]
    if not any(flags):
        return None, None, False
    centre = min(range(len(grid)), key=lambda i: abs(math.log(grid[i] / v)))
    if not flags[centre]:
        feas = [i for i, f in enumerate(flags) if f]
        centre = min(feas, key=lambda i: abs(i - centre))
    lo_i = centre
    while lo_i > 0 and flags[lo_i - 1]:
        lo_i -= 1
    hi_i = centre
    while hi_i < len(grid) - 1 and flags[hi_i + 1]:
        hi_i += 1
    lower = _refine(ok, grid[lo_i], grid[lo_i - 1]) if lo_i > 0 else None
    if hi_i < len(grid) - 1:
        upper: float | None = _refine(ok, grid[hi_i], grid[hi_i + 1])
    elif cap is not None:
        upper = _refine(ok, grid[hi_i], cap) if not ok(cap) else cap
    else:
        upper = None
    if integer:
        return _integer_ends(ok, lower, upper)
    return lower, upper, True


def _refine(ok: Callable[[float], bool], good: float, bad: float) -> float:
    """Bisection (geometric) between a feasible and an infeasible point, to double precision."""
    for _ in range(200):
        mid = math.sqrt(good * bad)
        if mid in (good, bad) or not mid > 0:
            break
        if ok(mid):
            good = mid
        else:
            bad = mid
    return good


def _integer_ends(ok: Callable[[float], bool], lower: float | None, upper: float | None) -> tuple[float | None, float | None, bool]:
    """The admissible integers' ends of a real feasible interval (integer arithmetic, any size)."""
    at = _int_ok(ok)
    hi_int = None if upper is None else math.floor(upper + 1e-9 * upper)
    lo_int = None
    if lower is not None:
        lo_int = first_true(at, math.ceil(lower - 1e-9 * lower), limit=hi_int)
        if lo_int is None:
            return None, None, False
    if hi_int is not None:
        if hi_int >= 1 and not at(hi_int):  # walk down (galloping) to the largest admissible integer
            top = hi_int
            back = first_true(lambda j: top - j < 1 or at(top - j), 1, floor=1, limit=top)
            hi_int = 0 if back is None else top - back
        if hi_int < 1 or (lo_int is not None and hi_int < lo_int):
            return None, None, False
    return (None if lo_int is None else float(lo_int)), (None if hi_int is None else float(hi_int)), True


def first_true(pred: Callable[[int], bool], hint: int, *, floor: int | None = None, limit: int | None = None) -> int | None:
    """The smallest integer ``k >= floor`` with ``pred(k)``, for a monotone ``pred`` (False ... False True ...).

    ``hint`` is a guess (a rounded real solution); the answer is found from it by galloping and bisection in
    integer arithmetic, so it terminates for integers of any size. ``None`` if ``pred`` is False up to ``limit``
    (default: about 2^1100, beyond every float).
    """
    cap = limit if limit is not None else 2**1100
    k = hint if floor is None else max(hint, floor)
    if k > cap:
        return None
    if pred(k):
        lo = (floor - 1) if floor is not None else k - 1
        step = 1
        while k - step > lo and pred(k - step):  # gallop down while still True
            k -= step
            step *= 2
        bad = max(lo, k - step)
        return _bisect_first(pred, bad, k)
    step = 1
    good = k + step
    while good <= cap and not pred(good):
        k = good
        step *= 2
        good = k + step
    if good > cap:
        if cap > k and pred(cap):
            good = cap
        else:
            return None
    return _bisect_first(pred, k, good)


def last_true(pred: Callable[[int], bool], hint: int, *, limit: int | None = None) -> int:
    """The largest integer ``k >= hint`` with ``pred`` True on ``hint..k``, for ``pred`` True ... True False ...

    ``pred(hint)`` must hold (it is not evaluated). Galloping then bisection: terminates for any size.
    """
    cap = limit if limit is not None else 2**1100
    k, step = hint, 1
    while k + step <= cap and pred(k + step):
        k += step
        step *= 2
    hi = min(k + step, cap + 1)
    while hi - k > 1:
        mid = (k + hi) // 2
        if pred(mid):
            k = mid
        else:
            hi = mid
    return k


def _bisect_first(pred: Callable[[int], bool], bad: int, good: int) -> int:
    while good - bad > 1:
        mid = (bad + good) // 2
        if pred(mid):
            good = mid
        else:
            bad = mid
    return good


def smallest_integer(pred: Callable[[int], bool], start: int = 0, limit: int = 10**18) -> int | None:
    """The smallest integer ``k >= start`` with ``pred(k)``, for a monotone ``pred`` (False ... False True ...).

    Exponential search then bisection; ``None`` if ``pred`` is False up to ``limit``.
    """
    if pred(start):
        return start
    lo, hi = start, max(start + 1, 1)
    while not pred(hi):
        lo = hi
        hi *= 2
        if hi > limit:
            return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if pred(mid):
            hi = mid
        else:
            lo = mid
    return hi
