"""Heterogeneous least squares: f_i(x) = (1/(2m)) ||A_i x - b_i||^2, plus any regulariser phi.

Quadratic, so L and mu come exactly from eigenvalues: L = max_i lambda_max(H_i), H_i = A_i^T A_i / m,
and mu = lambda_min(H) with H = (1/n) sum_i H_i (strong convexity of f; with a convex phi it is the
proximal-PL constant of psi). Lasso (phi = l1) is the PL example of both papers (FedNMap, Theorem 8;
DS FedProxGrad notes section 1). With a weakly convex phi (MCP, SCAD) and mu > rho, psi is
(mu - rho)-strongly convex, so x* is still the unique global minimiser and is certified as such.

Per-sample structure (for the minibatch oracle): client i holds m samples (a_j, b_j), the per-sample loss is
(1/2)(a_j^T x - b_j)^2 and f_i is their mean.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from fedbounds.algorithms._validate import check_seed
from fedbounds.algorithms.base import Constant, Regularizer, Solution, check_int, check_positive, check_regularizer, client_data
from fedbounds.algorithms.instances._solvers import certificate_gamma, is_zero, residual_norm, solve_composite
from fedbounds.algorithms.regularizers import L1, Zero


def _per_client_matmul(X: np.ndarray, M: np.ndarray) -> np.ndarray:
    """x_i^T M_i for every client i: X (..., n, p), M (n, p, k) -> (..., n, k), a fresh C-contiguous array.

    One batched matmul over the client axis: X is viewed as (n, B, p) (B = all leading entries, no copy when X is
    C-contiguous) and multiplied into a view (n, B, k) of the output, so each client is one BLAS gemm on all
    replicas at once and nothing is transposed in memory.
    """
    n, p, k = M.shape
    lead = X.shape[:-2]
    if X.ndim < 2 or X.shape[-2:] != (n, p):
        if X.ndim < 2 or X.shape[-1] != p or X.shape[-2] not in (1, n):
            raise ValueError(f"X must have shape (..., n, p) = (..., {n}, {p}), got {X.shape}")
        X = np.broadcast_to(X, (*X.shape[:-2], n, p))  # one point shared by all clients
    X3 = X.reshape(-1, n, p)  # (B, n, p); a copy only if X is not C-contiguous
    out = np.empty((X3.shape[0], n, k))
    np.matmul(np.swapaxes(X3, 0, 1), M, out=np.swapaxes(out, 0, 1))
    return out.reshape(*lead, n, k)


@dataclass
class LeastSquares:
    """Per-client data ``A`` of shape (n, m, p) and ``b`` of shape (n, m); every client has m samples."""

    A: np.ndarray
    b: np.ndarray
    phi: Regularizer = field(default_factory=Zero)
    name: str = "least_squares"

    def __post_init__(self) -> None:
        self.A = client_data("A", self.A, ("n", "m", "p"))
        self.b = client_data("b", self.b, ("n", "m"))
        self.phi = check_regularizer("phi", self.phi, allow_none=False)
        if self.b.shape != self.A.shape[:2]:
            raise ValueError(f"A must have shape (n, m, p) and b shape (n, m); got {self.A.shape}, {self.b.shape}")
        self.n, self.m, self.p = self.A.shape
        #: per-client Hessians H_i (n, p, p) and linear terms h_i = A_i^T b_i / m (n, p)
        self.hessians = np.einsum("ikp,ikq->ipq", self.A, self.A) / self.m
        self.linear = np.einsum("ikp,ik->ip", self.A, self.b) / self.m
        self.offsets = 0.5 * np.einsum("ik,ik->i", self.b, self.b) / self.m
        self._H = self.hessians.mean(axis=0)
        self._h = self.linear.mean(axis=0)
        self._solution: Solution | None = None
        self._solved_for: Regularizer | None = None

    # ---- per-sample structure (minibatch oracle) ----
    @property
    def num_samples(self) -> int:
        """Samples per client (equal across clients)."""
        return self.m

    def per_sample_grads(self, X: np.ndarray) -> np.ndarray:
        """a_j (a_j^T x_i - b_j) for every sample j of every client i: (..., n, p) -> (..., n, m, p)."""
        r = _per_client_matmul(np.asarray(X, dtype=float), np.swapaxes(self.A, 1, 2))  # A_i x_i, (..., n, m)
        r -= self.b
        return r[..., None] * self.A

    def sample_grad(self, X: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """Mean per-sample gradient over the indices ``idx`` (..., n, b) of each client: (..., n, p)."""
        idx = np.asarray(idx)
        rows = np.arange(self.n)[:, None]
        A_sel = self.A[rows, idx]  # (..., n, b, p)
        X = np.asarray(X, dtype=float)
        r = np.matmul(A_sel, X[..., None])[..., 0] - self.b[rows, idx]  # residuals a_j^T x_i - b_j, (..., n, b)
        return np.matmul(r[..., None, :], A_sel)[..., 0, :] / idx.shape[-1]

    # ---- the Problem interface ----
    def client_values(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        HX = self._hessians_times(X)  # H_i x_i
        HX *= 0.5
        HX -= self.linear  # H_i x_i / 2 - h_i
        return np.einsum("...ip,...ip->...i", X, HX) + self.offsets

    def grad(self, X: np.ndarray) -> np.ndarray:
        """grad f_i(x_i) = H_i x_i - h_i for every client i: (..., n, p) -> (..., n, p), C-contiguous."""
        G = self._hessians_times(np.asarray(X, dtype=float))
        G -= self.linear
        return G

    def _hessians_times(self, X: np.ndarray) -> np.ndarray:
        """H_i x_i for every client i of X (..., n, p): a fresh C-contiguous array (..., n, p).

        Batched matmul over the client axis (one BLAS gemm per client on all replicas at once); H_i is
        symmetric, but the product is taken with H_i^T so that it is x_i^T H_i^T = (H_i x_i)^T exactly.
        """
        return _per_client_matmul(X, np.swapaxes(self.hessians, 1, 2))

    def hess(self, X: np.ndarray) -> np.ndarray:
        """Hessians of the f_i at X (..., n, p): (..., n, p, p) (constant H_i)."""
        return np.broadcast_to(self.hessians, (*np.shape(X)[:-2], self.n, self.p, self.p))

    def f(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        Hx = x @ self._H.T
        Hx *= 0.5
        Hx -= self._h  # H x / 2 - h
        return np.einsum("...p,...p->...", x, Hx) + self.offsets.mean()

    def grad_f(self, x: np.ndarray) -> np.ndarray:
        g = np.asarray(x, dtype=float) @ self._H.T
        g -= self._h
        return g

    def hess_f(self, x: np.ndarray) -> np.ndarray:
        """Hessian of f, (p, p) (constant)."""
        return self._H.copy()

    def psi(self, x: np.ndarray) -> np.ndarray:
        return self.f(x) + self.phi.value(x)

    @property
    def constants(self) -> dict[str, Constant]:
        eig_i = np.linalg.eigvalsh(self.hessians)
        mu = float(np.linalg.eigvalsh(self._H)[0])
        sol = self.solution()
        g_i = self.grad(np.broadcast_to(sol.x_star, (self.n, self.p)))
        zeta2 = float(np.mean(np.sum((g_i - g_i.mean(axis=0)) ** 2, axis=-1)))
        return {
            "L": Constant(float(eig_i.max()), "exact", "max_i lambda_max(A_i^T A_i / m): the Hessian is constant"),
            "rho": Constant(float(self.phi.rho), "exact", f"weak convexity of phi = {self.phi.name}"),
            "rho_f": Constant(0.0, "exact", "f is convex (quadratic)"),
            "mu": Constant(max(mu, 0.0), "exact", "lambda_min((1/n) sum_i A_i^T A_i / m): strong convexity of f"),
            "zeta2": Constant(
                zeta2,
                "exact" if sol.extra.get("global") else "estimate",
                f"(1/n) sum ||grad f_i(x*) - grad f(x*)||^2 at the certified x* (residual {sol.residual:.1e})",
            ),
        }

    def solution(self) -> Solution:
        """x* and psi*, certified by the natural residual at gamma = 1/L (or 1/(2 rho) if smaller).

        phi = 0 with mu > 0: a linear solve plus one step of iterative refinement. Otherwise the shared solver
        (restarted FISTA, or proximal gradient when phi is weakly convex, then a proximal-Newton polish).
        ``extra["global"]`` is True when psi is convex or (mu - rho)-strongly convex, so x* is a global minimiser.
        """
        if self._solution is None or self._solved_for is not self.phi:  # phi may be replaced after construction
            ev = np.linalg.eigvalsh(self._H)
            L, mu = float(ev[-1]), float(ev[0])
            rho = float(self.phi.rho)
            is_global = rho == 0.0 or mu > rho
            if is_zero(self.phi) and mu > 0:
                x = np.linalg.solve(self._H, self._h)
                x = x - np.linalg.solve(self._H, self.grad_f(x))  # iterative refinement
                gamma = certificate_gamma(L, rho)
                res, method = residual_norm(self.grad_f, self.phi, x, gamma), "linear solve with refinement"
            else:
                out = solve_composite(self.f, self.grad_f, self.hess_f, self.phi, L, np.zeros(self.p))
                x, res, gamma, method = out.x, out.residual, out.gamma, out.method
            self._solution = Solution(
                x,
                float(self.psi(x)),
                res,
                gamma,
                method=method,
                extra={"global": is_global, "psi_star_kind": "exact" if is_global else "estimate"},
            )
            self._solved_for = self.phi
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
    targets come from its own model ``x_true + heterogeneity * v_i``.

    The random draws do not depend on ``heterogeneity`` (it only scales them), so two instances with the same
    seed differ only in how heterogeneous they are. ``heterogeneity = 0`` gives i.i.d. clients.
    """
    check_int("n", n)
    check_int("p", p)
    check_int("m", m)
    check_positive("heterogeneity", heterogeneity, strict=False)
    check_regularizer("phi", phi)
    rng = np.random.default_rng(check_seed("seed", seed))
    x_true = rng.standard_normal(p) * (rng.random(p) < 0.3)
    A = rng.standard_normal((n, m, p)) / np.sqrt(p)
    A += heterogeneity * rng.standard_normal((n, 1, p)) / np.sqrt(p)
    models = x_true + heterogeneity * rng.standard_normal((n, p)) / np.sqrt(p)
    b = np.einsum("ikp,ip->ik", A, models) + 0.1 * rng.standard_normal((n, m))
    return LeastSquares(A, b, phi if phi is not None else Zero())


