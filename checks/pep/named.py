"""A PEP's named Points and Expressions, evaluated from a Gram matrix and values given over its exact rows' leaves.

:func:`fedbounds.checks.pep.solve.solve_once` gets a worst case's named evaluations (what a replay realises as an
instance) from PEPit's own solve: PEPit factors its Gram matrix, sets every leaf Point and leaf Expression, and each
named object is then evaluated from its decomposition over the leaves (``decomposition_dict``;
:func:`fedbounds.checks.pep.solve._evaluate`). A solve of the exact rows instead
(:func:`fedbounds.checks.pep.certificate.problem_of`, :func:`fedbounds.checks.pep.precondition.solve_problem`, and the
continuation :func:`fedbounds.checks.pep.precondition.solve_path`, which is how the PEPs at Theorem 5's printed steps
are read: docs/fednmap-reconstruction.md §10.5, §10.6) returns the Gram matrix G and the values F over the rows' leaf
indices, in the original basis (``run.gram``: the exact power-of-two rescaling G = diag(d) G' diag(d), F = diag(f) F'
is already undone there). :func:`named_evaluations` maps them back:

1. the builder is run once more; the leaves of its prepared rows are indexed exactly as ``problem_of`` indexes them
   (points by PEPit's counter, values by first appearance, the objective tau first: :func:`leaf_order`);
2. G and F are written at the leaves' PEPit counters (a leaf in no row stays 0), and PEPit's own
   ``_eval_points_and_function_values`` factors G (eigendecomposition; negative eigenvalues, a solver's rounding, set
   to 0) and sets the leaves;
3. the named objects are evaluated by ``solve._evaluate``, the path ``solve_once`` takes.

The report says what the factorisation changed: ``clipped`` (the most negative eigenvalue set to 0, as a positive
number), and ``row_mismatch``: the largest difference, over the rows, between the row evaluated on (G, F) directly and
PEPit's own constraint evaluated at the factored leaves. That difference is the clip's effect when the leaves are
mapped right, and of the order of the rows when they are not.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["leaf_order", "named_evaluations", "row_values", "row_violation", "truncate"]


def leaf_order(pep: Any) -> tuple[dict[Any, int], dict[Any, int]]:
    """(leaf Point -> Gram index, leaf Expression -> value index) of a prepared PEP, as
    :func:`fedbounds.checks.pep.certificate.problem_of` indexes its rows: points sorted by their PEPit counter, values
    in order of first appearance with the objective tau at 0."""
    pts: dict[Any, int] = {}
    vals: dict[Any, int] = {pep.objective: 0}
    for c in pep._list_of_prepared_constraints:
        for key in c.expression.decomposition_dict:
            if isinstance(key, tuple):
                for p in key:
                    pts.setdefault(p, p.counter)
            elif not (isinstance(key, int | float) and key == 1):
                vals.setdefault(key, len(vals))
    return {p: k for k, p in enumerate(sorted(pts, key=lambda p: pts[p]))}, vals


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
