"""A PEP with n interchangeable clients, solved in its client-symmetric block form (smaller, and n-fold fewer rows).

Why it is exact. A PEP is a convex SDP in the Gram matrix G of its leaves (and the vector F of its function
values). When the method, the class and the measure are invariant under permuting the clients (FedNMap's are:
every client runs the same local loop on its own f_i from the same server state), the average of an optimal
(G, F) over all permutations is feasible and optimal too. So the worst case is attained at a client-symmetric G:
with the leaves split into shared ones (s of them) and per-client ones (m slots, the same for every client),

    G = [[S, 1' (x) C], [1 (x) C', I_n (x) (A - B) + J_n (x) B]],    F = (F_shared, 1 (x) F_client),

S the shared block, C the shared-client block, A a client with itself, B two different clients (symmetric). The
orthogonal change of client basis (the mean mode 1/sqrt(n) and n - 1 difference modes) block-diagonalises it:

    G >= 0  <=>  M = [[S, sqrt(n) C], [sqrt(n) C', A + (n - 1) B]] >= 0  and  D = A - B >= 0.

We solve for (M, D, F_shared, F_client): one (s + m) and one m block instead of one s + n m block, and every
interpolation row of client i is the row of client 1, and every row of a pair of different clients the row of
clients (1, 2), so duplicate rows are dropped. A slot whose leaves sum to zero over the clients (the normal form's
gradients at x_0, whose mean is 0) has no mean mode: its row of M is removed, which keeps the SDP strictly feasible
(imposing ||sum_i g_i||^2 = 0 on a full Gram matrix would not).

Exact certificates (:mod:`fedbounds.checks.pep.certificate`) are of the PEP the builder makes through its PEPit rows,
with the block multipliers lifted to those rows. For that PEP to be the full one, a builder states its zero means as
rows too (:meth:`Labels.impose_zero_mean`: 0 = 0 in the block form, left out of the solve; their lifted multipliers
are then set so that the full residual is PSD exactly when the block residuals are), and may pin a slot to 0 that a
normal form allows (:meth:`Labels.pin_zero`: left out of the solve, multipliers 0).

The builder labels its leaves (:class:`Labels`); anything else about the PEP is PEPit's (its prepared scalar
constraints, the objective leaf). The dual value is rebuilt from the solver's multipliers (an upper bound when
optimal), as PEPit does for the full SDP, so the certificate keeps its meaning and its duality gap.

Reference: symmetry reduction of SDPs (Gatermann and Parrilo 2004; de Klerk 2010); in PEP, client symmetry of
decentralised methods (Colla and Hendrickx 2023).
"""

from __future__ import annotations

import contextlib
import io
import math
import time
import warnings
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from fedbounds.checks.pep.bounded import SolverLimit, bounded
from fedbounds.checks.pep.solve import SCS_OPTIONS, Builder, SolverRun

__all__ = ["Labels", "block_sizes", "lift", "solve_symmetric"]


