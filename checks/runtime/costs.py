"""What a ``fedbounds check`` run costs, for the estimate it prints at start (before any heavy import).

The table is measured, not guessed: ``python benchmarks/bench_quick_check.py --write`` runs the quick check, reads
each claim's CPU seconds from its report.json and rewrites :data:`QUICK_CPU_S` and :data:`OVERHEAD_CPU_S` below. A
claim missing from the table (a new one, before the benchmark was rerun) is estimated at :data:`DEFAULT_CPU_S`
and named as such. This module imports nothing heavy: the command prints its first line from it.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Sequence

__all__ = ["DEFAULT_CPU_S", "MEASURED", "OVERHEAD_CPU_S", "QUICK_CPU_S", "Estimate", "estimate", "figure", "matching_ids", "schedule"]

# -- written by benchmarks/bench_quick_check.py --write (do not edit by hand) --------------------------------------
#: where and how the table was measured
MEASURED = '2026-12-04, --jobs 2 on 2 cores, load 1.4: 251 s wall, 459 s CPU'
#: the command's own cost besides the claims (imports, report, plots), CPU seconds
OVERHEAD_CPU_S = 101.6
#: CPU seconds per claim in the quick profile
QUICK_CPU_S: dict[str, float] = {
    'fednmap.theorem8': 54.9,
    'fednmap.theorem8.floor': 31.3,
    'fednmap.theorem5.rate': 34.6,
    'fednmap.nat_nor_relation': 10.0,
    'fednmap.lyapunov': 13.7,
    'fednmap.theorem8.complexity': 24.1,
    'fednmap.theorem5.conditions': 6.2,
    'fednmap.pep.lyapunov_constants': 31.0,
    'fednmap.pep.largest_step': 0.5,
    'fednmap.pep.shape_exponent': 4.3,
    'fednmap.pep.theorem8_exponent': 0.1,
    'fednmap.theorem8.complexity_inside': 2.1,
    'fednmap.spep.lyapunov_windows': 2.1,
    'fednmap.spep.theorem8_existence': 2.5,
    'fednmap.spep.constant_36': 0.1,
    'fednmap.spep.constant_12100': 0.1,
    'ds.lemma5_2': 10.1,
    'ds.lemma5_1': 16.0,
    'ds.theorem5_3': 20.5,
    'ds.corollary_ii': 32.9,
    'ds.constant_step_floor': 24.6,
    'erratum.ds_phi_prefix': 0.2,
    'erratum.constant_gamma_floor': 7.3,
    'erratum.ds_inexactness_gradient_step': 2.2,
    'ds.assumption.small_step': 3.3,
    'ds.pep.lemma5_2': 2.3,
    'ds.pep.absorption': 2.9,
    'ds.corollary_decaying': 14.5,
    'ds.spep.sigma2': 2.5,
    'ds.spep.G2': 0.3,
}
# -- end of the written part -----------------------------------------------------------------------------------------

#: the estimate of a claim the table does not know
DEFAULT_CPU_S = 5.0
#: what starting one worker process costs (a fresh interpreter importing the checks), CPU seconds
WORKER_START_CPU_S = 2.0


def matching_ids(claims: Sequence[str] | None, known: Iterable[str]) -> list[str] | None:
    """The ids of ``known`` that ``claims`` selects (an id, or a family prefix with or without its trailing dot), in
    table order; None when a claim matches nothing here (it may still be registered: the caller decides later)."""
    known = list(known)
    if not claims:
        return known
    out: list[str] = []
    for c in claims:
        c = c[:-1] if c.endswith(".") and len(c) > 1 else c
        hit = [k for k in known if k == c] or [k for k in known if k.startswith(c + ".")]
        if not hit:
            return None
        out.extend(k for k in hit if k not in out)
    return out


def schedule(costs: Sequence[float], jobs: int) -> float:
    """The makespan of ``costs`` on ``jobs`` workers, longest first to the least loaded (how :func:`run_checks`
    hands out claims)."""
    if jobs <= 1:
        return float(sum(costs))
    loads = [0.0] * jobs
    heapq.heapify(loads)
    for c in sorted(costs, reverse=True):
        heapq.heappush(loads, heapq.heappop(loads) + c)
    return max(loads)


class Estimate:
    """The estimate of one run: ``cpu_s`` (all processes), ``wall_s`` (on ``jobs`` idle cores), the ``unknown`` ids."""

    def __init__(self, ids: Sequence[str], profile: str, jobs: int) -> None:
        self.ids, self.profile, self.jobs = list(ids), profile, max(1, int(jobs))
        table = QUICK_CPU_S if profile == "quick" else {}
        self.unknown = [i for i in self.ids if i not in table]
        costs = [table.get(i, DEFAULT_CPU_S) for i in self.ids]
        workers = min(self.jobs, len(costs)) if self.jobs > 1 else 0
        self.cpu_s = OVERHEAD_CPU_S + sum(costs) + workers * WORKER_START_CPU_S
        self.wall_s = OVERHEAD_CPU_S + (WORKER_START_CPU_S if workers else 0.0) + schedule(costs, max(1, workers))
        self.available = profile == "quick"

    def line(self) -> str:
        """``fedbounds check: 22 claims, quick profile, 2 processes: about 60 s (estimate; ...)``."""
        n = len(self.ids)
        procs = f"{self.jobs} process{'es' if self.jobs > 1 else ''}"
        head = f"fedbounds check: {n} claim{'s' if n != 1 else ''}, {self.profile} profile, {procs}"
        if not self.available:
            return f"{head} (no estimate: benchmarks/bench_quick_check.py times the quick profile only)"
        unknown = f"; {len(self.unknown)} not in the cost table, counted {DEFAULT_CPU_S:g} s each" if self.unknown else ""
        return (f"{head}: about {_round(self.wall_s)} s on idle cores (estimate from benchmarks/bench_quick_check.py{unknown})")


def _round(s: float) -> int:
    """Seconds rounded to a figure worth saying (5 s steps under a minute, 10 s above)."""
    step = 5 if s < 60 else 10
    return int(max(step, step * math.ceil(s / step)))


def estimate(ids: Sequence[str], profile: str, jobs: int) -> Estimate:
    return Estimate(ids, profile, jobs)


def figure() -> str:
    """The quick check's time as the README and ``fedbounds check --help`` quote it, from the measured table."""
    if not QUICK_CPU_S:
        return "not measured yet: python benchmarks/bench_quick_check.py --write"
    one, two = (estimate(list(QUICK_CPU_S), "quick", j).wall_s for j in (1, 2))
    return (f"about {_round(two)} s on 2 cores (the default --jobs auto), {_round(one)} s with --jobs 1; measured by "
            "benchmarks/bench_quick_check.py")