def lasso(
    n: int = 10,
    p: int = 20,
    m: int = 30,
    heterogeneity: float = 1.0,
    weight: float = 0.05,
    seed: int = 0,
) -> LeastSquares:
    """Heterogeneous least squares with phi = weight * ||x||_1 (the PL example of both papers)."""
    check_positive("weight", weight, strict=False)
    prob = heterogeneous_least_squares(n, p, m, heterogeneity, L1(weight), seed)
    prob.name = "lasso"
    return prob


def _weakly_convex_ls(phi_cls: type, n: int, p: int, m: int, heterogeneity: float, seed: int, **phi_params: float) -> LeastSquares:
    prob = heterogeneous_least_squares(n, p, m, heterogeneity, None, seed)
    prob.phi = phi_cls(**phi_params)
    prob.name = f"least_squares_{prob.phi.name}"
    return prob


def least_squares_mcp(
    n: int = 10,
    p: int = 20,
    m: int = 30,
    heterogeneity: float = 1.0,
    lam: float = 0.05,
    theta: float | None = None,
    seed: int = 0,
) -> LeastSquares:
    """Heterogeneous least squares with phi = MCP(lam, theta), rho = 1/theta (weakly convex regulariser).

    ``theta = None`` picks theta = 2/mu, so that rho = mu/2 and psi is (mu/2)-strongly convex: x* is then the
    unique global minimiser and its certificate is global. A smaller theta gives a genuinely nonconvex psi,
    whose ``solution()`` is a certified stationary point (``extra['psi_star_kind']`` = estimate).
    """
    from fedbounds.algorithms.regularizers import MCP

    check_positive("lam", lam, strict=False)
    if theta is None:
        mu = float(np.linalg.eigvalsh(heterogeneous_least_squares(n, p, m, heterogeneity, None, seed)._H)[0])
        if mu <= 0:
            raise ValueError("theta must be given when f is not strongly convex (mu = 0)")
        theta = 2.0 / mu
    check_positive("theta", theta)
    return _weakly_convex_ls(MCP, n, p, m, heterogeneity, seed, lam=lam, theta=theta)


def least_squares_scad(
    n: int = 10,
    p: int = 20,
    m: int = 30,
    heterogeneity: float = 1.0,
    lam: float = 0.05,
    a: float | None = None,
    seed: int = 0,
) -> LeastSquares:
    """Heterogeneous least squares with phi = SCAD(lam, a), rho = 1/(a - 1).

    ``a = None`` picks a = 1 + 2/mu, so that rho = mu/2 and psi is (mu/2)-strongly convex (see
    ``least_squares_mcp``).
    """
    from fedbounds.algorithms.regularizers import SCAD

    check_positive("lam", lam, strict=False)
    if a is None:
        mu = float(np.linalg.eigvalsh(heterogeneous_least_squares(n, p, m, heterogeneity, None, seed)._H)[0])
        if mu <= 0:
            raise ValueError("a must be given when f is not strongly convex (mu = 0)")
        a = 1.0 + 2.0 / mu
    return _weakly_convex_ls(SCAD, n, p, m, heterogeneity, seed, lam=lam, a=a)