@dataclass
class Labels:
    """Which leaf is whose: shared leaves and per-client slots, filled in while a PEP is built.

    ``points`` / ``values`` map a leaf Point / leaf Expression to ``("s", k)`` (shared, index k) or ``("c", i, a)``
    (client i, slot a). ``zero_mean``: the point slots a with sum_i leaf(i, a) = 0. ``zero_mean_rows``: the PEPit
    constraints :meth:`impose_zero_mean` added (the block form drops them: they are 0 = 0 there). ``pinned_rows``:
    those :meth:`pin_zero` added (the block form drops them too: it solves the PEP without them, a relaxation that
    the builder vouches has the same value).
    """

    n: int
    points: dict[Any, tuple] = field(default_factory=dict)
    values: dict[Any, tuple] = field(default_factory=dict)
    zero_mean: set[int] = field(default_factory=set)
    zero_mean_rows: list[Any] = field(default_factory=list)
    pinned_rows: list[Any] = field(default_factory=list)
    _counts: dict[tuple, int] = field(default_factory=dict)

    def _next(self, kind: str, owner: int | None) -> tuple:
        key = (kind, owner)
        k = self._counts.get(key, 0)
        self._counts[key] = k + 1
        return ("s", k) if owner is None else ("c", owner, k)

    def point(self, p: Any, owner: int | None) -> Any:
        """Label a new leaf Point (``owner`` None: shared; else the client)."""
        self.points[p] = self._next("p", owner)
        return p

    def value(self, e: Any, owner: int | None) -> Any:
        """Label a new leaf Expression (a function value)."""
        self.values[e] = self._next("v", owner)
        return e

    def impose_zero_mean(self, problem: Any) -> None:
        """Add sum_i leaf(i, a) = 0 for each zero-mean slot a to ``problem`` as PEPit rows, so that the PEP the builder
        makes (the one an exact certificate is of) is the full PEP, not a relaxation of it. With w_a = sum_i leaf(i, a):
        <w_a, s_k> = 0 for every shared leaf s_k and <w_a, w_b> = 0 for every slot b. For a Gram matrix G >= 0 the row
        ||w_a||^2 = 0 alone says w_a = 0; the others are there for the dual: their multipliers set the mean-mode row
        of slot a in the full residual to anything, which is what lets the block form's multipliers (where that row
        does not exist) be lifted to a dual of the full PEP (:func:`lift`). In the block form each of these rows is
        0 = 0. Call it once, after the last leaf is made."""
        if self.zero_mean_rows:
            raise RuntimeError("impose_zero_mean called twice")
        s, m, _, _ = self.check()
        shared = [None] * s
        slots: list[list[Any]] = [[None] * self.n for _ in range(m)]
        for p, lab in self.points.items():
            if lab[0] == "s":
                shared[lab[1]] = p
            else:
                slots[lab[2]][lab[1]] = p
        w = [sum(col[1:], col[0]) for col in slots]
        for a in sorted(self.zero_mean):
            others = [*shared, *(w[b] for b in range(m) if b not in self.zero_mean or b >= a)]
            for q in others:
                row = (w[a] * q) == 0
                problem.add_constraint(row)
                self.zero_mean_rows.append(row)

    def pin_zero(self, problem: Any, slot: int) -> None:
        """Add leaf(i, slot) = 0 for every client i to ``problem`` as PEPit rows <leaf(i, slot), q> = 0, q every leaf.
        For a builder whose PEP does not change in value when that slot is 0 (a normal form: an invariance of the
        class maps every instance to one with the slot 0): the block form solves without these rows, and an exact
        certificate of the pinned PEP starts from its lifted multipliers (0 on these rows, still a dual: rows were
        only added), while these rows give the prover room along the slot's directions, which in the unpinned PEP
        can be a face every dual lies on (an invariance in a new direction is a recession direction). Call it once,
        after the last leaf is made."""
        if self.pinned_rows:
            raise RuntimeError("pin_zero called twice")
        pinned = [p for p, lab in self.points.items() if lab[0] == "c" and lab[2] == slot]
        done: set[int] = set()
        for p in pinned:
            done.add(id(p))
            for q in self.points:
                if id(q) in done and q is not p:
                    continue
                row = (p * q) == 0
                problem.add_constraint(row)
                self.pinned_rows.append(row)

    def check(self) -> tuple[int, int, int, int]:
        """(s, m, shared values, client value slots), after checking that every client has the same slots."""
        def sizes(table: dict[Any, tuple]) -> tuple[int, int]:
            shared = sum(1 for v in table.values() if v[0] == "s")
            per = [sum(1 for v in table.values() if v[0] == "c" and v[1] == i) for i in range(self.n)]
            if len(set(per)) > 1:
                raise ValueError(f"clients have different numbers of leaves {per}: the PEP is not client-symmetric")
            return shared, per[0] if per else 0

        s, m = sizes(self.points)
        vs, vm = sizes(self.values)
        return s, m, vs, vm


def block_sizes(labels: Labels) -> tuple[int, int]:
    """The sizes of the two PSD blocks: M (shared + client slots with a mean mode) and D (client slots)."""
    s, m, _, _ = labels.check()
    return s + m - len(labels.zero_mean), (m if labels.n > 1 else 0)


