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
3. The f_i. Each f_i must be L-smooth and interpolate its triplets (x_k, g_k, f_k). We look for a quadratic
   f_i(x) = x'A_i x/2 + b_i'x + c_i with -L I <= A_i <= L I that fits them (a small SDP least-squares fit);
   the fit residual is reported. This is where the construction stops: a worst case whose f_i are not
   quadratic on the visited points (their values and gradients not consistent with one Hessian of norm
   <= L) has no quadratic interpolant, and a general smooth nonconvex interpolant (Taylor, Hendrickx, Glineur
   2017, Thm 3.10) is not built here. Then ``Replay.exact`` is False and the replay value is only indicative.
4. The run. ``fedbounds.algorithms.run.run("fednmap", ...)`` with exact gradients from z_0, T rounds; we
   recompute min_t ||F_nor(z_t)||^2 and the Lyapunov decrease from the engine's states and compare with the
   PEP's primal objective.

Reference: the PEP is :func:`fedbounds.checks.fednmap.pep.build_lyapunov_pep`; the engine is
``fedbounds.algorithms.fednmap.FedNMap``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from fedbounds.checks.core.pep import solve_once
from fedbounds.checks.fednmap.pep import build_lyapunov_pep

__all__ = ["MaxAffineWeaklyConvex", "QuadraticClients", "Replay", "fit_quadratic", "replay_lyapunov"]


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


@dataclass(frozen=True, eq=False)
class QuadraticClients:
    """f_i(x) = x'A_i x/2 + b_i'x + c_i, phi given: the engine's Problem API (exact constants: L is the bound used)."""

    A: np.ndarray  # (n, r, r)
    b: np.ndarray  # (n, r)
    c: np.ndarray  # (n,)
    phi: Any
    L: float

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

        return {"L": Constant(self.L, "upper_bound", "quadratic fit with ||A_i|| <= L")}

    def solution(self) -> Any:
        raise NotImplementedError("a replayed worst case has no certified minimiser")


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
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    A, b, c = np.asarray(Av.value), np.asarray(bv.value), float(cv.value)
    return A, b, c, _misfit(A, b, c, triplets)


@dataclass(frozen=True)
class Replay:
    """PEP value vs the engine's value on the constructed instance.

    ``pep_value``: the PEP's primal objective (min_t ||F_nor(z_t)||^2 at its worst case, Lyapunov decrease at
    the budget); ``replay_value``: the same measured on the engine's trajectory; ``pep_decrease`` /
    ``replay_decrease``: Lyap_0 - Lyap_T; ``fit_residual``: the worst quadratic misfit over the clients;
    ``exact``: the fit is exact to 1e-6 (then the replay must match the PEP to solver accuracy); ``dimension``:
    r, the dimension of the instance; ``solver_status``; ``replay_ratio`` and ``rel_error`` compare the
    engine's ratio (rescaled to ``budget``) with the PEP value.
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
) -> Replay:
    """Solve measure (a) once (``solver``), build the worst instance (module docstring) and run the engine on it."""
    from fedbounds.algorithms.run import run

    build = build_lyapunov_pep(L, rho, gamma, eta_a, eta_s, n, Q, T, C_0, C_c, variant, measure, "zero", budget)
    tight = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10} if solver.upper() == "CLARABEL" else None
    sr, _ = solve_once(build, solver, tight)
    if not sr.optimal:  # the tight tolerances can fail where the defaults converge
        sr, _ = solve_once(build, solver)
    if sr.primal is None or not sr.evaluations:
        raise RuntimeError(f"the PEP did not solve ({sr.status}); nothing to replay")
    ev = sr.evaluations
    # 1. coordinates: project every vector onto the span of all of them
    vecs = [ev["z0"]] + [v for k in ["h", *(f"f{i}" for i in range(n))] for t in ev[k] for v in t[:2]]
    U, sv, _ = np.linalg.svd(np.array(vecs).T, full_matrices=False)
    rank = int(np.sum(sv > 1e-9 * sv[0]))
    P = U[:, :rank].T

    def proj(v: np.ndarray) -> np.ndarray:
        return P @ v

    h_trip = [(proj(x), proj(g), fv) for x, g, fv in ev["h"]]
    phi = MaxAffineWeaklyConvex(np.array([t[0] for t in h_trip]), np.array([t[1] for t in h_trip]),
                                np.array([t[2] for t in h_trip]), rho)
    fits = [fit_quadratic([(proj(x), proj(g), fv) for x, g, fv in ev[f"f{i}"]], L) for i in range(n)]
    problem = QuadraticClients(np.array([f[0] for f in fits]), np.array([f[1] for f in fits]),
                               np.array([f[2] for f in fits]), phi, L)
    residual = max(f[3] for f in fits)
    # 4. run the engine, recording every state
    states: list[Any] = []
    traj = run("fednmap", problem, {"gamma": gamma, "eta_a": eta_a, "eta_s": eta_s, "Q": Q, "variant": variant,
                                    "z0": proj(ev["z0"])}, rounds=T, metrics=(), callback=lambda t, s: states.append(s))
    traj.raise_if_diverged()
    z0 = proj(ev["z0"])[None, :]
    zs = [z0] + [s.z for s in states]
    cs = [np.zeros((1, n, rank))] + [s.c for s in states]

    def lyap(z: np.ndarray, c: np.ndarray) -> tuple[float, float]:
        x = phi.prox(z, gamma)
        G = problem.grad(np.repeat(x[:, None, :], n, axis=1))
        gbar = G.mean(axis=1)
        fnor = gbar + (z - x) / gamma
        corr = np.mean(np.sum((c + G - gbar[:, None, :]) ** 2, axis=-1))
        val = problem.psi(x)[0] + gamma * C_0 / 2 * float(fnor[0] @ fnor[0]) + C_c * corr
        return float(val), float(fnor[0] @ fnor[0])

    lv = [lyap(z, c) for z, c in zip(zs, cs, strict=True)]
    fn2 = [lv[t][1] for t in range(T)]
    replay_value = min(fn2) if measure == "min" else float(np.mean(fn2))
    return Replay(
        pep_value=float(sr.primal),
        replay_value=float(replay_value),
        pep_decrease=float(ev["decrease"]),
        replay_decrease=lv[0][0] - lv[T][0],
        fit_residual=residual,
        exact=residual < 1e-6,
        dimension=rank,
        solver_status=sr.status,
        budget=budget,
        details={"Fnor2_pep": [ev[f"Fnor2_{t}"] for t in range(T)], "Fnor2_replay": fn2, "problem": problem,
                 "z0": proj(ev["z0"])},
    )
