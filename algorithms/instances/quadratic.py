"""A linear-Gaussian composite instance with a weakly convex phi: quadratic f_i, phi = -(rho/2)||x||^2.

FedNMap (arXiv 2602.03357) allows a rho-weakly convex phi (Assumption 2). The one weakly convex phi whose prox is
linear (so that exact moments apply, ``fedbounds.algorithms.exact``) is the concave quadratic

    phi(x) = -(rho/2) ||x||^2,   prox_{gamma phi}(z) = z / (1 - gamma rho),   0 < gamma < 1/rho,

(phi + (rho/2)||.||^2 = 0 is convex, so phi is exactly rho-weakly convex). The clients are built so that every
constant is exact and f does not change with n (an n-sweep changes nothing but the number of clients):

    f_i(x) = x^T H_i x / 2 - h_i^T x,   H_i = Hbar + kappa s_i D,   h_i = hbar + zeta s_i u,

with s_i = +1, -1 alternating (s = 0 for the last client when n is odd, so sum_i s_i = 0 and f = (1/n) sum f_i has
Hessian Hbar and linear term hbar at every n), D = diag(+1, -1, +1, ...), u = (1, ..., 1)/sqrt(p). Hbar =
(1 - kappa) I, so L = max_i lambda_max(H_i) = 1 exactly for n >= 2 (an upper bound at n = 1, reported as such),
mu_f = 1 - kappa and psi = f + phi is (1 - kappa - rho)-
strongly convex (proximal PL with mu = 1 - kappa - rho). ``heterogeneity`` is zeta: the spread of the linear terms;
kappa (``hessian_het``) spreads the curvatures, without which client drift averages out exactly on a quadratic
(every client's local map would be the same affine map). x* = (Hbar - rho I)^{-1} hbar, psi* = psi(x*).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from fedbounds.algorithms.base import Constant, Solution, check_gamma, check_int, check_positive
from fedbounds.algorithms.instances.least_squares import LeastSquares

__all__ = ["ConcaveQuadratic", "WeaklyConvexQuadratic", "weakly_convex_quadratic"]


@dataclass(frozen=True)
class ConcaveQuadratic:
    """phi(x) = -(rho/2) ||x||^2: rho-weakly convex, prox_{gamma phi}(z) = z / (1 - gamma rho) (linear)."""

    weight: float = 0.1
    name: str = "concave_quadratic"
    #: the prox is linear (exact moments accept this phi)
    linear_prox: bool = True

    def __post_init__(self) -> None:
        check_positive("weight", self.weight, strict=False)

    @property
    def rho(self) -> float:
        return float(self.weight)

    def value(self, x: np.ndarray) -> np.ndarray:
        return -0.5 * self.weight * np.square(np.asarray(x, dtype=float)).sum(axis=-1)

    def prox(self, z: np.ndarray, gamma: float) -> np.ndarray:
        check_gamma(gamma, self.rho)
        return np.asarray(z, dtype=float) / (1.0 - gamma * self.weight)


class WeaklyConvexQuadratic(LeastSquares):
    """Least squares whose data realise H_i and h_i exactly (A_i = sqrt(p) H_i^(1/2), m = p samples), with phi =
    -(rho/2)||x||^2; the solution is one linear solve (psi is strongly convex)."""

    def solution(self) -> Solution:
        if self._solution is None:
            H = self.hessians.mean(axis=0) - self.phi.rho * np.eye(self.p)
            x = np.linalg.solve(H, self.linear.mean(axis=0))
            r = float(np.linalg.norm(self.grad_f(x) + self.phi.rho * (-x)))
            self._solution = Solution(x, float(self.psi(x)), r, 1.0, method="linear solve",
                                      extra={"global": True, "psi_star_kind": "exact"})
            self._solved_for = self.phi
        return self._solution

    @property
    def constants(self) -> dict[str, Constant]:
        c = dict(super().constants)
        mu = float(np.linalg.eigvalsh(self.hessians.mean(axis=0))[0]) - self.phi.rho
        c["mu"] = Constant(mu, "exact", "lambda_min(Hbar) - rho: psi is mu-strongly convex (proximal PL with this mu)")
        c["rho_f"] = Constant(0.0, "exact", "f is convex (quadratic)")
        curv = getattr(self, "curvatures", None)
        if curv is not None:  # the designed diagonal Hessians (exact; the product A^T A / m rounds in the last bit)
            top = float(np.max(curv))
            c["L"] = (Constant(top, "exact", "max_i lambda_max(H_i), H_i diagonal by construction") if top >= 1.0 else
                      Constant(1.0, "bound", "1 = the L of every n >= 2 (max_i lambda_max(H_i)); an upper bound here"))
        return c


def weakly_convex_quadratic(n: int = 4, p: int = 1, heterogeneity: float = 1.0, hessian_het: float = 0.25, rho: float = 0.1,
                            x_true: float = 1.0) -> WeaklyConvexQuadratic:
    """The instance of the module docstring (deterministic: no seed). ``heterogeneity`` = zeta >= 0, ``hessian_het`` =
    kappa in [0, 1/2), ``rho`` in [0, 1 - kappa) (psi strongly convex), x* = ``x_true`` (1, -1, 1, ...)."""
    check_int("n", n)
    check_int("p", p)
    zeta = check_positive("heterogeneity", heterogeneity, strict=False)
    kappa = check_positive("hessian_het", hessian_het, strict=False)
    rho = check_positive("rho", rho, strict=False)
    if not kappa < 0.5:
        raise ValueError(f"hessian_het must lie in [0, 0.5) (every H_i positive definite), got {hessian_het!r}")
    if not rho < 1.0 - kappa:
        raise ValueError(f"rho must lie in [0, 1 - hessian_het) = [0, {1.0 - kappa:g}) so that psi is strongly convex, got {rho!r}")
    s = np.array([(1.0 if i % 2 == 0 else -1.0) for i in range(n)])
    if n % 2:
        s[-1] = 0.0
    D = np.array([1.0 if k % 2 == 0 else -1.0 for k in range(p)])
    u = np.ones(p) / np.sqrt(p)
    xs = float(x_true) * np.array([1.0 if k % 2 == 0 else -1.0 for k in range(p)])
    hbar = (1.0 - kappa - rho) * xs  # (Hbar - rho I) x* = hbar
    diag = (1.0 - kappa) + kappa * s[:, None] * D[None, :]  # (n, p) diagonal Hessians, max entry 1
    lin = hbar[None, :] + zeta * s[:, None] * u[None, :]
    A = np.sqrt(p) * np.sqrt(diag)[:, :, None] * np.eye(p)[None, :, :]  # (n, m = p, p): A_i^T A_i / p = diag_i
    b = np.sqrt(p) * lin / np.sqrt(diag)  # (A_i^T b_i / p)_k = sqrt(p) sqrt(d_k) b_k / p = lin_k
    prob = WeaklyConvexQuadratic(A, b, ConcaveQuadratic(rho))
    prob.name = "weakly_convex_quadratic"
    prob.curvatures = diag
    return prob