class _Map:
    """Rows of the reduced SDP: x = [vec(M), vec(D), F_shared, F_client, tau], each constraint a x + c (<= or ==) 0."""

    def __init__(self, labels: Labels, objective: Any, every_mean: bool = False) -> None:
        self.n = labels.n
        s, m, vs, vm = labels.check()
        self.s, self.m = s, m
        # every_mean: keep the zero-mean slots' mean modes too (the full PEP's residual, to lift a dual into it)
        mean_slots = [a for a in range(m) if every_mean or a not in labels.zero_mean]
        self.mean_index = {a: s + j for j, a in enumerate(mean_slots)}
        self.dM, self.dD = s + len(mean_slots), block_sizes(labels)[1]
        self.offD = self.dM * self.dM
        self.offFs = self.offD + self.dD * self.dD
        self.offFc = self.offFs + vs
        self.tau = self.offFc + vm
        self.size = self.tau + 1
        self.labels, self.objective = labels, objective

    def _M(self, u: int, v: int) -> int:
        return u * self.dM + v  # row-major; symmetric variable, so (u, v) and (v, u) are one entry

    def _D(self, a: int, b: int) -> int:
        return self.offD + a * self.dD + b

    def _gram(self, p: Any, q: Any, coef: float, row: dict[int, float]) -> None:
        lp, lq = self.labels.points[p], self.labels.points[q]
        if lp[0] == "c" and lq[0] == "s":
            lp, lq = lq, lp
        n = self.n
        if lp[0] == "s" and lq[0] == "s":
            _add(row, self._M(lp[1], lq[1]), coef)
        elif lp[0] == "s":  # shared k with client (i, a): C[k, a] = M[k, mean(a)] / sqrt(n)
            if lq[2] in self.mean_index:
                _add(row, self._M(lp[1], self.mean_index[lq[2]]), coef / math.sqrt(n))
        else:  # A = (M' + (n - 1) D)/n for one client, B = (M' - D)/n for two
            a, b = lp[2], lq[2]
            same = lp[1] == lq[1]
            if a in self.mean_index and b in self.mean_index:
                _add(row, self._M(self.mean_index[a], self.mean_index[b]), coef / n)
            if n > 1:
                _add(row, self._D(a, b), coef * ((n - 1) / n if same else -1.0 / n))

    def row(self, expression: Any) -> tuple[dict[int, float], float]:
        row: dict[int, float] = {}
        const = 0.0
        for key, coef in expression.decomposition_dict.items():
            coef = float(coef)
            if isinstance(key, tuple):
                self._gram(key[0], key[1], coef, row)
            elif key is self.objective:
                _add(row, self.tau, coef)
            elif isinstance(key, int | float) and key == 1:
                const += coef
            else:
                lab = self.labels.values[key]
                _add(row, (self.offFs + lab[1]) if lab[0] == "s" else (self.offFc + lab[2]), coef)
        return row, const


def _add(row: dict[int, float], k: int, v: float) -> None:
    row[k] = row.get(k, 0.0) + v


def _rows(pep: Any, labels: Labels) -> tuple[_Map, list, list, list]:
    """:func:`_rows_full` without the full rows."""
    return _rows_full(pep, labels)[:4]


def _rows_full(pep: Any, labels: Labels) -> tuple[_Map, list, list, list, list]:
    """PEPit's prepared scalar constraints, mapped and deduplicated: (map, inequalities, equalities, owners, full),
    owners[k] = (is equality, index of its reduced row) for PEPit's k-th prepared constraint, or (True, None) for a
    row of :meth:`Labels.impose_zero_mean` (0 = 0 in block form: not a reduced row), (True, -1) for a row of
    :meth:`Labels.pin_zero` (left out of the block form); ``full``: when there are zero-mean
    rows, every constraint's Gram part with the zero-mean slots' mean modes kept (:func:`_fill_zero_mean`), else []."""
    with contextlib.redirect_stdout(io.StringIO()):
        pep._prepare_constraints(verbose=0)
    if getattr(pep, "_list_of_prepared_psd", None):
        raise ValueError("the symmetric reduction handles scalar constraints only (this PEP has LMI constraints)")
    mp = _Map(labels, pep.objective)
    zero_rows = {id(c) for c in labels.zero_mean_rows}
    skipped = zero_rows | {id(c) for c in labels.pinned_rows}
    full = _Map(labels, pep.objective, every_mean=True) if zero_rows else None
    to_reduced = _projection(full, mp) if full is not None else []
    seen: dict = {}
    ineq, eq, owners, full_rows = [], [], [], []
    for c in pep._list_of_prepared_constraints:
        if full is not None:  # map once, to the layout with every mean mode; the block form's row is its restriction
            frow, const = full.row(c.expression)
            full_rows.append(frow)
            row = {to_reduced[k]: v for k, v in frow.items() if to_reduced[k] >= 0}
        else:
            row, const = mp.row(c.expression)
        if id(c) in skipped:
            owners.append((True, None) if id(c) in zero_rows else (True, -1))
            continue
        is_eq = c.equality_or_inequality == "equality"
        key = (c.equality_or_inequality, tuple(sorted((k, round(v, 12)) for k, v in row.items() if v != 0)), round(const, 12))
        if key not in seen:
            target = eq if is_eq else ineq
            seen[key] = len(target)
            target.append((row, const))
        owners.append((is_eq, seen[key]))
    if sum(o[1] is None or o[1] == -1 for o in owners) != len(skipped):
        raise ValueError("a zero-mean or pinned row of the labels is not among the PEP's prepared constraints")
    return mp, ineq, eq, owners, full_rows


