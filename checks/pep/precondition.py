"""Preconditioned solves and exact proofs of PEPit-built PEPs whose plain SDP the solvers cannot read.

At Theorem 5's printed steps the deterministic FedNMap PEP (docs/fednmap-reconstruction.md §10) mixes rows of order
1 with rows of order eta_hat^2 (about 1e-6) and a worst case whose Gram matrix is of rank well below its size: on the
plain SDP Clarabel raises and SCS stops ``optimal_inaccurate`` (the (n, Q, T) = (2, 2, *) points). The first
tools fix the scale, not the problem: :func:`solve_problem` solves any exact
:class:`~fedbounds.checks.pep.certificate.Problem` (PEPit's rows, or rows a builder writes itself: the client-symmetric
reduced PEP of :mod:`fedbounds.checks.fednmap.spep.reduced`) over one PSD block per component with every row divided by
its largest coefficient (rows-only scaling), and, given a previous solution, with the Gram basis and the values
rescaled by exact powers of two (:func:`solve_preconditioned`: three such solves); :func:`prove_rescaled` runs the
prover's interior-dual step and exact restoration on the rescaled rows and checks the result against the original
rows. Then

* :func:`solve_robust`: a first solve that reads *something* (Clarabel; else SCS at a loose tolerance, whose
  ``optimal_inaccurate`` Gram matrix is only used for its scale; else SCS tighter), then Clarabel rescaled by the
  last solution ``rounds`` times, then SCS in the final basis as the second solver (two solvers agreeing, as
  :func:`fedbounds.checks.pep.solve.certify` asks);
* :func:`prove_robust`: an exact certificate of ``worst case <= bound``, trying in turn (i) the rescaled prover
  :func:`prove_rescaled` (solver duals moved towards an interior dual of the
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

Named evaluations (:func:`named_evaluations`): a replay needs a worst case's named Points and Expressions, which
:func:`fedbounds.checks.pep.solve.solve_once` gets from PEPit's own solve. A solve here returns G and F over the exact
rows' leaves, in the original basis (``run.gram``: :func:`solve_problem` undoes the rescaling). They are written at
the leaves' PEPit counters (the rows' leaf order is :func:`fedbounds.checks.pep.certificate.leaf_order`'s, the one
:func:`fedbounds.checks.pep.certificate.problem_of` uses), PEPit's own ``_eval_points_and_function_values`` factors G
(eigendecomposition, negative eigenvalues set to 0) and sets the leaves, and the named objects are evaluated by
``solve._evaluate``, the path ``solve_once`` takes. Its report: ``clipped`` (the most negative eigenvalue set to 0),
``row_mismatch`` (the largest difference between a row evaluated on (G, F) and PEPit's constraint at the factored
leaves: the clip's effect when the leaves are mapped right, of the order of the rows when they are not), and, with a
``rank_tol``, the rank kept, the largest eigenvalue dropped and the rows' violation at the truncated G.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
from fedbounds.checks.pep.certificate import leaf_order

__all__ = ["ROOMS", "STARTERS", "WIDTHS", "blocks", "conditioning", "leaf_order", "named_evaluations", "prove_rescaled",
           "prove_robust", "row_values", "row_violation", "solve_path", "solve_preconditioned", "solve_problem", "solve_robust",
           "truncate"]


def blocks(pb: Any) -> list[list[int]]:
    """The Gram indices split into the connected components of the rows' entries (i, j): no row couples two
    components, so G >= 0 may be imposed per component (the off-diagonal parts are then free and 0 is as good as any
    value) with the same optimal value; here they are diag(M, D)."""
    parent = list(range(pb.points))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for r in pb.rows:
        for i, j, _ in r.gram:
            parent[find(i)] = find(j)
    comp: dict[int, list[int]] = {}
    for i in range(pb.points):
        comp.setdefault(find(i), []).append(i)
    return sorted(comp.values())


def solve_problem(pb: Any, solver: str, solver_options: Mapping[str, Any] | None = None,
                  scale: tuple[np.ndarray, np.ndarray] | None = None, penalty: float = 0.0) -> Any:
    """Maximise the objective value of ``pb`` (a :class:`fedbounds.checks.pep.certificate.Problem`) over one PSD
    block per component of :func:`blocks`: a :class:`fedbounds.checks.pep.solve.SolverRun` whose multipliers are in
    the order of ``pb.rows`` (the prover's starting points) and whose dual is -sum_k y_k c_k.

    Preconditioning, which changes neither the value nor the meaning of the multipliers: every row is divided by its
    largest coefficient (its multiplier multiplied back), and ``scale`` = (d, f) writes G = diag(d) G' diag(d) and
    F = diag(f) F' (a congruence: G >= 0 exactly when G' >= 0), so that the solver sees a Gram matrix and values of
    order 1 (:func:`solve_preconditioned`). ``run.gram`` holds (the Gram matrix, the values) in the original scale.
    ``penalty`` e adds e tr(G') to the objective: the multipliers are then a dual whose residual is >= e I in the
    scaled basis, a strictly interior dual of ``pb`` (what an exact certificate is rounded from: :func:`prove_rescaled`)."""
    import cvxpy as cp
    import scipy.sparse as sps
    from fedbounds.checks.pep.bounded import SolverLimit, bounded
    from fedbounds.checks.pep.solve import SCS_OPTIONS, SolverRun

    solver = solver.upper()
    opts = dict(solver_options or (SCS_OPTIONS if solver == "SCS" else {}))
    t0 = time.perf_counter()
    comps = blocks(pb)
    where: dict[int, tuple[int, int]] = {i: (b, k) for b, c in enumerate(comps) for k, i in enumerate(c)}
    offsets = np.cumsum([0, *(len(c) ** 2 for c in comps)])
    offF = int(offsets[-1])

    def col(i: int, j: int) -> int:
        (b, u), (_, v) = where[i], where[j]
        return int(offsets[b]) + u * len(comps[b]) + v

    d, f = scale if scale is not None else (np.ones(pb.points), np.ones(pb.values))
    weight = np.ones(len(pb.rows))
    data: dict[str, tuple[list, list, list, list, list]] = {"inequality": ([], [], [], [], []), "equality": ([], [], [], [], [])}
    for k, r in enumerate(pb.rows):
        ri, ci, dv, cs, pos = data[r.kind]
        m = len(cs)
        g = [(i, j, float(c) * d[i] * d[j]) for i, j, c in r.gram]
        vals = [(v, float(c) * f[v]) for v, c in r.values]
        big = max([abs(c) for *_, c in g] + [abs(c) for _, c in vals] + [abs(float(r.constant))])
        w = 1.0 / big if big > 0 else 1.0
        weight[k] = w
        for i, j, c in g:
            if i == j:
                ri.append(m), ci.append(col(i, i)), dv.append(c * w)
            else:
                for u, v in ((i, j), (j, i)):
                    ri.append(m), ci.append(col(u, v)), dv.append(c * w / 2)
        for v, c in vals:
            ri.append(m), ci.append(offF + v), dv.append(c * w)
        cs.append(float(r.constant) * w)
        pos.append(k)
    size = offF + pb.values
    mats = {kind: (sps.csr_matrix((dv, (ri, ci)), shape=(len(cs), size)), np.array(cs), pos)
            for kind, (ri, ci, dv, cs, pos) in data.items()}
    Xs = [cp.Variable((len(c), len(c)), PSD=True) for c in comps]
    F = cp.Variable(pb.values)
    x = cp.hstack([*(cp.reshape(X, (X.shape[0] ** 2,), order="C") for X in Xs), F])
    Ai, ci_, pi = mats["inequality"]
    Ae, ce, pe = mats["equality"]
    cons = [Ai @ x + ci_ <= 0]
    if len(pe):
        cons.append(Ae @ x + ce == 0)
    goal = f[pb.objective] * F[pb.objective] + (penalty * sum(cp.trace(X) for X in Xs) if penalty else 0)
    prob = cp.Problem(cp.Maximize(goal), cons)
    status = ""
    with warnings.catch_warnings(), bounded():
        warnings.simplefilter("ignore", UserWarning)  # "Solution may be inaccurate": the status says so
        try:
            prob.solve(solver=solver, **opts)
            status = str(prob.status)
        except SolverLimit as exc:
            status = f"limit: {exc}"
        except Exception as exc:  # a solver's own failure is an answer (status "error: ..."), never a crash
            status = f"error: {type(exc).__name__}: {str(exc)[:120]}"
    dual = primal = viol = min_eig = gram = None
    y = None
    if status in ("optimal", "optimal_inaccurate") and x.value is not None:
        primal = float(prob.value)
        li = np.asarray(cons[0].dual_value, dtype=float).ravel()
        le = np.asarray(cons[1].dual_value, dtype=float).ravel() if len(pe) else np.zeros(0)
        dual = -float(li @ ci_) - float(le @ ce)
        xv = np.asarray(x.value, dtype=float)
        viol = max([float(np.max(Ai @ xv + ci_)), *([float(np.max(np.abs(Ae @ xv + ce)))] if len(pe) else [])])
        min_eig = min(float(np.linalg.eigvalsh(X.value).min()) for X in Xs)
        y = np.zeros(len(pb.rows))
        y[pi], y[pe] = li, le
        y *= weight
        G = np.zeros((pb.points, pb.points))
        for c, X in zip(comps, Xs, strict=True):
            G[np.ix_(c, c)] = X.value
        gram = (G * np.outer(d, d), np.asarray(F.value, dtype=float) * f)
    return SolverRun(solver=solver, status=status, dual=dual, primal=primal, seconds=time.perf_counter() - t0,
                     primal_violation=viol, gram_min_eig=min_eig, multipliers=y, gram=gram,
                     options={**opts, "blocks": tuple(len(c) for c in comps), "rows": len(pb.rows)})


def solve_preconditioned(pb: Any, solver: str = "CLARABEL", rounds: int = 3,
                         solver_options: Mapping[str, Any] | None = None) -> list[Any]:
    """:func:`solve_problem` repeated with the Gram matrix and the values rescaled to order 1 by the previous
    solution (its diagonal, its values), ``rounds`` times: every run (a prover can start from each)."""
    return _rescaled_runs(pb, [solve_problem(pb, solver, solver_options)], rounds - 1, solver, solver_options)


def _rescaled_runs(pb: Any, runs: list[Any], rounds: int, solver: str = "CLARABEL",
                   solver_options: Mapping[str, Any] | None = None) -> list[Any]:
    """``runs`` with up to ``rounds`` more solves of ``pb`` appended, each rescaled by the latest run that has a Gram
    matrix (:func:`_scaling`); none has one: nothing to rescale by, no more solves."""
    for _ in range(rounds):
        last = next((r for r in reversed(runs) if r.gram is not None), None)
        if last is None:
            break
        runs.append(solve_problem(pb, solver, solver_options, scale=_scaling(last)))
    return runs


def _pow2(x: np.ndarray) -> np.ndarray:
    """Each entry rounded to the nearest power of two (exact in binary and in rationals)."""
    return np.exp2(np.round(np.log2(x)))


def _scaling(run: Any) -> tuple[np.ndarray, np.ndarray]:
    """(d, f) of :func:`solve_problem` from a run's solution: powers of two near the square roots of its Gram diagonal
    and its values' sizes, floored at 1e-6 of the largest (the objective's value is not rescaled)."""
    G, F = run.gram
    diag = np.sqrt(np.clip(np.diag(G), 0.0, None))
    d = np.maximum(diag, 1e-6 * max(float(diag.max(initial=0.0)), 1e-300))
    f = np.maximum(np.abs(F), 1e-6 * max(float(np.abs(F).max(initial=0.0)), 1e-300))
    f[0] = 1.0
    return _pow2(d), _pow2(f)


def _scaled(pb: Any, d: np.ndarray, f: np.ndarray) -> tuple[Any, list[Fraction]]:
    """``pb`` in the basis of :func:`solve_problem`'s ``scale`` (d, f powers of two) with every row multiplied by a
    power of two w_k near 1/(its largest coefficient): exactly, so a dual y' of it is the dual y_k = w_k y'_k of ``pb``
    with the same value, and its residual is diag(d) S(y) diag(d) (PSD exactly when S(y) is), its value part
    diag(f) times ``pb``'s. Returns the scaled problem and the w_k."""
    from fedbounds.checks.pep.certificate import Row, problem_from_rows

    D, Fv = [Fraction(float(x)) for x in d], [Fraction(float(x)) for x in f]
    rows, weights = [], []
    for r in pb.rows:
        g = [(i, j, c * D[i] * D[j]) for i, j, c in r.gram]
        vals = [(k, c * Fv[k]) for k, c in r.values]
        big = max([abs(float(c)) for *_, c in g] + [abs(float(c)) for _, c in vals] + [abs(float(r.constant))])
        w = Fraction(float(_pow2(np.array([1.0 / big]))[0])) if big > 0 else Fraction(1)
        weights.append(w)
        rows.append(Row(r.kind, tuple((i, j, c * w) for i, j, c in g), tuple((k, c * w) for k, c in vals), r.constant * w))
    return problem_from_rows(rows, pb.points, pb.values), weights


