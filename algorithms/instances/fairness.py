"""The DS FedProxGrad fairness instance (fedproxgrad-notes.md section 3, paper (a) section 1.1).

    F(x) = f(x) + lam r(x),   f = (1/N) sum_i f_i,

- f_i: logistic loss + alpha_pen sum_k x_k^2/(1 + x_k^2) on client i's m samples (notes 3.1), rows ||a|| = 1;
  L_f = (1/4) max_i lambda_max(A_i^T A_i/m) + 2 alpha_pen (exact, attained at x = 0), rho_f = alpha_pen/2
  (upper bound); f_i >= 0.
- r = Delta^2, the squared demographic-parity gap (notes 3.2, option R1): Delta(x) = mu_1(x) - mu_0(x), with
  mu_g the mean of sigmoid(a_j^T x) over the samples of group s = g pooled across all clients. It is global
  and non-separable. With ||a|| <= 1: |Delta| <= 1 and ||grad Delta|| <= 1/2, so ||grad r|| <= G_r = 1; and
  since max |sigmoid''| = 1/(6 sqrt 3), ||hess r|| <= L_r = 2 (1/4) + 4/(6 sqrt 3) ~ 0.885 (both upper bounds).
- L_F = L_f + lam L_r (A1(i)); F >= 0, so F* >= F_star_lower = 0 (notes 1.5, item 1).
- (G, B) of assumption (8), (1/N) sum ||grad f_i(x)||^2 <= G^2 + B^2 ||grad f(x)||^2: B^2 is fixed (parameter
  ``B2``) and G^2 estimated as the maximum of (1/N) sum ||grad f_i||^2 - B^2 ||grad f||^2 over sampled points
  (notes 3.3): random points in a ball about 0 and the iterates of gradient descent on F from 0.
- S2 double sampling (notes 3.2): g = 2 Delta_hat_A grad Delta_hat_B with two independent group-stratified
  minibatches A and B is unbiased for grad r; its exact variance is ``double_sample_variance``. The paper's
  e^stoch carries no lam, so its sigma^2 = lam^2 Var(g).

Heterogeneity (notes 3.3): synthetic(alpha_het, beta_het) clients (``logistic.synthetic_features``), a
sensitive attribute s ~ Bernoulli(pi_i) with client-specific pi_i ~ U(0.1, 0.9), and a shift delta * s of the
first ``shifted_features`` features (and delta (2 s - 1) of the label logit), so that the unconstrained model
is unfair (default seed: Delta(x*) = 0.039 at lam = 0, 0.033 at lam = 1, 0.013 at lam = 10).

Protocol note: phi = Zero and psi = f (the Problem interface), but ``solution()`` is about the objective the
algorithm minimises, F: x* is a certified stationary point of F (residual gamma ||grad F(x*)||, gamma = 1/L_F)
and ``psi_star`` is F(x*) (kind estimate, F is nonconvex).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from fedbounds.algorithms._validate import check_seed
from fedbounds.algorithms.base import Constant, Solution, check_int, check_positive, client_data
from fedbounds.algorithms.instances._solvers import solve_composite
from fedbounds.algorithms.instances.logistic import Logistic, synthetic_features
from fedbounds.algorithms.regularizers import Zero
from scipy.special import expit

#: notes 3.2: ||grad r|| <= 2 |Delta| ||grad Delta|| <= 2 * 1 * (1/2)
G_R_BOUND = 1.0
#: notes 3.2: ||hess r|| <= 2 ||grad Delta||^2 + 2 |Delta| ||hess Delta|| <= 2 (1/4) + 2 * 2/(6 sqrt 3)
L_R_BOUND = 0.5 + 4.0 / (6.0 * float(np.sqrt(3.0)))


@dataclass
class Fairness(Logistic):
    """Logistic + nonconvex penalty clients with sensitive attribute ``s`` (n, m) and r = Delta^2; module doc."""

    s: np.ndarray | None = None
    lam: float = 1.0
    B2: float = 1.0
    gb_radius: float | None = None
    gb_points: int = 200
    gb_path: int = 200
    gb_seed: int = 0
    name: str = "fairness"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.phi, Zero):
            raise ValueError("phi must be Zero for the fairness instance (F = f + lam r is smooth)")
        if self.s is None:
            raise ValueError("s (the sensitive attribute, shape (n, m)) is required")
        self.s = client_data("s", self.s, ("n", "m"))
        if self.s.shape != (self.n, self.m) or not np.all((self.s == 0) | (self.s == 1)):
            raise ValueError(f"s must have shape {(self.n, self.m)} with values in {{0, 1}}")
        self.lam = check_positive("lam", self.lam, strict=False)
        self.B2 = check_positive("B2", self.B2)
        if self.gb_radius is not None:
            check_positive("gb_radius", self.gb_radius)
        self.gb_points = check_int("gb_points", self.gb_points, 0)
        self.gb_path = check_int("gb_path", self.gb_path, 0)
        self.gb_seed = check_seed("gb_seed", self.gb_seed)
        self._A_pool = self.A.reshape(-1, self.p)
        s_pool = self.s.reshape(-1)
        self.group1 = np.flatnonzero(s_pool == 1)
        self.group0 = np.flatnonzero(s_pool == 0)
        if self.group1.size == 0 or self.group0.size == 0:
            raise ValueError("both groups s = 0 and s = 1 must be non-empty")
        #: Delta(x) = sigmoid(A_pool x) @ weights
        self.weights = s_pool / self.group1.size - (1.0 - s_pool) / self.group0.size
        self._gb: tuple[float, dict] | None = None

    # ---- the fairness regulariser r = Delta^2 (notes 3.2, R1) ----
    def _t(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(x, dtype=float) @ self._A_pool.T

    def Delta(self, x: np.ndarray) -> np.ndarray:
        """Demographic-parity gap mu_1(x) - mu_0(x), shape ``x.shape[:-1]``."""
        return expit(self._t(x)) @ self.weights

    def grad_Delta(self, x: np.ndarray) -> np.ndarray:
        s = expit(self._t(x))
        return (s * (1.0 - s) * self.weights) @ self._A_pool

    def r(self, x: np.ndarray) -> np.ndarray:
        """r(x) = Delta(x)^2, shape ``x.shape[:-1]``."""
        return self.Delta(x) ** 2

    def grad_r(self, x: np.ndarray) -> np.ndarray:
        """grad r = 2 Delta grad Delta, shape ``x.shape``."""
        return 2.0 * self.Delta(x)[..., None] * self.grad_Delta(x)

    def hess_r(self, x: np.ndarray) -> np.ndarray:
        """hess r = 2 grad Delta grad Delta^T + 2 Delta A^T diag(sigmoid'' w) A, shape (..., p, p)."""
        s = expit(self._t(x))
        d1 = s * (1.0 - s)
        d2 = d1 * (1.0 - 2.0 * s)
        D = s @ self.weights
        gD = (d1 * self.weights) @ self._A_pool
        HD = np.einsum("jp,...j,jq->...pq", self._A_pool, d2 * self.weights, self._A_pool)
        return 2.0 * gD[..., :, None] * gD[..., None, :] + 2.0 * D[..., None, None] * HD

    def F(self, x: np.ndarray) -> np.ndarray:
        """F(x) = f(x) + lam r(x)."""
        return self.f(x) + self.lam * self.r(x)

    def grad_F(self, x: np.ndarray) -> np.ndarray:
        return self.grad_f(x) + self.lam * self.grad_r(x)

    def hess_F(self, x: np.ndarray) -> np.ndarray:
        return self.hess_f(x) + self.lam * self.hess_r(x)

    # ---- S2: the unbiased double-sampling estimator of grad r (notes 3.2) ----
    def _group_draw(self, rng: np.random.Generator, group: np.ndarray, shape: tuple[int, ...], batch: int) -> np.ndarray:
        return group[rng.integers(0, group.size, size=(*shape, batch))]

    def grad_r_double_sample(self, x: np.ndarray, rng: np.random.Generator, batch: int) -> np.ndarray:
        """g = 2 Delta_hat_A grad Delta_hat_B, unbiased for grad r; x (..., p) -> (..., p).

        A and B are independent group-stratified minibatches: ``batch`` samples drawn uniformly with replacement
        from each pooled group (draw order: A's group 1, A's group 0, B's group 1, B's group 0). Then
        E Delta_hat_A = Delta and E grad Delta_hat_B = grad Delta, and by independence E g = 2 Delta grad Delta.
        """
        batch = check_int("batch", batch)
        x = np.asarray(x, dtype=float)
        shape = x.shape[:-1]
        a1 = self._A_pool[self._group_draw(rng, self.group1, shape, batch)]  # (..., b, p)
        a0 = self._A_pool[self._group_draw(rng, self.group0, shape, batch)]
        b1 = self._A_pool[self._group_draw(rng, self.group1, shape, batch)]
        b0 = self._A_pool[self._group_draw(rng, self.group0, shape, batch)]

        def t(a: np.ndarray) -> np.ndarray:
            return np.einsum("...bp,...p->...b", a, x)

        D_A = expit(t(a1)).mean(axis=-1) - expit(t(a0)).mean(axis=-1)
        s1, s0 = expit(t(b1)), expit(t(b0))
        gD_B = np.einsum("...b,...bp->...p", s1 * (1 - s1), b1) / batch - np.einsum("...b,...bp->...p", s0 * (1 - s0), b0) / batch
        return 2.0 * D_A[..., None] * gD_B

    def double_sample_variance(self, x: np.ndarray, batch: int) -> np.ndarray:
        """Exact E||g - grad r(x)||^2 of ``grad_r_double_sample``, shape ``x.shape[:-1]``.

        With v_A = (Var_1 sigmoid + Var_0 sigmoid)/b and v_B = (tr Cov_1 + tr Cov_0)(sigmoid' a)/b (population
        moments over each pooled group), independence gives E||g||^2 = 4 (Delta^2 + v_A)(||grad Delta||^2 + v_B).
        """
        batch = check_int("batch", batch)
        s = expit(self._t(x))
        d1 = s * (1.0 - s)
        D = s @ self.weights
        gD = (d1 * self.weights) @ self._A_pool
        v_A = 0.0
        v_B = 0.0
        for g in (self.group1, self.group0):
            sg = s[..., g]
            v_A = v_A + sg.var(axis=-1)
            vec = d1[..., g, None] * self._A_pool[g]  # (..., |g|, p)
            v_B = v_B + (np.sum(vec * vec, axis=(-1, -2)) / g.size - np.sum(vec.mean(axis=-2) ** 2, axis=-1))
        v_A, v_B = v_A / batch, v_B / batch
        gD2 = np.sum(gD * gD, axis=-1)
        return 4.0 * ((D * D + v_A) * (gD2 + v_B) - D * D * gD2)

    # ---- constants ----
    def dissimilarity(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """((1/N) sum_i ||grad f_i(x)||^2, ||grad f(x)||^2), the two sides of assumption (8); x (..., p)."""
        g_i = self.grad(self._stack(x))
        return np.mean(np.sum(g_i * g_i, axis=-1), axis=-1), np.sum(g_i.mean(axis=-2) ** 2, axis=-1)

    def sample_points(self) -> tuple[np.ndarray, dict]:
        """The points at which G^2 is estimated (notes 3.3) and their description.

        ``gb_points`` points x = rho u with u uniform on the unit sphere and rho uniform on [0, R] (radius R =
        ``gb_radius``, default max(1, 2 ||x*||), about 0, where DS FedProxGrad starts), the ``gb_path`` iterates of
        gradient descent on F from 0 with step 1/L_F, and x* itself; seeded by ``gb_seed``.
        """
        sol = self.solution()
        R = self.gb_radius if self.gb_radius is not None else max(1.0, 2.0 * float(np.linalg.norm(sol.x_star)))
        rng = np.random.default_rng(self.gb_seed)
        u = rng.standard_normal((self.gb_points, self.p))
        u /= np.linalg.norm(u, axis=-1, keepdims=True)
        ball = R * rng.random((self.gb_points, 1)) * u
        step = 1.0 / self.L_F
        path = np.zeros((self.gb_path + 1, self.p))
        for k in range(self.gb_path):
            path[k + 1] = path[k] - step * self.grad_F(path[k])
        pts = np.concatenate([ball, path, sol.x_star[None]], axis=0)
        info = {"radius": R, "ball_points": self.gb_points, "gd_path_points": self.gb_path + 1, "seed": self.gb_seed}
        return pts, info

    def _estimate_G2(self) -> tuple[float, dict]:
        if self._gb is None:
            pts, info = self.sample_points()
            lhs, g2 = self.dissimilarity(pts)
            self._gb = (float(max(0.0, np.max(lhs - self.B2 * g2))), info)
        return self._gb

    @property
    def L_F(self) -> float:
        """L_f + lam L_r (A1(i)), an upper bound."""
        return self.L + self.lam * L_R_BOUND

    @property
    def constants(self) -> dict[str, Constant]:
        sol = self.solution()
        G2, info = self._estimate_G2()
        L_note = "(1/4) max_i lambda_max(A_i^T A_i/m) + 2 alpha_pen: attained at x = 0 (notes 3.1)"
        return {
            "L": Constant(self.L, "exact", L_note),
            "L_f": Constant(self.L, "exact", L_note),
            "rho": Constant(0.0, "exact", "phi = 0"),
            "rho_f": Constant(self.rho_f, "upper_bound", "alpha_pen/2: the penalty's curvature is >= -alpha_pen/2 (notes 3.1)"),
            "L_r": Constant(L_R_BOUND, "upper_bound", "2 (1/4) + 4/(6 sqrt 3) for r = Delta^2 with ||a|| <= 1 (notes 3.2)"),
            "G_r": Constant(G_R_BOUND, "upper_bound", "2 |Delta| ||grad Delta|| <= 2 * 1 * 1/2 (notes 3.2)"),
            "lam": Constant(self.lam, "exact", "fairness weight lambda"),
            "L_F": Constant(self.L_F, "upper_bound", "L_f + lam L_r (A1(i))"),
            "B": Constant(float(np.sqrt(self.B2)), "exact", "fixed by choice (parameter B2); G is estimated for it"),
            "G": Constant(
                float(np.sqrt(G2)),
                "estimate",
                "sqrt of max_x [(1/N) sum ||grad f_i(x)||^2 - B^2 ||grad f(x)||^2] over "
                f"{info['ball_points']} points in the ball of radius {info['radius']:.3g} about 0 (radius uniform, "
                f"direction uniform), {info['gd_path_points']} gradient-descent iterates on F from 0 (step 1/L_F) "
                f"and x*; seed {info['seed']} (notes 3.3)",
            ),
            "zeta2": Constant(self.zeta2_at(sol.x_star), "estimate", "(1/N) sum ||grad f_i(x*) - grad f(x*)||^2 at the stationary x* of F"),
            "F_star_lower": Constant(0.0, "lower_bound", "losses, penalty and r are >= 0 (notes 1.5, item 1)"),
        }

    def solution(self) -> Solution:
        """A certified stationary point x* of F (not of psi = f): residual gamma ||grad F(x*)|| at gamma = 1/L_F.

        ``psi_star`` is F(x*) (kind estimate: F is nonconvex; found by L-BFGS-B from 0 and a Newton polish);
        ``extra`` has f(x*), r(x*), Delta(x*) and the smallest Hessian eigenvalue of F at x*.
        """
        if self._solution is None:
            out = solve_composite(self.F, self.grad_F, self.hess_F, self.phi, self.L_F, np.zeros(self.p), convex_f=False)
            x = out.x
            self._solution = Solution(
                x,
                float(self.F(x)),
                out.residual,
                out.gamma,
                method=out.method + " (on F = f + lam r)",
                extra={
                    "objective": "F",
                    "global": False,
                    "psi_star_kind": "estimate",
                    "f": float(self.f(x)),
                    "r": float(self.r(x)),
                    "Delta": float(self.Delta(x)),
                    "hess_min_eig": float(np.linalg.eigvalsh(self.hess_F(x))[0]),
                },
            )
        return self._solution


def fairness(
    n: int = 10,
    p: int = 20,
    m: int = 50,
    alpha_het: float = 1.0,
    beta_het: float = 1.0,
    alpha_pen: float = 0.1,
    lam: float = 1.0,
    delta: float = 2.0,
    shifted_features: int = 5,
    B2: float = 1.0,
    gb_radius: float | None = None,
    seed: int = 0,
) -> Fairness:
    """A seeded fairness instance (notes 3.1 to 3.3; the notes' pilot used n = 10, p = 20, alpha_het = beta_het
    = 1, alpha_pen = 0.1, lam = 1)."""
    check_positive("alpha_pen", alpha_pen, strict=False)
    check_positive("lam", lam, strict=False)
    check_positive("delta", delta, strict=False)
    check_positive("B2", B2)
    if gb_radius is not None:
        check_positive("gb_radius", gb_radius)
    rng = np.random.default_rng(check_seed("seed", seed))
    A, y, s = synthetic_features(n, p, m, alpha_het, beta_het, rng, delta=delta, shifted_features=shifted_features, return_sensitive=True)
    return Fairness(A, y, Zero(), l2=0.0, alpha_pen=alpha_pen, s=s, lam=lam, B2=B2, gb_radius=gb_radius, gb_seed=seed)