def _projection(full: _Map, mp: _Map) -> list[int]:
    """For each index of ``full``'s layout, its index in ``mp``'s, or -1 for an entry of a dropped mean mode."""
    kept = {full.mean_index[a]: mp.mean_index[a] for a in mp.mean_index}
    kept.update({k: k for k in range(mp.s)})
    out = []
    for k in range(full.size):
        if k < full.offD:
            u, v = divmod(k, full.dM)
            out.append(mp._M(kept[u], kept[v]) if u in kept and v in kept else -1)
        elif k < full.offFs:
            out.append(k - full.offD + mp.offD)
        else:
            out.append(k - full.offFs + mp.offFs)
    return out


#: the reduced rows of a builder, kept while the builder lives: certify solves the same PEP with each solver
_REDUCED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _reduced(build: Builder) -> tuple[Labels, _Map, Any, np.ndarray, Any, np.ndarray, int, list, list]:
    if build not in _REDUCED:
        pep, named = build()
        labels: Labels = named["labels"]
        mp, ineq, eq, owners, full = _rows_full(pep, labels)
        _REDUCED[build] = (labels, mp, *_matrix(ineq, mp.size), *_matrix(eq, mp.size), len(ineq) + len(eq), owners, full)
    return _REDUCED[build]


def lift(owners: list[tuple[bool, int | None]], lam_ineq: np.ndarray, lam_eq: np.ndarray | None) -> np.ndarray:
    """Multipliers of the full PEP's rows from the block form's: each reduced row's multiplier shared equally by the
    full rows it stands for (a union of client-permutation orbits). The lifted dual is client-symmetric, so its
    residual is PSD exactly when the block residuals are (the isotypic decomposition of the module docstring).
    Rows of :meth:`Labels.impose_zero_mean` (owner index None) get 0 here, :func:`_fill_zero_mean` sets them; rows
    of :meth:`Labels.pin_zero` (index -1) get 0."""
    count: dict[tuple[bool, int | None], int] = {}
    for o in owners:
        count[o] = count.get(o, 0) + 1
    out = np.zeros(len(owners))
    for k, (is_eq, j) in enumerate(owners):
        lam = lam_eq if is_eq else lam_ineq
        if j is not None and j >= 0 and lam is not None:
            out[k] = float(lam[j]) / count[(is_eq, j)]
    return out


def _fill_zero_mean(labels: Labels, owners: list, full_rows: list[dict[int, float]], y: np.ndarray) -> float:
    """Set (in place) the multipliers of the zero-mean rows in the lifted ``y`` so that the full residual's mean block
    has zero row and column at each zero-mean slot's mean mode; its other entries are the block form's M residual,
    and the difference modes are n - 1 copies of D (module docstring), so the full residual is PSD exactly when the
    block residuals are. Those rows' Gram parts are the entries (mean_a, q) of that block (one row per entry), so this
    is a square linear solve. Returns the largest entry left in those rows and columns (0 up to rounding)."""
    s, m, _, _ = labels.check()
    d = s + m
    zero = sorted(s + a for a in labels.zero_mean)  # every_mean layout: slot a's mean mode is index s + a

    def block(row: dict[int, float]) -> np.ndarray:
        B = np.zeros((d, d))
        for k, v in row.items():
            if k < d * d:
                B[divmod(k, d)] += v
        return (B + B.T) / 2

    Z = [k for k, o in enumerate(owners) if o[1] is None]
    skip = set(Z)
    R = sum((y[k] * block(r) for k, r in enumerate(full_rows) if y[k] != 0 and k not in skip), np.zeros((d, d)))
    entries = [(u, v) for u in range(d) for v in range(u, d) if u in zero or v in zero]
    E = np.array([[block(full_rows[k])[u, v] for k in Z] for u, v in entries])
    rhs = -np.array([R[u, v] for u, v in entries])
    sol = np.linalg.lstsq(E, rhs, rcond=None)[0]
    for k, v in zip(Z, sol, strict=True):
        y[k] = v
    return float(np.abs(E @ sol - rhs).max(initial=0.0))


def _matrix(rows: list, size: int) -> tuple[Any, np.ndarray]:
    import scipy.sparse as sps

    data, ri, ci = [], [], []
    for r, (row, _) in enumerate(rows):
        for k, v in row.items():
            ri.append(r)
            ci.append(k)
            data.append(v)
    return sps.csr_matrix((data, (ri, ci)), shape=(len(rows), size)), np.array([c for _, c in rows])


