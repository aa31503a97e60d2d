"""Heterogeneous least squares: f_i(x) = (1/(2 m_i)) ||A_i x - b_i||^2, plus any regulariser phi.

Quadratic, so L and mu come exactly from eigenvalues: L = max_i lambda_max(H_i), H_i = A_i^T A_i / m_i,
and mu = lambda_min(H) with H = (1/n) sum_i H_i (strong convexity of f; with a convex phi it gives the
proximal-PL constant of psi). Lasso (phi = l1) is the PL example of both papers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from algorithms.base import Constant, Regularizer, Solution, check_int, check_positive, natural_residual
from algorithms.regularizers import Zero


@dataclass
class LeastSquares:
    """Per-client data ``A`` of shape (n, m, p) and ``b`` of shape (n, m)."""

    A: np.ndarray
    b: np.ndarray
    phi: Regularizer = field(default_factory=Zero)
    name: str = "least_squares"

    def __post_init__(self) -> None:
        self.A = np.asarray(self.A, dtype=float)
        self.b = np.asarray(self.b, dtype=float)
        if self.A.ndim != 3 or self.b.shape != self.A.shape[:2]:
            raise ValueError(f"A must have shape (n, m, p) and b shape (n, m); got {self.A.shape}, {self.b.shape}")
        self.n, self.m, self.p = self.A.shape
        #: per-client Hessians H_i (n, p, p) and linear terms h_i = A_i^T b_i / m (n, p)
        self.hessians = np.einsum("ikp,ikq->ipq", self.A, self.A) / self.m
        self.linear = np.einsum("ikp,ik->ip", self.A, self.b) / self.m
        self.offsets = 0.5 * np.einsum("ik,ik->i", self.b, self.b) / self.m
        self._solution: Solution | None = None

    # ---- the Problem interface ----
    def client_values(self, X: np.ndarray) -> np.ndarray:
        HX = np.einsum("ipq,...iq->...ip", self.hessians, X)
        return 0.5 * np.einsum("...ip,...ip->...i", X, HX) - np.einsum("ip,...ip->...i", self.linear, X) + self.offsets

    def grad(self, X: np.ndarray) -> np.ndarray:
        return np.einsum("ipq,...iq->...ip", self.hessians, X) - self.linear

    def f(self, x: np.ndarray) -> np.ndarray:
        X = np.broadcast_to(np.asarray(x)[..., None, :], (*np.shape(x)[:-1], self.n, self.p))
        return self.client_values(X).mean(axis=-1)

    def grad_f(self, x: np.ndarray) -> np.ndarray:
        return np.einsum("pq,...q->...p", self.hessians.mean(axis=0), x) - self.linear.mean(axis=0)

    def psi(self, x: np.ndarray) -> np.ndarray:
        return self.f(x) + self.phi.value(x)

    @property
    def constants(self) -> dict[str, Constant]:
        eig_i = np.linalg.eigvalsh(self.hessians)
        eig = np.linalg.eigvalsh(self.hessians.mean(axis=0))
        sol = self.solution()
        g_i = self.grad(np.broadcast_to(sol.x_star, (self.n, self.p)))
        zeta2 = float(np.mean(np.sum((g_i - g_i.mean(axis=0)) ** 2, axis=-1)))
        return {
            "L": Constant(float(eig_i.max()), "exact", "max_i lambda_max(A_i^T A_i / m)"),
            "rho_f": Constant(0.0, "exact", "f is convex"),
            "rho": Constant(float(self.phi.rho), "exact", "weak convexity of phi"),
            "mu": Constant(float(eig.min()), "exact", "lambda_min of the Hessian of f"),
            "zeta2": Constant(zeta2, "exact", "(1/n) sum ||grad f_i(x*) - grad f(x*)||^2 at the certified x*"),
        }

    def solution(self, tol: float = 1e-13, max_iter: int = 200_000) -> Solution:
        """x* by accelerated proximal gradient (FISTA) with restarts, certified by the natural residual."""
        if self._solution is None:
            H = self.hessians.mean(axis=0)
            ev = np.linalg.eigvalsh(H)
            L, mu = float(ev.max()), float(ev.min())
            gamma = 1.0 / L
            if self.phi.rho == 0.0 and isinstance(self.phi, Zero) and mu > 0:
                x = np.linalg.solve(H, self.linear.mean(axis=0))
            else:
                x = np.zeros(self.p)
                y, t = x.copy(), 1.0
                for _ in range(max_iter):
                    x_new = self.phi.prox(y - gamma * self.grad_f(y), gamma)
                    if np.linalg.norm(x_new - y) <= tol * max(1.0, np.linalg.norm(x_new)):
                        x = x_new
                        break
                    t_new = 0.5 * (1 + np.sqrt(1 + 4 * t * t))
                    y = x_new + ((t - 1) / t_new) * (x_new - x)
                    if np.dot(y - x_new, x_new - x) > 0:  # adaptive restart
                        y, t_new = x_new.copy(), 1.0
                    x, t = x_new, t_new
            res = float(np.linalg.norm(natural_residual(self, x, gamma)))
            self._solution = Solution(x, float(self.psi(x)), res, gamma, method="FISTA with restart")
        return self._solution


def heterogeneous_least_squares(
    n: int = 10,
    p: int = 20,
    m: int = 30,
    heterogeneity: float = 1.0,
    phi: Regularizer | None = None,
    seed: int = 0,
) -> LeastSquares:
    """A seeded heterogeneous instance: client i's features are shifted by ``heterogeneity * u_i`` and its
    targets come from its own model ``x_true + heterogeneity * v_i``."""
    check_int("n", n)
    check_int("p", p)
    check_int("m", m)
    check_positive("heterogeneity", heterogeneity, strict=False)
    rng = np.random.default_rng(seed)
    x_true = rng.standard_normal(p) * (rng.random(p) < 0.3)
    A = rng.standard_normal((n, m, p)) / np.sqrt(p)
    A += heterogeneity * rng.standard_normal((n, 1, p)) / np.sqrt(p)
    models = x_true + heterogeneity * rng.standard_normal((n, p)) / np.sqrt(p)
    b = np.einsum("ikp,ip->ik", A, models) + 0.1 * rng.standard_normal((n, m))
    return LeastSquares(A, b, phi if phi is not None else Zero())
