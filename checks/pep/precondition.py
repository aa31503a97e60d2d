"""Preconditioned solves and exact proofs of PEPit-built PEPs whose plain SDP the solvers cannot read.

At Theorem 5's printed steps the deterministic FedNMap PEP (docs/fednmap-reconstruction.md §10) mixes rows of order
1 with rows of order eta_hat^2 (about 1e-6) and a worst case whose Gram matrix is of rank well below its size: on the
plain SDP Clarabel raises and SCS stops ``optimal_inaccurate`` (the (n, Q, T) = (2, 2, *) points). The tools of
:mod:`fedbounds.checks.fednmap.spep.reduced` fix the scale, not the problem: :func:`~fedbounds.checks.fednmap.spep.
reduced.solve_problem` solves any exact :class:`~fedbounds.checks.pep.certificate.Problem` over one PSD block per
component with every row divided by its largest coefficient (rows-only scaling), and, given a previous solution,
with the Gram basis and the values rescaled by exact powers of two. This module adds

* :func:`solve_robust`: a first solve that reads *something* (Clarabel; else SCS at a loose tolerance, whose
  ``optimal_inaccurate`` Gram matrix is only used for its scale; else SCS tighter), then Clarabel rescaled by the
  last solution ``rounds`` times, then SCS in the final basis as the second solver (two solvers agreeing, as
  :func:`fedbounds.checks.pep.solve.certify` asks);
* :func:`prove_robust`: an exact certificate of ``worst case <= bound``, trying in turn (i) the rescaled prover
  :func:`~fedbounds.checks.fednmap.spep.reduced.prove_reduced` (solver duals moved towards an interior dual of the
  rescaled rows) at rooms 1e-6..1e-1, (ii) the same with one facial-reduction step on the rescaled rows
  (:func:`fedbounds.checks.pep.certificate.face`: directions every dual residual must annihilate, imposed exactly in
  the restoration), (iii) the interior dual of the unscaled rows at the target v (1 + w) for the rooms w of
  :data:`ROOMS` (:func:`fedbounds.checks.pep.certificate.prove`, as
  :func:`fedbounds.checks.fednmap.pep.encoding.descent_proof` does at a claim). They are tried in the order (i),
  (iii), (ii): (ii) is the slowest (a face SDP, then every room) and has not yet given a certificate here. Every
  candidate is checked exactly against ``pb`` itself; the record says which step gave it (``route``) and its room (``width``).

Measured at (n, Q, T) = (2, 2, 2), k = 1: the solution's Gram diagonal is 1e-13 at 7 of its 16 points, so the
rescaling floors those at 1e-6 of the largest and (ii)'s face step then finds exactly those 7 coordinates (an
artefact of the scale: the unscaled rows have no such face, and the restoration on it fails); (i) finds no
certificate at any room (the rescaled rows have no interior dual: margin 2e-11); (iii) proves v (1 + 3e-3) (not
v (1 + 1e-3)); at T = 1 it proves v (1 + 1e-3) with smallest pivot 6e-4.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
from fedbounds.checks.fednmap.spep.reduced import WIDTHS, _scaled, _scaling, prove_reduced, solve_problem

__all__ = ["ROOMS", "STARTERS", "conditioning", "prove_robust", "solve_path", "solve_robust"]

#: the first solves tried, in order, until one returns a Gram matrix (whose scale the next solve uses)
STARTERS: tuple[tuple[str, Mapping[str, Any] | None], ...] = (
    ("CLARABEL", None),
    ("SCS", {"eps_abs": 1e-4, "eps_rel": 1e-4, "max_iters": 20_000}),
    ("SCS", {"eps_abs": 1e-7, "eps_rel": 1e-7, "max_iters": 100_000}),
)
#: SCS in the final basis (the second solver of the two-solver agreement)
SCS_SCALED: Mapping[str, Any] = {"eps_abs": 1e-7, "eps_rel": 1e-7, "max_iters": 100_000}
#: relative rooms of step (iii) of :func:`prove_robust`, smallest first
ROOMS = (1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1, 1.0)


def solve_robust(pb: Any, rounds: int = 3, cross_check: bool = True) -> tuple[list[Any], Any | None]:
    """(Clarabel's runs: the starter(s), then ``rounds`` rescaled solves; SCS's run in the final basis, or None).

    A starter's answer is kept only for its scale; the value read is the last rescaled Clarabel run's. When no
    starter returns a Gram matrix, the runs are the starters' (nothing to rescale by)."""
    runs: list[Any] = []
    for solver, opts in STARTERS:
        runs.append(solve_problem(pb, solver, opts))
        if runs[-1].gram is not None:
            break
    for _ in range(rounds):
        last = next((r for r in reversed(runs) if r.gram is not None), None)
        if last is None:
            break
        runs.append(solve_problem(pb, "CLARABEL", None, scale=_scaling(last)))
    last = next((r for r in reversed(runs) if r.gram is not None and r.solver == "CLARABEL"), None)
    scs = solve_problem(pb, "SCS", SCS_SCALED, scale=_scaling(last)) if cross_check and last is not None else None
    return runs, scs