def _dual_feasibility(mp: _Map, Ai: Any, Ae: Any, li: np.ndarray, le: np.ndarray | None) -> dict[str, float]:
    """PEPit's three dual-feasibility figures for the block form: the residual r = A' lambda (the Lagrangian's
    gradient) must be PSD on the M and D blocks and equal e_tau on the function values."""
    r = np.asarray(Ai.T @ li).ravel() + (np.asarray(Ae.T @ le).ravel() if le is not None else 0.0)
    eigs = []
    for off, d in ((0, mp.dM), (mp.offD, mp.dD)):
        if d:
            B = r[off:off + d * d].reshape(d, d)
            eigs.append(float(np.linalg.eigvalsh((B + B.T) / 2).min()))
    f = r[mp.offFs:].copy()
    f[-1] -= 1.0
    return {"psd_residual": max(0.0, -min(eigs)) if eigs else 0.0, "min_multiplier": max(0.0, -float(li.min(initial=0.0))),
            "reconstitution": float(np.abs(f).sum())}


def solve_symmetric(build: Builder, solver: str, solver_options: Mapping[str, Any] | None = None) -> tuple[SolverRun, int]:
    """Like :func:`fedbounds.checks.pep.solve.solve_once`, for a builder whose ``named`` carries ``labels``
    (a :class:`Labels`): the same worst case, solved in block form. Returns the run and the full Gram size
    it stands for (s + n m, less one per zero-mean slot); :func:`block_sizes` gives the blocks actually solved."""
    import cvxpy as cp

    solver = solver.upper()
    opts = dict(solver_options or {})
    if solver == "SCS" and not solver_options:
        opts = dict(SCS_OPTIONS)
    t0 = time.perf_counter()
    labels, mp, Ai, ci, Ae, ce, nrows, owners, full_rows = _reduced(build)
    M = cp.Variable((mp.dM, mp.dM), PSD=True)
    parts = [cp.reshape(M, (mp.dM * mp.dM,), order="C")]
    D = None
    if mp.dD:
        D = cp.Variable((mp.dD, mp.dD), PSD=True)
        parts.append(cp.reshape(D, (mp.dD * mp.dD,), order="C"))
    nF = mp.size - mp.offFs
    F = cp.Variable(nF)
    x = cp.hstack([*parts, F])
    eq = Ae.shape[0] > 0
    cons = [Ai @ x + ci <= 0]
    if eq:
        cons.append(Ae @ x + ce == 0)
    prob = cp.Problem(cp.Maximize(F[nF - 1]), cons)
    status, dual, primal, viol, min_eig, figures, multipliers = "", None, None, None, None, None, None
    with warnings.catch_warnings(), bounded():  # in the solver process, under its limits
        warnings.simplefilter("ignore", UserWarning)
        try:
            prob.solve(solver=solver, **opts)
            status = str(prob.status)
        except SolverLimit as exc:
            status = f"limit: {exc}"
        except Exception as exc:
            status = f"error: {type(exc).__name__}: {str(exc)[:120]}"
    if status in ("optimal", "optimal_inaccurate") and x.value is not None:
        primal = float(prob.value)
        lam = [np.asarray(c.dual_value, dtype=float).ravel() for c in cons]
        dual = -float(lam[0] @ ci) - (float(lam[1] @ ce) if eq else 0.0)  # sup of the Lagrangian: -sum_k lam_k c_k
        xv = np.asarray(x.value, dtype=float)
        viol = max([float(np.max(Ai @ xv + ci)), *([float(np.max(np.abs(Ae @ xv + ce)))] if eq else [])])
        min_eig = min(float(np.linalg.eigvalsh(B.value).min()) for B in (M, D) if B is not None)
        figures = _dual_feasibility(mp, Ai, Ae if eq else None, lam[0], lam[1] if eq else None)
        multipliers = lift(owners, lam[0], lam[1] if eq else None)
        if full_rows:
            _fill_zero_mean(labels, owners, full_rows, multipliers)
    run = SolverRun(solver=solver, status=status, dual=dual, primal=primal, seconds=time.perf_counter() - t0,
                    primal_violation=viol, gram_min_eig=min_eig, options={**opts, "blocks": block_sizes(labels),
                                                                          "rows": nrows},
                    dual_feasibility=figures, multipliers=multipliers)
    return run, mp.s + labels.n * mp.m - len(labels.zero_mean)  # a zero-mean slot spans n - 1 dimensions, not n
