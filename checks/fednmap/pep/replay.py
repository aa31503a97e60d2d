"""Replaying a FedNMap PEP worst case through the numerical engine (closing the loop PEP <-> algorithms).

A PEP solution is a Gram matrix: the iterates, gradients and function values of a worst-case instance, known
only through their inner products. This module turns it into a concrete instance and runs it:

1. Coordinates. PEPit factors the Gram matrix; every Point becomes a vector. We project all of them onto
   their common span (rank r, singular values above 1e-9 of the largest), so the instance lives in R^r.
2. The regulariser. phi = h - (rho/2)||.||^2 with h the *max-affine* interpolant of h's triplets
   (x_k, s_k, h_k): h(x) = max_k h_k + <s_k, x - x_k>. It is convex, and because the PEP imposed h's
   interpolation conditions it takes the value h_k at x_k with s_k in its subdifferential there, so each
   prox the PEP performed returns the same point. Its prox (a small QP) is solved with cvxpy/Clarabel.
   This step always works.
3. The f_i. Each f_i must be L-smooth (possibly nonconvex) and interpolate its triplets (x_k, g_k, f_k). First
   a quadratic f_i(x) = x'A_i x/2 + b_i'x + c_i with -L I <= A_i <= L I (a small SDP least-squares fit). When
   no quadratic fits (the worst case's f_i need not be quadratic on the visited points; measured from Q = 2 on),
   the exact smooth interpolant of Taylor, Hendrickx and Glineur (2017, Thm 3.10) is built instead
   (:class:`SmoothInterpolant`): q = f + (L/2)||.||^2 is convex and 2L-smooth, so it is the conjugate of a
   1/(2L)-strongly convex max of quadratics that the interpolation conditions PEPit imposed make exact at the
   visited points; each gradient is one small QP. Either way the misfit at the triplets is reported, and
   ``Replay.exact`` says whether it is at solver accuracy.
4. The run. ``fedbounds.algorithms.run.run("fednmap", ...)`` with exact gradients from z_0, T rounds; we
   recompute min_t ||F_nor(z_t)||^2 and the Lyapunov decrease from the engine's states and compare with the
   PEP's primal objective.

Steps 1 to 3 are :func:`realise` (also used by the stochastic replay, :mod:`fedbounds.checks.fednmap.spep.replay`);
the Lyapunov function on engine states is :func:`lyapunov_terms`; step 4 on given evaluations is
:func:`replay_evaluations`.

At Theorem 5's printed steps with Q >= 2 the plain solve fails, and :func:`replay_printed` replays the worst case of
the continuation solve instead (:func:`printed_evaluations`: the named evaluations rebuilt from its Gram matrix by
:func:`fedbounds.checks.pep.precondition.named_evaluations`, at the matrix's numerical rank). There the decrease per
round is about 1/60 of the Lyapunov terms, so an error in each term is amplified about 60 times in the ratio
(:attr:`Replay.amplification`; docs/fednmap-reconstruction.md §10.5).

Reference: the PEP is :func:`fedbounds.checks.fednmap.pep.encoding.build_lyapunov_pep`; the engine is
``fedbounds.algorithms.fednmap.FedNMap``.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from fedbounds.checks.fednmap.pep.encoding import build_lyapunov_pep
from fedbounds.checks.pep.solve import solve_once

__all__ = [
    "TERM_TOL",
    "InterpolatedClients",
    "MaxAffineWeaklyConvex",
    "PrintedSolve",
    "QuadraticClients",
    "Realised",
    "Replay",
    "SmoothInterpolant",
    "fit_quadratic",
    "lyapunov_terms",
    "printed_evaluations",
    "realise",
    "replay_evaluations",
    "replay_lyapunov",
    "replay_printed",
]


@dataclass(frozen=True, eq=False)
class MaxAffineWeaklyConvex:
    """phi(x) = max_k (h_k + <s_k, x - x_k>) - (rho/2)||x||^2: a rho-weakly convex regulariser (Regularizer API)."""

    X: np.ndarray  # (K, r) anchor points
    S: np.ndarray  # (K, r) subgradients of h
    H: np.ndarray  # (K,) values of h
    rho_: float
    name: str = "max_affine_weakly_convex"

    @property
    def rho(self) -> float:
        return self.rho_

    def _h(self, x: np.ndarray) -> np.ndarray:
        aff = self.H + np.einsum("kr,...r->...k", self.S, x) - np.einsum("kr,kr->k", self.S, self.X)
        return aff.max(axis=-1)

    def value(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return self._h(x) - self.rho_ / 2 * np.sum(x * x, axis=-1)

    def prox(self, z: np.ndarray, gamma: float) -> np.ndarray:
        """prox_{gamma phi}(z) = prox_{gamma' h}(z/(1 - gamma rho)), gamma' = gamma/(1 - gamma rho); one QP per point."""
        import cvxpy as cp

        if not (0 < gamma * self.rho_ < 1 or (self.rho_ == 0 and gamma > 0)):
            raise ValueError(f"gamma must be in (0, 1/rho), got {gamma}")
        a = 1.0 - gamma * self.rho_
        g2 = gamma / a
        z = np.asarray(z, dtype=float)
        flat = z.reshape(-1, z.shape[-1]) / a
        out = np.empty_like(flat)
        offs = self.H - np.einsum("kr,kr->k", self.S, self.X)
        for j, w in enumerate(flat):
            x, t = cp.Variable(w.size), cp.Variable()
            prob = cp.Problem(cp.Minimize(t + cp.sum_squares(x - w) / (2 * g2)), [self.S @ x + offs <= t])
            with warnings.catch_warnings():  # "may be inaccurate" at 1e-12: the replay's own comparison measures it
                warnings.simplefilter("ignore", UserWarning)
                prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
            if x.value is None:
                raise RuntimeError(f"the prox of the constructed regulariser did not solve ({prob.status})")
            out[j] = x.value
        return out.reshape(z.shape)


class _ReplayedClients:
    """The engine's Problem API over ``client_values`` and ``grad`` of a subclass (and its ``phi``, ``n``)."""

    phi: Any
    n: int
    _L_note = ""

    def client_values(self, X: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def grad(self, X: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def f(self, x: np.ndarray) -> np.ndarray:
        X = np.repeat(np.asarray(x)[..., None, :], self.n, axis=-2)
        return self.client_values(X).mean(axis=-1)

    def grad_f(self, x: np.ndarray) -> np.ndarray:
        X = np.repeat(np.asarray(x)[..., None, :], self.n, axis=-2)
        return self.grad(X).mean(axis=-2)

    def psi(self, x: np.ndarray) -> np.ndarray:
        return self.f(x) + self.phi.value(x)

    @property
    def constants(self) -> dict[str, Any]:
        from fedbounds.algorithms.base import Constant

        return {"L": Constant(self.L, "upper_bound", self._L_note)}  # type: ignore[attr-defined]

    def solution(self) -> Any:
        raise NotImplementedError("a replayed worst case has no certified minimiser")


@dataclass(frozen=True, eq=False)
class QuadraticClients(_ReplayedClients):
    """f_i(x) = x'A_i x/2 + b_i'x + c_i, phi given: the engine's Problem API (exact constants: L is the bound used)."""

    A: np.ndarray  # (n, r, r)
    b: np.ndarray  # (n, r)
    c: np.ndarray  # (n,)
    phi: Any
    L: float
    _L_note = "quadratic fit with ||A_i|| <= L"

    @property
    def n(self) -> int:
        return self.A.shape[0]

    @property
    def p(self) -> int:
        return self.A.shape[1]

    def client_values(self, X: np.ndarray) -> np.ndarray:
        return 0.5 * np.einsum("...ir,irs,...is->...i", X, self.A, X) + np.einsum("ir,...ir->...i", self.b, X) + self.c

    def grad(self, X: np.ndarray) -> np.ndarray:
        return np.einsum("irs,...is->...ir", self.A, X) + self.b


class SmoothInterpolant:
    """An L-smooth, possibly nonconvex f with f(x_k) = f_k and grad f(x_k) = g_k at triplets PEPit certified.

    Taylor, Hendrickx, Glineur (2017), Thm 3.10: the triplets are F_{-L,L}-interpolable iff those of
    q = f + (L/2)||.||^2, namely (x_k, y_k = g_k + L x_k, q_k = f_k + (L/2)||x_k||^2), are F_{0,M}-interpolable
    with M = 2L. Then the conjugate data (y_k, x_k, h_k = <y_k, x_k> - q_k) admit the 1/M-strongly convex
    h(y) = max_k h_k + <x_k, y - y_k> + ||y - y_k||^2/(2M), exact at the y_k (the F_{0,M} inequalities say no
    other piece exceeds piece k there), and q = h* is convex and M-smooth with q(x_k) = q_k, grad q(x_k) = y_k.
    So f = h* - (L/2)||.||^2 has curvature in [-L, L]. grad q(x) = argmin_y h(y) - <x, y>: one small QP per point.

    The instance stays in the class: a solver leaves the F_{0,M} inequalities violated by its accuracy, and the
    interpolant then misses the triplets by about that much (:meth:`misfit`, reported by the replay), rather than
    being made exact by a larger constant. Repeated points are merged first.
    """

    def __init__(self, triplets: list[tuple[np.ndarray, np.ndarray, float]], L: float) -> None:
        import cvxpy as cp

        self.L = float(L)
        X = np.array([t[0] for t in triplets], dtype=float)
        scale = max(1.0, float(np.max(np.abs(X))))
        keep = [k for k in range(len(X)) if all(np.max(np.abs(X[k] - X[j])) > 1e-10 * scale for j in range(k))]
        X = X[keep]
        Y = np.array([triplets[k][1] for k in keep], dtype=float) + self.L * X
        q = np.array([triplets[k][2] for k in keep], dtype=float) + self.L / 2 * np.sum(X * X, axis=1)
        Hk = np.sum(Y * X, axis=1) - q
        M = 2 * self.L
        self._M = M
        # every piece has Hessian I/M: h(y) = ||y||^2/(2M) + max_k (a_k + <b_k, y>), so the minimiser of h(y) - <x, y>
        # is the prox of the max-affine part at M x: a QP
        self._a = Hk - np.sum(X * Y, axis=1) + np.sum(Y * Y, axis=1) / (2 * M)
        self._b = X - Y / M
        self._w = cp.Parameter(X.shape[1])
        self._y, self._t = cp.Variable(X.shape[1]), cp.Variable()
        self._prob = cp.Problem(cp.Minimize(self._t + cp.sum_squares(self._y - self._w) / (2 * M)),
                                [self._a + self._b @ self._y <= self._t])
        self.triplets = triplets

    def _h(self, y: np.ndarray) -> float:
        return float(y @ y / (2 * self._M) + np.max(self._a + self._b @ y))

    def _solve(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        w = self._M * x
        self._w.value = w
        with warnings.catch_warnings():  # "may be inaccurate": the replay's misfit measures it
            warnings.simplefilter("ignore", UserWarning)
            self._prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
        if self._y.value is None:
            raise RuntimeError(f"the smooth interpolant's QP did not solve ({self._prob.status})")
        y = np.asarray(self._y.value, dtype=float)
        return float(x @ y) - self._h(y), y

    def value_and_grad(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """f and grad f at points of shape (..., r)."""
        x = np.asarray(x, dtype=float)
        flat = x.reshape(-1, x.shape[-1])
        vals, grads = np.empty(len(flat)), np.empty_like(flat)
        for j, w in enumerate(flat):
            qv, y = self._solve(w)
            vals[j], grads[j] = qv - self.L / 2 * float(w @ w), y - self.L * w
        return vals.reshape(x.shape[:-1]), grads.reshape(x.shape)

    def misfit(self) -> float:
        """The largest gradient or value misfit at the triplets (0 up to the PEP's and the QP's accuracy)."""
        out = 0.0
        for x, g, fv in self.triplets:
            v, gr = self.value_and_grad(x)
            out = max(out, float(np.max(np.abs(gr - g))), abs(float(v) - fv))
        return out


@dataclass(frozen=True, eq=False)
class InterpolatedClients(_ReplayedClients):
    """Clients f_i given as :class:`SmoothInterpolant` objects, phi given: the engine's Problem API."""

    clients: tuple[SmoothInterpolant, ...]
    phi: Any
    L: float
    p: int
    _L_note = "Taylor-Hendrickx-Glineur interpolant: curvature in [-L, L]"

    @property
    def n(self) -> int:
        return len(self.clients)

    def client_values(self, X: np.ndarray) -> np.ndarray:
        return np.stack([c.value_and_grad(X[..., i, :])[0] for i, c in enumerate(self.clients)], axis=-1)

    def grad(self, X: np.ndarray) -> np.ndarray:
        return np.stack([c.value_and_grad(X[..., i, :])[1] for i, c in enumerate(self.clients)], axis=-2)


def _misfit(A: np.ndarray, b: np.ndarray, c: float, triplets: list[tuple[np.ndarray, np.ndarray, float]]) -> float:
    return float(max(max(np.max(np.abs(A @ x + b - g)), abs(0.5 * x @ A @ x + b @ x + c - fv)) for x, g, fv in triplets))


def fit_quadratic(triplets: list[tuple[np.ndarray, np.ndarray, float]], L: float) -> tuple[np.ndarray, np.ndarray, float, float]:
    """The quadratic x'Ax/2 + b'x + c with -L I <= A <= L I closest to the triplets (x_k, grad_k, value_k).

    First the exact linear least-squares solution (numpy, minimum norm); if its Hessian exceeds L in norm,
    a least-squares fit under the constraint -L I <= A <= L I (cvxpy/Clarabel). Returns (A, b, c, residual),
    residual = the largest gradient or value misfit over the triplets.
    """
    r = triplets[0][0].size
    iu = np.triu_indices(r)
    rows, rhs = [], []
    for x, g, fv in triplets:
        for j in range(r):  # (A x + b)_j = g_j, A symmetric parametrised by its upper triangle
            row = np.zeros(len(iu[0]) + r + 1)
            for k, (a, bb) in enumerate(zip(*iu, strict=True)):
                if a == j:
                    row[k] += x[bb]
                elif bb == j:
                    row[k] += x[a]
            row[len(iu[0]) + j] = 1.0
            rows.append(row)
            rhs.append(g[j])
        row = np.zeros(len(iu[0]) + r + 1)  # x'Ax/2 + b'x + c = f
        for k, (a, bb) in enumerate(zip(*iu, strict=True)):
            row[k] = 0.5 * x[a] * x[bb] * (1 if a == bb else 2)
        row[len(iu[0]):len(iu[0]) + r] = x
        row[-1] = 1.0
        rows.append(row)
        rhs.append(fv)
    sol = np.linalg.lstsq(np.array(rows), np.array(rhs), rcond=None)[0]
    A = np.zeros((r, r))
    A[iu] = sol[: len(iu[0])]
    A = A + np.triu(A, 1).T
    b, c = sol[len(iu[0]): len(iu[0]) + r], float(sol[-1])
    if np.max(np.abs(np.linalg.eigvalsh(A))) <= L * (1 + 1e-9):
        return A, b, c, _misfit(A, b, c, triplets)
    import cvxpy as cp

    Av, bv, cv = cp.Variable((r, r), symmetric=True), cp.Variable(r), cp.Variable()
    res = []
    for x, g, fv in triplets:
        res.append(Av @ x + bv - g)
        res.append(cp.reshape(0.5 * (x @ Av @ x) + bv @ x + cv - fv, (1,), order="F"))
    prob = cp.Problem(cp.Minimize(cp.sum_squares(cp.hstack(res))), [Av << L * np.eye(r), Av >> -L * np.eye(r)])
    with warnings.catch_warnings():  # "may be inaccurate" at 1e-12: the returned misfit measures it
        warnings.simplefilter("ignore", UserWarning)
        prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    A, b, c = np.asarray(Av.value), np.asarray(bv.value), float(cv.value)
    return A, b, c, _misfit(A, b, c, triplets)


@dataclass(frozen=True, eq=False)
class Realised:
    """A PEP solution made concrete (module docstring, steps 1 to 3): ``problem`` (the engine's Problem API),
    ``project`` (PEPit coordinates -> R^r), ``dimension`` r, ``fit_residual`` (the worst misfit at the f_i's triplets),
    ``construction`` (which f_i were built)."""

    problem: Any
    basis: np.ndarray  # (r, N): rows span every vector of the solution
    dimension: int
    fit_residual: float
    construction: str

    def project(self, v: np.ndarray) -> np.ndarray:
        return self.basis @ np.asarray(v, dtype=float)


def realise(ev: dict[str, Any], n: int, L: float, rho: float, extra: tuple[str, ...] = (), construction: str = "auto") -> Realised:
    """Steps 1 to 3 of the module docstring on a solved PEP's ``evaluations``: ``z0``, the functions ``h`` and
    ``f0`` .. ``f{n-1}`` as triplets, and the Points named in ``extra`` (also kept in the span, e.g. noise directions).
    Without ``h`` (a PEP of a smooth problem) the regulariser is zero.
    ``construction``: ``"auto"`` (the quadratic fit where it interpolates to 1e-6, else the smooth interpolant),
    ``"quadratic"`` or ``"interpolant"``."""
    if construction not in ("auto", "quadratic", "interpolant"):
        raise ValueError(f"construction must be 'auto', 'quadratic' or 'interpolant', got {construction!r}")
    # 1. coordinates: project every vector onto the span of all of them
    funcs = [*(["h"] if "h" in ev else []), *(f"f{i}" for i in range(n))]
    vecs = [ev["z0"], *(ev[k] for k in extra)] + [v for k in funcs for t in ev[k] for v in t[:2]]
    U, sv, _ = np.linalg.svd(np.array(vecs).T, full_matrices=False)
    rank = int(np.sum(sv > 1e-9 * sv[0]))
    P = U[:, :rank].T

    def proj(v: np.ndarray) -> np.ndarray:
        return P @ v

    phi: Any
    if "h" in ev:
        h_trip = [(proj(x), proj(g), fv) for x, g, fv in ev["h"]]
        phi = MaxAffineWeaklyConvex(np.array([t[0] for t in h_trip]), np.array([t[1] for t in h_trip]),
                                    np.array([t[2] for t in h_trip]), rho)
    else:
        from fedbounds.algorithms.regularizers import Zero

        phi = Zero()
    trips = [[(proj(x), proj(g), fv) for x, g, fv in ev[f"f{i}"]] for i in range(n)]
    fits = [fit_quadratic(tr, L) for tr in trips]
    residual = max(f[3] for f in fits)
    problem: Any
    if construction == "quadratic" or (construction == "auto" and residual < 1e-6):
        problem = QuadraticClients(np.array([f[0] for f in fits]), np.array([f[1] for f in fits]),
                                   np.array([f[2] for f in fits]), phi, L)
        construction = "quadratic"
    else:  # no quadratic interpolates: the exact smooth (nonconvex) interpolant
        clients = tuple(SmoothInterpolant(tr, L) for tr in trips)
        problem = InterpolatedClients(clients, phi, L, rank)
        residual = max(c.misfit() for c in clients)
        construction = "smooth interpolant (Taylor-Hendrickx-Glineur)"
    return Realised(problem, P, rank, residual, construction)


def lyapunov_terms(problem: Any, z: np.ndarray, c: np.ndarray, gamma: float, C_0: float,
                   C_c: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per replica, from engine states z (R, r) and c (R, n, r): the reconstructed Lyapunov function
    psi(prox z) + (gamma C_0/2)||F_nor(z)||^2 + C_c corr_err, ||F_nor(z)||^2 and corr_err = (1/n) sum_i
    ||c_i + grad f_i(x) - grad f(x)||^2 (the PEP's ``_Round.lyap``), each of shape (R,)."""
    n = c.shape[-2]
    x = problem.phi.prox(z, gamma)
    G = problem.grad(np.repeat(x[:, None, :], n, axis=1))
    gbar = G.mean(axis=1)
    fnor = gbar + (z - x) / gamma
    corr = np.mean(np.sum((c + G - gbar[:, None, :]) ** 2, axis=-1), axis=-1)
    fn2 = np.sum(fnor * fnor, axis=-1)
    return problem.psi(x) + gamma * C_0 / 2 * fn2 + C_c * corr, fn2, corr


@dataclass(frozen=True)
class Replay:
    """PEP value vs the engine's value on the constructed instance.

    ``pep_value``: the PEP's primal objective (min_t ||F_nor(z_t)||^2 at its worst case, Lyapunov decrease at
    the budget); ``replay_value``: the same measured on the engine's trajectory; ``pep_decrease`` /
    ``replay_decrease``: Lyap_0 - Lyap_T; ``fit_residual``: the worst misfit at the triplets over the clients
    (quadratic fit, else the smooth interpolant); ``exact``: that misfit is below 1e-6; ``dimension``: r, the
    dimension of the instance; ``solver_status``: the PEP solve's; ``replay_ratio`` and ``rel_error`` compare the
    engine's ratio (rescaled to ``budget``) with the PEP value; ``details["construction"]`` names the f_i used.
    """

    pep_value: float
    replay_value: float
    pep_decrease: float
    replay_decrease: float
    fit_residual: float
    exact: bool
    dimension: int
    solver_status: str
    details: dict = field(default_factory=dict, repr=False, compare=False)

    budget: float = 1.0
    #: |Lyap_0| + |Lyap_T| at the PEP's worst case (its named evaluations): the size of the terms the decrease is the
    #: difference of (nan when the PEP did not evaluate them)
    terms: float = math.nan

    @property
    def amplification(self) -> float:
        """1 + (|Lyap_0| + |Lyap_T|) / (Lyap_0 - Lyap_T), at the PEP's worst case: how much a relative error e in each
        term of the ratio min_t ||F_nor||^2 / (Lyap_0 - Lyap_T) can grow in the ratio (|d ratio / ratio| <= e times
        this). About 3 at 16 x the printed steps, 60 at the printed steps, where the decrease per round is eta_hat/9."""
        return 1.0 + self.terms / abs(self.pep_decrease)

    @property
    def replay_ratio(self) -> float:
        """The engine's min_t ||F_nor(z_t)||^2 / (Lyap_0 - Lyap_T), rescaled to the budget (homogeneity)."""
        return self.replay_value * self.budget / self.replay_decrease

    @property
    def rel_error(self) -> float:
        """|replay_ratio - pep_value| / pep_value: what must be at solver accuracy when ``exact``."""
        return abs(self.replay_ratio - self.pep_value) / abs(self.pep_value)


def replay_lyapunov(
    L: float, rho: float, gamma: float, eta_a: float, eta_s: float, n: int, Q: int, T: int,
    C_0: float, C_c: float, variant: str = "A", measure: str = "min", budget: float = 1.0, solver: str = "CLARABEL",
    budgets: tuple[float, ...] | None = (1.0, 10.0, 100.0, 0.1, 0.01), construction: str = "auto",
) -> Replay:
    """Solve measure (a) with ``solver``, build the worst instance (module docstring) and run the engine on it.

    The PEP is solved at ``budget``, then at the other ``budgets`` until the solver reports ``optimal`` (the
    value is homogeneous in the budget, and the replay ratio is rescaled to the budget used). ``construction``:
    ``"auto"`` (the quadratic fit where it interpolates to 1e-6, else the smooth interpolant), ``"quadratic"`` or
    ``"interpolant"``."""
    if construction not in ("auto", "quadratic", "interpolant"):
        raise ValueError(f"construction must be 'auto', 'quadratic' or 'interpolant', got {construction!r}")
    tight = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10} if solver.upper() == "CLARABEL" else None
    sr = None
    for b in (budget, *(x for x in (budgets or ()) if x != budget)):  # first optimal solve, as descent_check does
        build = build_lyapunov_pep(L, rho, gamma, eta_a, eta_s, n, Q, T, C_0, C_c, variant, measure, "zero", b)
        for opts in (tight, None):  # the tight tolerances can fail where the defaults converge
            run_b, _ = solve_once(build, solver, opts)
            if sr is None or (run_b.optimal and not sr.optimal) or (sr.primal is None and run_b.primal is not None):
                sr, budget = run_b, b
            if run_b.optimal:
                break
        if sr.optimal:
            break
    if sr is None or sr.primal is None or not sr.evaluations:
        raise RuntimeError(f"the PEP did not solve ({sr.status if sr else 'no solve'}); nothing to replay")
    return replay_evaluations(sr.evaluations, float(sr.primal), sr.status, L, rho, gamma, eta_a, eta_s, n, Q, T, C_0, C_c,
                              variant, measure, budget, construction)


def replay_evaluations(
    ev: dict[str, Any], pep_value: float, solver_status: str, L: float, rho: float, gamma: float, eta_a: float,
    eta_s: float, n: int, Q: int, T: int, C_0: float, C_c: float, variant: str = "A", measure: str = "min",
    budget: float = 1.0, construction: str = "auto",
) -> Replay:
    """Steps 1 to 4 of the module docstring on a solved measure-(a) PEP's named evaluations ``ev`` (``z0``, the
    functions, ``Fnor2_t``, ``lyap0``, ``lyap{T}``, ``decrease``: :func:`build_lyapunov_pep`'s ``named``), whose value
    at ``budget`` is ``pep_value``: the instance realised, the engine run at the given steps, its ratio compared."""
    from fedbounds.algorithms.run import run

    inst = realise(ev, n, L, rho, construction=construction)
    problem, proj, rank, residual = inst.problem, inst.project, inst.dimension, inst.fit_residual
    # 4. run the engine, recording every state
    states: list[Any] = []
    traj = run("fednmap", problem, {"gamma": gamma, "eta_a": eta_a, "eta_s": eta_s, "Q": Q, "variant": variant,
                                    "z0": proj(ev["z0"])}, rounds=T, metrics=(), callback=lambda t, s: states.append(s))
    traj.raise_if_diverged()
    z0 = proj(ev["z0"])[None, :]
    zs = [z0] + [s.z for s in states]
    cs = [np.zeros((1, n, rank))] + [s.c for s in states]

    def lyap(z: np.ndarray, c: np.ndarray) -> tuple[float, float]:
        val, fn2, _ = lyapunov_terms(problem, z, c, gamma, C_0, C_c)
        return float(val[0]), float(fn2[0])

    lv = [lyap(z, c) for z, c in zip(zs, cs, strict=True)]
    fn2 = [lv[t][1] for t in range(T)]
    replay_value = min(fn2) if measure == "min" else float(np.mean(fn2))
    terms = (abs(float(ev["lyap0"])) + abs(float(ev[f"lyap{T}"]))
             if isinstance(ev.get("lyap0"), float) and isinstance(ev.get(f"lyap{T}"), float) else math.nan)
    return Replay(
        pep_value=float(pep_value),
        replay_value=float(replay_value),
        pep_decrease=float(ev["decrease"]),
        replay_decrease=lv[0][0] - lv[T][0],
        fit_residual=residual,
        exact=residual < 1e-6,
        dimension=rank,
        solver_status=solver_status,
        budget=budget,
        terms=terms,
        details={"Fnor2_pep": [ev[f"Fnor2_{t}"] for t in range(T)], "Fnor2_replay": fn2, "problem": problem,
                 "construction": inst.construction, "lyap_replay": [v for v, _ in lv],
                 "z0": proj(ev["z0"])},
    )


#: the replay's tolerance, relative on the ratio: solver accuracy (the check's bound at every replay point)
TERM_TOL = 1e-5
#: eigenvalues of the continuation solve's Gram matrix below this share of the largest are set to 0 before the
#: instance is built: below Clarabel's accuracy (1e-8), 100 x above it. Measured at (n, Q, T) = (2, 2, 2), k = 1: one
#: eigenvalue 0.143, the next 5.8e-10 (4e-9 of it), so any threshold from 1e-8 to 1e-3 gives rank 1
RANK_TOL = 1e-6


@dataclass(frozen=True, eq=False)
class PrintedSolve:
    """The continuation solve at k times Theorem 5's printed steps, as named evaluations (:func:`printed_evaluations`):
    ``ev`` (:func:`build_lyapunov_pep`'s names), ``report`` (:func:`fedbounds.checks.pep.precondition.named_evaluations`:
    the eigenvalue clipped, the rows' mismatch), ``run`` / ``scs`` (the path's final Clarabel run, SCS in its basis),
    ``path_k`` / ``path`` (the step multiples and the values read), ``budget`` (d T, the PEP's budget)."""

    ev: dict[str, Any]
    report: dict[str, float]
    run: Any
    scs: Any
    path_k: list[float]
    path: list[float | None]
    budget: float


def printed_evaluations(rho: float, n: int, Q: int, T: int, k: float = 1.0, C_0: float = 1.0,
                        C_c: float = 1.0, rank_tol: float = RANK_TOL) -> PrintedSolve:
    """The worst case of :func:`fedbounds.checks.fednmap.pep.printed.printed_descent`'s PEP (ratio form, budget d T) at
    k times the printed steps, from its continuation solve (:func:`fedbounds.checks.fednmap.pep.printed.printed_path`),
    with PEPit's named evaluations rebuilt from the final Clarabel run's Gram matrix and values (original basis; its
    eigenvalues below ``rank_tol`` of the largest set to 0): :func:`fedbounds.checks.pep.precondition.named_evaluations`.
    Raises RuntimeError when the path ends without an optimal reading."""
    from fedbounds.checks.fednmap.pep.encoding import theorem5_steps
    from fedbounds.checks.fednmap.pep.printed import L as L_PRINTED
    from fedbounds.checks.fednmap.pep.printed import final_run, printed_path
    from fedbounds.checks.pep.precondition import named_evaluations

    build, pb, runs, scs, path_k, path = printed_path(rho, n, Q, T, k, C_0, C_c)
    clar = final_run(runs)
    if not clar.optimal or clar.gram is None:
        raise RuntimeError(f"the continuation ended without an optimal reading ({clar.status}); nothing to replay")
    ev, report = named_evaluations(build, *clar.gram, pb=pb, rank_tol=rank_tol)
    budget = k * theorem5_steps(L_PRINTED, rho, Q)["descent_coef"] * T
    return PrintedSolve(ev, report, clar, scs, path_k, path, budget)


def replay_printed(rho: float, n: int, Q: int, T: int, k: float = 1.0, C_0: float = 1.0, C_c: float = 1.0,
                   construction: str = "auto", solved: PrintedSolve | None = None) -> Replay:
    """:func:`replay_lyapunov` where the plain solve fails, at Theorem 5's printed steps (k = 1) with Q >= 2: the worst
    case of the continuation solve (:func:`printed_evaluations`, or ``solved``) realised and run through the engine at
    the same steps; ``pep_value`` is the path's final Clarabel reading (``details["scs"]``: SCS's in its basis).

    The comparison is the ratio's, as in :func:`replay_lyapunov`, and so is its tolerance (:data:`TERM_TOL` relative).
    The scale matters here: at the printed steps the decrease Lyap_0 - Lyap_T is about 1/60 of the terms it is the
    difference of (:attr:`Replay.amplification`), so an error e in each term moves the ratio by up to 60 e. The
    full-rank Gram matrix's instance is exact to 2e-7 at its triplets, and its ratio misses by 6e-5 (1e-6 per term);
    the numerical-rank one (:data:`RANK_TOL`) is exact to 5e-11 and meets the ratio to 1e-7."""
    from fedbounds.checks.fednmap.pep.encoding import theorem5_steps
    from fedbounds.checks.fednmap.pep.printed import L as L_PRINTED

    sol = printed_evaluations(rho, n, Q, T, k, C_0, C_c) if solved is None else solved
    st = theorem5_steps(L_PRINTED, rho, Q)
    rep = replay_evaluations(sol.ev, float(sol.run.dual), sol.run.status, L_PRINTED, rho, st["gamma"], k * st["eta_a"],
                             st["eta_s"], n, Q, T, C_0, C_c, budget=sol.budget, construction=construction)
    return dataclasses.replace(rep, details={**rep.details, "named": sol.report, "path_k": sol.path_k, "path": sol.path,
                                             "scs": None if sol.scs is None else sol.scs.dual,
                                             "scs_status": None if sol.scs is None else sol.scs.status,
                                             "gap": sol.run.gap})