def solve_path(problems: Sequence[Any], rounds: int = 3, cross_check: bool = True) -> tuple[list[Any], Any | None, list[float | None]]:
    """Continuation: ``problems`` share one Gram layout (the same PEP at step multiples falling to the target, the
    last one); the first is solved by :func:`solve_robust`, each next one from the previous one's scale, ``rounds``
    Clarabel solves each. Returns (the last problem's runs, its SCS cross-check, the value read at each problem).

    Measured at (n, Q) = (2, 2), T = 1, 2: the plain SDP at k = 1 (and at k = 4 with the budget row scaled) makes
    Clarabel raise, and SCS either raise or stop far off, while the path 16, 8, 4, 2, 1 x the printed steps reads
    0.1333, 0.1348, 0.1356, 0.1360, 0.1362 (T = 1), each solve in well under a second."""
    runs, _ = solve_robust(problems[0], rounds, cross_check=False)
    path = [next((r.dual for r in reversed(runs) if r.optimal), None)]
    for pb in problems[1:]:
        last = next((r for r in reversed(runs) if r.gram is not None), None)
        if last is None:
            runs, _ = solve_robust(pb, rounds, cross_check=False)
        else:
            runs = []
            for _ in range(rounds):
                runs.append(solve_problem(pb, "CLARABEL", None, scale=_scaling(last)))
                if runs[-1].gram is None:
                    break
                last = runs[-1]
        path.append(next((r.dual for r in reversed(runs) if r.optimal), None))
    last = next((r for r in reversed(runs) if r.gram is not None and r.solver == "CLARABEL"), None)
    scs = solve_problem(problems[-1], "SCS", SCS_SCALED, scale=_scaling(last)) if cross_check and last is not None else None
    return runs, scs, path


def conditioning(runs: Sequence[Any], scs: Any | None = None) -> dict[str, Any]:
    """What the solves reached: per run its solver, status, value, duality gap, seconds and the smallest eigenvalue of
    its Gram matrix; the last Clarabel run's scale (the spread of the Gram basis' powers of two)."""
    out: dict[str, Any] = {"runs": [{"solver": r.solver, "status": r.status, "value": r.dual, "gap": r.gap,
                                     "seconds": round(r.seconds, 3), "gram_min_eig": r.gram_min_eig}
                                    for r in [*runs, *([scs] if scs is not None else [])]]}
    last = next((r for r in reversed(runs) if r.gram is not None and r.solver == "CLARABEL"), None)
    if last is not None:
        d, _ = _scaling(last)
        out["basis_scale_log2"] = [int(np.log2(d.min())), int(np.log2(d.max()))]
    return out


def _faced(pb: Any, runs: Sequence[Any], widths: Sequence[float]) -> dict[str, Any] | None:
    """Step (ii) of :func:`prove_robust`: :func:`prove_reduced`'s candidates on the rescaled rows with one
    facial-reduction step imposed exactly (S w = 0 for the face's directions w)."""
    from fedbounds.checks.pep.certificate import _candidates, _exact, certificate_of, face, rational

    opt = [r for r in runs if r.status == "optimal" and r.gram is not None and r.multipliers is not None]
    if not opt:
        return None
    v = float(opt[-1].dual)
    pbs, w = _scaled(pb, *_scaling(opt[-1]))
    W = face(pbs)
    if not W:
        return None
    wf = np.array([float(x) for x in w])
    starts = [r.multipliers / wf for r in opt]
    for width in widths:
        delta = width * abs(v)
        bound = rational(v) + Fraction(delta).limit_denominator(10**15)
        for ys, margin in _candidates(pbs, v, delta, starts, W):
            y = _exact(pbs, ys, W)
            cert = None if y is None else certificate_of(pb, [a * b for a, b in zip(y, w, strict=True)], bound, v, delta, margin)
            if cert is not None:
                cert["width"], cert["face_directions"] = width, len(W)
                return cert
    return None


def _interior(pb: Any, value: float, rooms: Sequence[float]) -> dict[str, Any] | None:
    """Step (iii) of :func:`prove_robust`: the interior dual of the unscaled rows at v (1 + w), rounded and checked."""
    from fedbounds.checks.pep.certificate import prove

    for room in rooms:
        cert = prove(pb, value * (1 + room), [], widen=0)
        if cert is not None:
            cert["width"] = room
            return cert
    return None


def prove_robust(pb: Any, runs: Sequence[Any], widths: Sequence[float] = WIDTHS, rooms: Sequence[float] = ROOMS,
                 face_step: bool = True) -> dict[str, Any] | None:
    """An exact certificate of ``pb``'s worst case <= v (1 + w), v the last optimal run's value, for the first route
    and smallest room w that gives one (module docstring), or None. The record adds ``route`` ("rescaled",
    "face" or "interior"), ``width`` and ``seconds_to_prove``."""
    t0 = time.perf_counter()
    opt = [r for r in runs if r.status == "optimal" and r.dual is not None]
    if not opt:
        return None
    value = float(opt[-1].dual)
    for route, attempt in (("rescaled", lambda: prove_reduced(pb, runs, widths)),
                           ("interior", lambda: _interior(pb, value, rooms)),
                           ("face", lambda: _faced(pb, runs, widths) if face_step else None)):
        cert = attempt()
        if cert is not None:
            cert["route"] = route
            cert["seconds_to_prove"] = round(time.perf_counter() - t0, 3)
            return cert
    return None
