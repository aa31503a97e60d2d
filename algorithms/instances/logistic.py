"""Federated logistic regression with a heterogeneity knob (FedProx synthetic(alpha, beta) style).

Client i holds m samples (a_j, y_j), y_j in {0, 1}, rows normalised to ||a_j|| = 1, and

    f_i(x) = (1/m) sum_j [log(1 + exp(a_j^T x)) - y_j a_j^T x] + (l2/2) ||x||^2 + alpha_pen sum_k x_k^2/(1 + x_k^2),

plus any regulariser phi. ``alpha_pen = 0`` is plain (convex) logistic regression; ``alpha_pen > 0`` is the
smooth weakly convex loss of fedproxgrad-notes.md section 3.1 (see ``nonconvex.py``).

Constants (notes section 3.1):
- Hessian of f_i: (1/m) sum_j s'(t_j) a_j a_j^T + l2 I + alpha_pen diag(h(x_k)), with s' = sigma (1 - sigma)
  in (0, 1/4] and h(w) = (2 - 6 w^2)/(1 + w^2)^3 in [-1/2, 2]. Both maxima are attained at x = 0, so
  L = (1/4) max_i lambda_max(A_i^T A_i / m) + l2 + 2 alpha_pen is EXACT (the smallest valid constant: it is
  lambda_max of the Hessian of the maximising client at x = 0).
- rho_f = max(0, alpha_pen/2 - l2): an upper bound on the weak convexity of every f_i (and so of f).
- mu = l2 - alpha_pen/2 when positive: a lower bound on the strong convexity of f (kind lower_bound).
- zeta2 at the certified x*.

Per-sample structure: the per-sample loss is the logistic term of sample j plus the (deterministic) l2 and
penalty terms, so f_i is the mean of the per-sample losses and minibatch gradients are unbiased.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from fedbounds.algorithms._validate import check_seed
from fedbounds.algorithms.base import Constant, Regularizer, Solution, check_int, check_positive, check_regularizer, client_data
from fedbounds.algorithms.instances._solvers import solve_composite
from fedbounds.algorithms.regularizers import Zero
from scipy.special import expit


def _penalty(x: np.ndarray) -> np.ndarray:
    """sum_k x_k^2/(1 + x_k^2) over the last axis."""
    x2 = x * x
    return (x2 / (1.0 + x2)).sum(axis=-1)


def _penalty_grad(x: np.ndarray) -> np.ndarray:
    return 2.0 * x / (1.0 + x * x) ** 2


def _penalty_curv(x: np.ndarray) -> np.ndarray:
    """Second derivative (2 - 6 x^2)/(1 + x^2)^3, elementwise; it lies in [-1/2, 2]."""
    x2 = x * x
    return (2.0 - 6.0 * x2) / (1.0 + x2) ** 3


@dataclass
class BinaryGLM:
    """Per-client rows ``A`` (n, m, p) with ||a_j|| <= 1 and labels ``y`` (n, m) in {0, 1}, loss ``ell(a^T x, y)``.

    Subclasses give the loss and its first two t-derivatives, and bounds ``curv_min <= ell'' <= curv_max``.
    f_i(x) = (1/m) sum_j ell(a_j^T x, y_j) + (l2/2)||x||^2 + alpha_pen sum_k x_k^2/(1 + x_k^2).
    """

    A: np.ndarray
    y: np.ndarray
    phi: Regularizer = field(default_factory=Zero)
    l2: float = 0.0
    alpha_pen: float = 0.0
    name: str = "glm"

    #: bounds on the second t-derivative of the loss, and whether the upper one is attained at x = 0
    curv_max: ClassVar[float] = 0.25
    curv_min: ClassVar[float] = 0.0
    L_attained: ClassVar[bool] = False

    def __post_init__(self) -> None:
        self.A = client_data("A", self.A, ("n", "m", "p"))
        self.y = client_data("y", self.y, ("n", "m"))
        self.phi = check_regularizer("phi", self.phi, allow_none=False)
        if self.y.shape != self.A.shape[:2]:
            raise ValueError(f"A must have shape (n, m, p) and y shape (n, m); got {self.A.shape}, {self.y.shape}")
        if not np.all((self.y == 0) | (self.y == 1)):
            raise ValueError("y must take values in {0, 1}")
        if np.any(np.linalg.norm(self.A, axis=-1) > 1.0 + 1e-12):
            raise ValueError("rows of A must have norm <= 1")
        self.l2 = check_positive("l2", self.l2, strict=False)
        self.alpha_pen = check_positive("alpha_pen", self.alpha_pen, strict=False)
        self.n, self.m, self.p = self.A.shape
        #: per-client second-moment matrices A_i^T A_i / m (n, p, p)
        self.moments = np.einsum("ikp,ikq->ipq", self.A, self.A) / self.m
        self._lam_max = float(np.linalg.eigvalsh(self.moments)[:, -1].max())
        self._solution: Solution | None = None
        self._solved_for: Regularizer | None = None

    # ---- the loss, elementwise in t = a^T x ----
    def _loss(self, t: np.ndarray, y: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _dloss(self, t: np.ndarray, y: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _d2loss(self, t: np.ndarray, y: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    # ---- per-sample structure (minibatch oracle) ----
    @property
    def num_samples(self) -> int:
        """Samples per client (equal across clients)."""
        return self.m

    def _regular_grad(self, X: np.ndarray) -> np.ndarray:
        return self.l2 * X + self.alpha_pen * _penalty_grad(X)

    def per_sample_grads(self, X: np.ndarray) -> np.ndarray:
        """ell'(a_j^T x_i, y_j) a_j + l2 x_i + alpha_pen grad pen(x_i): (..., n, p) -> (..., n, m, p)."""
        X = np.asarray(X, dtype=float)
        r = self._dloss(np.einsum("ikp,...ip->...ik", self.A, X), self.y)
        return r[..., None] * self.A + self._regular_grad(X)[..., None, :]

    def sample_grad(self, X: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """Mean per-sample gradient over the indices ``idx`` (..., n, b) of each client: (..., n, p)."""
        X = np.asarray(X, dtype=float)
        idx = np.asarray(idx)
        rows = np.arange(self.n)[:, None]
        A_sel = self.A[rows, idx]  # (..., n, b, p)
        r = self._dloss(np.einsum("...ikp,...ip->...ik", A_sel, X), self.y[rows, idx])
        return np.einsum("...ik,...ikp->...ip", r, A_sel) / idx.shape[-1] + self._regular_grad(X)

    # ---- the Problem interface ----
    def client_values(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        t = np.einsum("ikp,...ip->...ik", self.A, X)
        loss = self._loss(t, self.y).mean(axis=-1)
        return loss + 0.5 * self.l2 * np.sum(X * X, axis=-1) + self.alpha_pen * _penalty(X)

    def grad(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        r = self._dloss(np.einsum("ikp,...ip->...ik", self.A, X), self.y)
        return np.einsum("...ik,ikp->...ip", r, self.A) / self.m + self._regular_grad(X)

    def hess(self, X: np.ndarray) -> np.ndarray:
        """Hessians of the f_i at X (..., n, p): (..., n, p, p)."""
        X = np.asarray(X, dtype=float)
        w = self._d2loss(np.einsum("ikp,...ip->...ik", self.A, X), self.y)
        H = np.einsum("ikp,...ik,ikq->...ipq", self.A, w, self.A) / self.m
        diag = self.l2 + self.alpha_pen * _penalty_curv(X)
        return H + diag[..., None] * np.eye(self.p)

    def _stack(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return np.broadcast_to(x[..., None, :], (*x.shape[:-1], self.n, self.p))

    def f(self, x: np.ndarray) -> np.ndarray:
        return self.client_values(self._stack(x)).mean(axis=-1)

    def grad_f(self, x: np.ndarray) -> np.ndarray:
        return self.grad(self._stack(x)).mean(axis=-2)

    def hess_f(self, x: np.ndarray) -> np.ndarray:
        """Hessian of f at x (..., p): (..., p, p)."""
        return self.hess(self._stack(x)).mean(axis=-3)

    def psi(self, x: np.ndarray) -> np.ndarray:
        return self.f(x) + self.phi.value(x)

    # ---- constants ----
    @property
    def L(self) -> float:
        """curv_max max_i lambda_max(A_i^T A_i / m) + l2 + 2 alpha_pen (bounds both ends of the Hessian spectrum)."""
        return float(self.curv_max * self._lam_max + self.l2 + 2.0 * self.alpha_pen)

    @property
    def rho_f(self) -> float:
        """max(0, -curv_min max_i lambda_max(A_i^T A_i/m) + alpha_pen/2 - l2): weak convexity of every f_i, at most."""
        return float(max(0.0, -self.curv_min * self._lam_max + 0.5 * self.alpha_pen - self.l2))

    @property
    def convex(self) -> bool:
        """f convex and phi convex (so the certified stationary point is a global minimiser)."""
        return self.rho_f == 0.0 and self.phi.rho == 0.0

    def zeta2_at(self, x: np.ndarray) -> float:
        """(1/n) sum_i ||grad f_i(x) - grad f(x)||^2."""
        g_i = self.grad(self._stack(x))
        return float(np.mean(np.sum((g_i - g_i.mean(axis=0)) ** 2, axis=-1)))

    def _L_note(self) -> str:
        return "curv_max max_i lambda_max(A_i^T A_i/m) + l2 + 2 alpha_pen"

    @property
    def constants(self) -> dict[str, Constant]:
        sol = self.solution()
        rho_f = self.rho_f
        out = {
            "L": Constant(self.L, "exact" if self.L_attained else "upper_bound", self._L_note()),
            "rho": Constant(float(self.phi.rho), "exact", f"weak convexity of phi = {self.phi.name}"),
            "rho_f": Constant(
                rho_f,
                "exact" if rho_f == 0.0 else "upper_bound",
                "f convex"
                if rho_f == 0.0
                else "-curv_min max_i lambda_max(A_i^T A_i/m) + alpha_pen/2 - l2 (the penalty's curvature is >= -1/2, notes 3.1)",
            ),
            "zeta2": Constant(
                self.zeta2_at(sol.x_star),
                "exact" if self.convex else "estimate",
                f"(1/n) sum ||grad f_i(x*) - grad f(x*)||^2 at the certified x* (residual {sol.residual:.1e})"
                + ("" if self.convex else "; a stationary point, not necessarily the global minimiser"),
            ),
        }
        mu = self.l2 - 0.5 * self.alpha_pen + min(0.0, self.curv_min) * self._lam_max
        if mu > 0:
            out["mu"] = Constant(mu, "lower_bound", "l2 - alpha_pen/2 + curv_min lambda_max: strong convexity of f, at least")
        return out

    def solution(self) -> Solution:
        """x* and psi* with the natural-residual certificate (see ``_solvers``).

        Convex case: the global minimiser (``extra['psi_star_kind']`` = exact). Nonconvex (rho_f > 0 or a weakly
        convex phi): a certified stationary point reached from x = 0 (kind estimate); ``extra['hess_min_eig']``
        is the smallest Hessian eigenvalue of f there (> 0: a strict local minimiser when phi = 0).
        """
        if self._solution is None or self._solved_for is not self.phi:  # phi may be replaced after construction
            out = solve_composite(self.f, self.grad_f, self.hess_f, self.phi, self.L, np.zeros(self.p), convex_f=self.rho_f == 0.0)
            x = out.x
            if not np.all(np.isfinite(x)) or np.linalg.norm(x) > 1e6:
                raise ValueError(f"{self.name}: no finite minimiser found (pooled data separable?); use l2 > 0")
            lam_min = float(np.linalg.eigvalsh(self.hess_f(x))[0])
            self._solution = Solution(
                x,
                float(self.psi(x)),
                out.residual,
                out.gamma,
                method=out.method,
                extra={"global": self.convex, "psi_star_kind": "exact" if self.convex else "estimate", "hess_min_eig": lam_min},
            )
            self._solved_for = self.phi
        return self._solution


@dataclass
class Logistic(BinaryGLM):
    """Logistic loss ell(t, y) = log(1 + e^t) - y t, ell'' = s(1 - s) in (0, 1/4], maximal at t = 0."""

    name: str = "logistic"
    curv_max: ClassVar[float] = 0.25
    curv_min: ClassVar[float] = 0.0
    L_attained: ClassVar[bool] = True

    def _loss(self, t: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.logaddexp(0.0, t) - y * t

    def _dloss(self, t: np.ndarray, y: np.ndarray) -> np.ndarray:
        return expit(t) - y

    def _d2loss(self, t: np.ndarray, y: np.ndarray) -> np.ndarray:
        s = expit(t)
        return s * (1.0 - s)

    def _L_note(self) -> str:
        return "(1/4) max_i lambda_max(A_i^T A_i/m) + l2 + 2 alpha_pen: lambda_max of that client's Hessian at x = 0 (attained)"


def synthetic_features(
    n: int,
    p: int,
    m: int,
    alpha_het: float,
    beta_het: float,
    rng: np.random.Generator,
    *,
    delta: float = 0.0,
    shifted_features: int = 0,
    return_sensitive: bool = False,
) -> tuple[np.ndarray, ...]:
    """Binary synthetic(alpha, beta) generator in the style of FedProx (notes section 3.3).

    Per client: u_i ~ N(0, alpha_het) and label model w_i = w_0 + u_i 1 + sqrt(alpha_het) xi_i, intercept
    c_i = u_i + sqrt(alpha_het) e_i; B_i ~ N(0, beta_het) and feature mean v_i = B_i 1 + sqrt(beta_het) zeta_i;
    features x ~ N(v_i, diag(j^-1.2)); rows normalised to ||a|| = 1; labels y ~ Bernoulli(sigmoid(w_i^T a + c_i)).
    A sensitive attribute s ~ Bernoulli(pi_i), pi_i ~ U(0.1, 0.9) (client-specific group proportions) is
    always drawn; with ``shifted_features = k > 0`` it shifts the first k raw features by ``delta * s`` and the
    label logit by ``delta * (2 s - 1)``, so that the positive rate depends on s, the features carry a proxy
    for s (which the model does not see), and an unconstrained model is unfair.

    Deviations from FedProx (litian96/FedProx, data/synthetic_*/generate_synthetic.py), documented:
    - the unit-variance client parts (FedProx: w_i ~ N(u_i, I), v_i ~ N(B_i, I)) are scaled by the knobs and
      centred on a shared w_0 ~ N(0, I) and 0, so that (0, 0) is i.i.d. and the knobs only add heterogeneity;
    - Bernoulli labels on the normalised rows instead of an argmax on the raw ones (pooled data far from
      separable, so a finite minimiser of moderate norm exists); binary labels;
    - equal sample counts m per client (the minibatch oracle needs them; FedProx draws lognormal sizes).
    The standard-normal draws do not depend on the knobs (the knobs only scale them), so equal seeds give
    instances that differ only in heterogeneity. Returns (A, y) or (A, y, s).
    """
    check_int("n", n)
    check_int("p", p)
    check_int("m", m)
    check_positive("alpha_het", alpha_het, strict=False)
    check_positive("beta_het", beta_het, strict=False)
    check_positive("delta", delta, strict=False)
    shifted_features = check_int("shifted_features", shifted_features, 0)
    if shifted_features > p:
        raise ValueError(f"shifted_features must lie in [0, p] = [0, {p}], got {shifted_features}")
    sa, sb = np.sqrt(alpha_het), np.sqrt(beta_het)
    w0 = rng.standard_normal(p)
    u = sa * rng.standard_normal(n)
    W = w0 + u[:, None] + sa * rng.standard_normal((n, p))
    c = u + sa * rng.standard_normal(n)
    V = sb * rng.standard_normal(n)[:, None] + sb * rng.standard_normal((n, p))
    scale = np.arange(1, p + 1, dtype=float) ** -0.6
    X = V[:, None, :] + scale * rng.standard_normal((n, m, p))
    pi = rng.uniform(0.1, 0.9, size=n)
    s = (rng.random((n, m)) < pi[:, None]).astype(float)
    if shifted_features > 0:
        X[..., :shifted_features] += delta * s[..., None]
    A = X / np.linalg.norm(X, axis=-1, keepdims=True)
    logits = np.einsum("ikp,ip->ik", A, W) + c[:, None]
    if shifted_features > 0:  # the label depends on s too, through the group shift of its logit
        logits += delta * (2.0 * s - 1.0)
    y = (rng.random((n, m)) < expit(logits)).astype(float)
    return (A, y, s) if return_sensitive else (A, y)


def synthetic_logistic(
    n: int = 10,
    p: int = 20,
    m: int = 50,
    alpha_het: float = 1.0,
    beta_het: float = 1.0,
    l2: float = 0.01,
    phi: Regularizer | None = None,
    seed: int = 0,
) -> Logistic:
    """Convex federated logistic regression on synthetic(alpha_het, beta_het) data (``synthetic_features``).

    ``l2 > 0`` (default 0.01) makes f l2-strongly convex (constant ``mu``) and keeps x* of moderate norm; with
    ``l2 = 0`` the feature-shift knob ``beta_het`` lets the model fit each client's cluster separately, so
    zeta2 then grows with ``alpha_het`` only. ``phi`` is any regulariser (e.g. L1).
    """
    check_positive("l2", l2, strict=False)
    check_regularizer("phi", phi)
    A, y = synthetic_features(n, p, m, alpha_het, beta_het, np.random.default_rng(check_seed("seed", seed)))
    return Logistic(A, y, phi if phi is not None else Zero(), l2=l2, name="logistic")