#: the relative rooms a proof is tried at, smallest first
WIDTHS = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 3e-2, 1e-1)


def prove_rescaled(pb: Any, runs: Sequence[Any], widths: Sequence[float] = WIDTHS) -> dict[str, Any] | None:
    """An exact certificate of ``pb``'s worst case <= v + w |v| for the smallest relative room w that gives one, or None.

    v is the last optimal run's dual value. The prover's steps (:mod:`fedbounds.checks.pep.certificate`: each solver
    dual moved towards a strictly interior dual, rounded, its value part restored exactly) run on ``pb`` rescaled
    exactly by that run's solution (:func:`_scaled`), where the solvers are accurate and the restoration moves the
    residual little; the exact multipliers are mapped back to ``pb``'s rows and checked against ``pb`` itself
    (:func:`fedbounds.checks.pep.certificate.certificate_of`)."""
    t0 = time.perf_counter()
    cert = _rescaled_certificate(pb, runs, widths, faced=False)
    if cert is not None:
        cert["seconds_to_prove"] = round(time.perf_counter() - t0, 3)
    return cert


def _rescaled_certificate(pb: Any, runs: Sequence[Any], widths: Sequence[float], faced: bool) -> dict[str, Any] | None:
    """:func:`prove_rescaled`'s search; ``faced``: with one facial-reduction step on the rescaled rows imposed exactly
    (S w = 0 for the face's directions w; None when the rows have no face), step (ii) of :func:`prove_robust`."""
    from fedbounds.checks.pep.certificate import _candidates, _exact, certificate_of, face, rational

    opt = [r for r in runs if r.status == "optimal" and r.gram is not None and r.multipliers is not None]
    if not opt:
        return None
    v = float(opt[-1].dual)
    pbs, w = _scaled(pb, *_scaling(opt[-1]))
    W = face(pbs) if faced else None
    if faced and not W:
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
                cert["width"] = width
                if faced:
                    cert["face_directions"] = len(W)
                return cert
    return None


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
    _rescaled_runs(pb, runs, rounds)
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
    for route, attempt in (("rescaled", lambda: prove_rescaled(pb, runs, widths)),
                           ("interior", lambda: _interior(pb, value, rooms)),
                           ("face", lambda: _rescaled_certificate(pb, runs, widths, faced=True) if face_step else None)):
        cert = attempt()
        if cert is not None:
            cert["route"] = route
            cert["seconds_to_prove"] = round(time.perf_counter() - t0, 3)
            return cert
    return None


