"""Threshold searches over a one-parameter family of certificates, with three-valued probes.

A probe of a parameter value answers ``MEETS`` (certified: the claim holds there), ``FAILS`` (certified: it does not,
or both solvers find the worst case unbounded) or ``UNKNOWN`` (the solvers could not decide). An unknown probe is
never counted as failing: it narrows nothing. Counting it as failing biases every threshold towards the safe side
by an amount nobody controls; measured on FedNMap's committed ``SMALLEST_C0`` table (before this module): the
smallest C_0 at (n, Q, T, k) = (1, 2, 2, 16) came out 0.224 while n = 2, which contains every n = 1 instance, gave
0.128 (docs/fednmap-reconstruction.md §10.3).

Every search returns a :class:`Window`: the threshold lies between ``low`` and ``high`` (both probed and certified on
their own side, or None when no such probe exists), with the undecided probes listed. A window is what a reader
may quote; ``width`` says how well the search pinned the threshold down.

* :func:`smallest_meeting`: the claim is expected to fail below a threshold and hold above it (the smallest C_0);
  ``low`` is the largest certified-failing probe below ``high``, the smallest certified-meeting probe.
* :func:`largest_meeting`: the claim holds below a threshold and fails above it (the largest step, the largest
  absorbed inexactness); ``low`` is the largest certified-meeting probe, ``high`` the smallest certified-failing
  probe above it.

Both assume the decided probes are consistent with one threshold between them (that is what they search for); a
non-monotone family is not detected by the bisection, and the callers say so where it matters. Monotonicity across
a family of problems (n clients contain n - 1 by identical clients) is checked by :func:`nested_consistent`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

__all__ = ["FAILS", "MEETS", "UNKNOWN", "Window", "largest_meeting", "nested_consistent", "smallest_meeting"]

MEETS = "meets"
FAILS = "fails"
UNKNOWN = "unknown"
_OUTCOMES = (MEETS, FAILS, UNKNOWN)

#: a probe: parameter value -> MEETS / FAILS / UNKNOWN
Probe = Callable[[float], str]


@dataclass(frozen=True)
class Window:
    """Where a threshold lies: between ``low`` and ``high`` (see the module docstring for which side is which).

    ``probes``: every (value, outcome) tried, in order; ``unknown``: the values whose probe was undecided.
    ``low``/``high`` None: no certified probe on that side (the threshold is below the first probe, above the last,
    or nothing was decided).
    """

    low: float | None
    high: float | None
    probes: tuple[tuple[float, str], ...] = field(default_factory=tuple)

    @property
    def unknown(self) -> tuple[float, ...]:
        return tuple(v for v, o in self.probes if o == UNKNOWN)

    @property
    def width(self) -> float:
        """high - low (inf when an end is missing)."""
        if self.low is None or self.high is None:
            return math.inf
        return self.high - self.low

    def to_dict(self) -> dict[str, object]:
        return {"low": self.low, "high": self.high, "unknown": list(self.unknown), "probes": [list(p) for p in self.probes]}


def _run(probe: Probe, record: list[tuple[float, str]]) -> Probe:
    def ask(x: float) -> str:
        out = probe(x)
        if out not in _OUTCOMES:
            raise ValueError(f"a probe must answer one of {_OUTCOMES}, got {out!r} at {x!r}")
        record.append((x, out))
        return out

    return ask


def _shrink(ask: Probe, lo: float, hi: float, hi_side: str, rel_tol: float, abs_tol: float,
            unknown_tries: int) -> tuple[float, float]:
    """Shrink [lo, hi], whose ``hi`` end answers ``hi_side`` and ``lo`` end the other decided outcome.

    An unknown midpoint is replaced by the points at 1/4 and 3/4 of the interval (``unknown_tries`` of them); when
    none decides, the interval is returned as it is (the unknown probes stay in the record).
    """
    while hi - lo > max(rel_tol * max(abs(lo), abs(hi)), abs_tol):
        decided = False
        for frac in (0.5, 0.25, 0.75)[: 1 + unknown_tries]:
            x = lo + frac * (hi - lo)
            out = ask(x)
            if out == UNKNOWN:
                continue
            if out == hi_side:
                hi = x
            else:
                lo = x
            decided = True
            break
        if not decided:
            break
    return lo, hi


def smallest_meeting(probe: Probe, grid: Sequence[float], rel_tol: float = 0.02, abs_tol: float = 0.0,
                     unknown_tries: int = 2) -> Window:
    """The smallest value that meets: scan ``grid`` (increasing) up to the first MEETS, then bisect against the
    largest certified FAILS below it. Unknown probes are skipped (never counted as failing)."""
    record: list[tuple[float, str]] = []
    ask = _run(probe, record)
    lo: float | None = None
    hi: float | None = None
    for x in grid:
        out = ask(float(x))
        if out == MEETS:
            hi = float(x)
            break
        if out == FAILS:
            lo = float(x)
    if hi is None or lo is None:
        return Window(lo, hi, tuple(record))
    lo, hi = _shrink(ask, lo, hi, MEETS, rel_tol, abs_tol, unknown_tries)
    return Window(lo, hi, tuple(record))


def largest_meeting(probe: Probe, start: float, stop: float, factor: float = 2.0, rel_tol: float = 0.05,
                    abs_tol: float = 0.0, unknown_tries: int = 2, bisect_from_start: bool = False) -> Window:
    """The largest value that meets. ``start`` must MEET (else the window is empty: nothing certified).

    Default: multiply by ``factor`` up to ``stop`` until a certified FAILS (unknown probes on the way up are skipped,
    never counted as failing), then bisect. ``bisect_from_start``: probe ``stop`` directly and bisect on
    [start, stop]; if ``stop`` is undecided, bisect downwards for a decided probe (the window keeps ``high`` None
    until a certified FAILS is found).
    """
    record: list[tuple[float, str]] = []
    ask = _run(probe, record)
    if ask(float(start)) != MEETS:
        return Window(None, None, tuple(record))
    lo, hi = float(start), None
    if bisect_from_start:
        b = float(stop)
        while True:
            out = ask(b)
            if out == MEETS:
                return Window(b, None, tuple(record))
            if out == FAILS:
                hi = b
                break
            # undecided: look lower for a decided probe, lo staying the certified end
            if b - lo <= max(rel_tol * b, abs_tol):
                return Window(lo, None, tuple(record))
            b = 0.5 * (lo + b)
    else:
        x = lo * factor
        while x <= stop * (1 + 1e-12):
            out = ask(x)
            if out == MEETS:
                lo = x
            elif out == FAILS:
                hi = x
                break
            x *= factor
        if hi is None:
            return Window(lo, None, tuple(record))
    lo, hi = _shrink(ask, lo, hi, FAILS, rel_tol, abs_tol, unknown_tries)
    return Window(lo, hi, tuple(record))


def nested_consistent(smaller: Window, larger: Window, direction: str) -> bool:
    """Whether the windows of two nested problems (``larger``'s class contains ``smaller``'s) are consistent.

    ``direction="smallest"`` (a smallest meeting value, e.g. the smallest C_0: it can only grow with the class):
    inconsistent iff ``larger.high`` < ``smaller.low``. ``direction="largest"`` (a largest meeting value, e.g. the
    largest step: it can only shrink): inconsistent iff ``larger.low`` > ``smaller.high``. Missing ends never make
    a pair inconsistent.
    """
    if direction == "smallest":
        return not (larger.high is not None and smaller.low is not None and larger.high < smaller.low)
    if direction == "largest":
        return not (larger.low is not None and smaller.high is not None and larger.low > smaller.high)
    raise ValueError(f"direction must be 'smallest' or 'largest', got {direction!r}")