def row_values(pb: Any, gram: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each row of the exact problem ``pb`` (:class:`fedbounds.checks.pep.certificate.Problem`) evaluated on (G, F), in
    floats: <A_k, G> + a_k . F + c_k (an off-diagonal coefficient counts both entries)."""
    out = np.empty(len(pb.rows))
    for k, r in enumerate(pb.rows):
        out[k] = (sum(float(c) * gram[i, j] for i, j, c in r.gram) + sum(float(c) * values[v] for v, c in r.values)
                  + float(r.constant))
    return out


def truncate(gram: np.ndarray, rank_tol: float) -> tuple[np.ndarray, int, float]:
    """(G with its eigenvalues below ``rank_tol`` times the largest set to 0, the rank kept, the largest eigenvalue
    dropped relative to the largest). ``rank_tol`` = 0: negative eigenvalues only."""
    w, V = np.linalg.eigh((gram + gram.T) / 2)
    keep = w > rank_tol * max(float(w.max(initial=0.0)), 0.0)
    dropped = float(w[~keep].max(initial=0.0)) / max(float(w.max(initial=0.0)), 1e-300)
    return (V[:, keep] * w[keep]) @ V[:, keep].T, int(keep.sum()), max(dropped, 0.0)


def row_violation(pb: Any, gram: np.ndarray, values: np.ndarray) -> float:
    """The largest violation of ``pb``'s rows at (G, F): an inequality's positive part, an equality's magnitude."""
    v = row_values(pb, gram, values)
    kinds = np.array([r.kind == "equality" for r in pb.rows])
    return float(np.max(np.where(kinds, np.abs(v), np.maximum(v, 0.0)), initial=0.0))


def named_evaluations(build: Callable[[], Any], gram: np.ndarray, values: np.ndarray,
                      pb: Any = None, rank_tol: float = 0.0) -> tuple[dict[str, Any], dict[str, float]]:
    """(the builder's named evaluations at (G, F), the report of the module docstring).

    ``build`` returns ``(pep, named)`` as for :func:`fedbounds.checks.pep.solve.solve_once`; ``gram`` (points x points)
    and ``values`` are over the leaves of ``problem_of(build)`` (``pb``, rebuilt when not given), in its basis: a
    :func:`fedbounds.checks.pep.precondition.solve_problem` run's ``gram``. Raises ValueError when the sizes differ
    from the builder's rows.

    ``rank_tol`` > 0 first sets G's eigenvalues below ``rank_tol`` times its largest to 0 (:func:`truncate`): the
    directions an interior-point solve leaves at its own accuracy, which no instance need have. The report then adds
    ``rank``, ``truncated`` (the largest eigenvalue dropped, relative) and ``row_violation`` (the rows' largest violation
    at the G used: what the truncation cost, to be read against the solver's own feasibility)."""
    import contextlib
    import io

    from fedbounds.checks.pep.certificate import problem_of
    from fedbounds.checks.pep.solve import _evaluate
    from PEPit.expression import Expression
    from PEPit.point import Point

    pb = problem_of(build) if pb is None else pb
    G, F = np.asarray(gram, dtype=float), np.asarray(values, dtype=float)
    if G.shape != (pb.points, pb.points) or F.shape != (pb.values,):
        raise ValueError(f"a Gram matrix of {pb.points} points and {pb.values} values is needed, got {G.shape} and {F.shape}")
    extra: dict[str, float] = {}
    if rank_tol > 0:
        G, rank, dropped = truncate(G, rank_tol)
        extra = {"rank": rank, "truncated": dropped, "row_violation": row_violation(pb, G, F)}
    built = build()
    pep, named = built if isinstance(built, tuple) else (built, {})
    with contextlib.redirect_stdout(io.StringIO()):
        pep._prepare_constraints(verbose=0)
    pts, vals = leaf_order(pep)
    if len(pts) != pb.points or len(vals) != pb.values:
        raise ValueError(f"the builder's rows have {len(pts)} points and {len(vals)} values, the problem {pb.points} and {pb.values}")
    idx = np.array([p.counter for p in sorted(pts, key=pts.__getitem__)], dtype=int)
    G_full = np.zeros((Point.counter, Point.counter))
    G_full[np.ix_(idx, idx)] = (G + G.T) / 2
    F_full = np.zeros(Expression.counter)
    for e, k in vals.items():
        F_full[e.counter] = F[k]
    low = float(np.linalg.eigvalsh(G_full).min())
    pep._eval_points_and_function_values(F_full, G_full, verbose=0)
    direct = row_values(pb, G, F)
    factored = np.array([float(c.expression.eval()) for c in pep._list_of_prepared_constraints])
    report = {"clipped": max(0.0, -low), "row_mismatch": float(np.max(np.abs(direct - factored), initial=0.0)),
              "largest_eigenvalue": float(np.linalg.eigvalsh(G_full).max()), **extra}
    return _evaluate(named), report
