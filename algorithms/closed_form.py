"""Closed-form moments of a time-invariant affine round, at any round t and in the limit, without a round loop.

A time-invariant round on a linear-Gaussian instance is s_{t+1} = M s_t + b + N xi_t with Cov[N xi_t] = Sigma
(``fedbounds.algorithms.exact.affine_round`` reads M, b, Sigma off the engine's own ``step``). From a deterministic
s_0 the moments after t rounds are

    m_t = M^t s_0 + (I + M + ... + M^{t-1}) b,       C_t = sum_{k<t} M^k Sigma (M^k)^T,

and, when the spectral radius of M is < 1, m_inf = (I - M)^{-1} b and C_inf solves the discrete Lyapunov equation
C = M C M^T + Sigma (``scipy.linalg.solve_discrete_lyapunov``).

Two details make this robust:

* **Decaying subspace.** Rounds often conserve something: FedNMap's corrections keep mean_i c_i = 0, an eigenvalue 1
  of M that s_0, b and the noise never excite. Its eigenvalue sits next to the slowest decaying one (1 - 4e-7 at
  Theorem 5's steps), so a basis found by a rank tolerance (a Krylov closure) is not invariant to the accuracy that
  1/(1 - radius) amplifies. Instead the left invariant subspace Y of the eigenvalues with modulus >= 1 -
  :data:`UNIT_TOL` is read off an ordered real Schur form of M^T; its orthogonal complement U is M-invariant (to
  rounding), and when s_0, b and Sigma lie in it (their Y-components below :data:`LEAK_RTOL`, exactly zero in exact
  arithmetic) M is restricted to U, where every eigenvalue decays. When a non-decaying mode is excited the whole
  state is kept: the spectral radius is then >= 1 and the limit is refused (:class:`NoLimit`), truthfully.
  (:func:`reachable_basis`, the Krylov closure, is kept as a utility; it is no longer what decides the limit.)
* **Two evaluators.** Where M (restricted) is diagonalisable with a well-conditioned eigenbasis W (cond(W) <=
  :data:`EIG_COND_MAX`), M = W diag(lambda) W^{-1} gives every moment at any t in O(r^2): the mean from
  lambda^t and the geometric sums G_t(lambda) = (1 - lambda^t)/(1 - lambda), the covariance from
  G_t(lambda_i lambda_j). Otherwise (a non-diagonalisable or ill-conditioned M) a doubling scheme on the
  augmented map (M^{2^j}, sum_{k<2^j} M^k b, C_{2^j}) gives them in O(r^3 log t), exactly as the round loop would.

Expectations of the quadratic metrics follow from E[q(y)] = c + a^T E y + E[y]^T A E[y] / 2 + tr(A Cov y) / 2 for
y an affine readout of the state. :meth:`ClosedForm.rounds_to_target` finds the first round after which a metric
stays <= a target by bisection on t, at a cost that does not grow with t.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg as sla

__all__ = ["EIG_COND_MAX", "LEAK_RTOL", "METRICS", "UNIT_TOL", "ClosedForm", "NoLimit", "closed_form", "decaying_basis", "reachable_basis"]

#: the eigenbasis is used when its condition number is at most this (else doubling)
EIG_COND_MAX = 1e6
#: "auto" keeps the eigenbasis only where it agrees with doubling to this relative tolerance (see ``_agrees``)
AUTO_RTOL = 1e-10
#: a spectral radius above 1 - this is treated as 1 (no limit): the restriction to the reachable subspace rounds
RADIUS_TOL = 1e-12
#: relative rank tolerance of the reachable subspace (:func:`reachable_basis`)
RANK_RTOL = 1e-10
#: an eigenvalue of modulus >= 1 - this is non-decaying (a conserved quantity, a rotation, growth)
UNIT_TOL = 1e-11
#: s_0, b, Sigma with components along the non-decaying left subspace below this (relative) do not excite it; the
#: left subspace itself is computed to ~ eps / sep (8e-9 relative at Theorem 5's steps), far below this
LEAK_RTOL = 1e-5
#: steps of iterative refinement of the limit (residuals of the whole state's equations in np.longdouble: where that
#: is 80-bit, the fixed point at heterogeneity 1e6, |b| ~ 1e6 and 1 - radius ~ 1e-7, is x* to 1e-8 instead of 1e-4)
REFINE_STEPS = 2
#: the metrics (names as in ``fedbounds.algorithms.exact.ExactTrajectory``'s ``E_<name>``)
METRICS = ("psi_gap", "dist_sq", "normal_map_sq", "natural_residual_sq")


class NoLimit(ValueError):
    """The round's map has spectral radius >= 1 on its reachable subspace: the moments have no limit."""


def reachable_basis(M: np.ndarray, generators: np.ndarray, rtol: float = RANK_RTOL, normalise: int | None = None) -> np.ndarray:
    """An orthonormal basis (d, r) of the smallest M-invariant subspace containing the columns of ``generators``.

    The first ``normalise`` columns (all when None) are normalised first (so their scales do not decide the rank).
    The Krylov closure adds the orthonormalised part of M V outside span(V) (Gram-Schmidt twice) while its singular
    values exceed ``rtol`` times max(1, ||M||). A rank tolerance decides what is dropped, so the basis is invariant
    only to about ``rtol``: :func:`closed_form` does not use it to decide a limit (see :func:`decaying_basis`)."""
    G = np.array(generators, dtype=float)
    k = G.shape[1] if normalise is None else int(normalise)
    norms = np.linalg.norm(G, axis=0)
    G[:, :k] /= np.where(norms[:k] > 0, norms[:k], 1.0)
    G = G[:, norms > 0]
    if G.shape[1] == 0:
        return np.zeros((M.shape[0], 0))
    V = sla.orth(G, rcond=rtol)
    scale = max(1.0, float(np.linalg.norm(M, 2)))
    for _ in range(M.shape[0] + 1):
        W = M @ V
        W -= V @ (V.T @ W)
        W -= V @ (V.T @ W)  # twice: one Gram-Schmidt pass leaves O(eps cond) of span(V)
        u, sv, _ = np.linalg.svd(W, full_matrices=False)
        new = u[:, sv > rtol * scale]
        if new.shape[1] == 0:
            return V
        new -= V @ (V.T @ new)
        new = np.linalg.qr(new)[0]
        V = np.hstack([V, new])
    return V


def decaying_basis(M: np.ndarray, s0: np.ndarray, b: np.ndarray, Sigma: np.ndarray) -> tuple[np.ndarray, float]:
    """(U, leak): an orthonormal basis U (d, r) of an M-invariant subspace containing s0, b and the range of Sigma on
    which every eigenvalue of M has modulus < 1 - :data:`UNIT_TOL`, when there is one; else (identity, leak).

    The non-decaying left subspace Y (the first columns of an ordered real Schur form of M^T) has Y^T M = T Y^T, so
    its orthogonal complement U is M-invariant. ``leak`` is the largest relative component of s0, b, Sigma along Y;
    above :data:`LEAK_RTOL` a non-decaying mode is excited and the whole space is returned (no limit exists)."""
    d = M.shape[0]
    if d == 0:
        return np.zeros((0, 0)), 0.0
    _, Z, k = sla.schur(M.T, output="real", sort=lambda re, im: bool(np.hypot(re, im) >= 1.0 - UNIT_TOL))
    if k == 0:
        return np.eye(d), 0.0
    Y = Z[:, :k]

    def rel(v: np.ndarray) -> float:
        n = float(np.linalg.norm(v))
        return float(np.linalg.norm(Y.T @ v)) / n if n > 0 else 0.0

    sig = float(np.linalg.norm(Sigma))
    leak = max(rel(s0), rel(b), float(np.linalg.norm(Y.T @ Sigma @ Y)) / sig if sig > 0 else 0.0)
    if leak > LEAK_RTOL:
        return np.eye(d), leak
    return Z[:, k:], leak


def _geometric(r: np.ndarray, t: int | float) -> np.ndarray:
    """G_t(r) = sum_{k<t} r^k = (1 - r^t)/(1 - r), elementwise for complex r with |r| <= 1 (t = inf: 1/(1 - r))."""
    r = np.asarray(r, dtype=complex)
    if np.isinf(t):
        return 1.0 / (1.0 - r)
    out = np.empty_like(r)
    zero = r == 0
    out[zero] = 1.0 if t >= 1 else 0.0
    nz = ~zero
    lr = np.log(r[nz])
    small = np.abs(lr) < 1e-8
    num = np.expm1(t * lr)
    den = np.expm1(lr)
    with np.errstate(invalid="ignore", divide="ignore"):
        g = np.where(small, t * (1.0 + 0.5 * (t - 1) * lr), num / np.where(small, 1.0, den))
    out[nz] = g
    return out


@dataclass
class _Metric:
    """E[c + a^T y + y^T A y / 2] with y = y0 + R s."""

    c: float
    a: np.ndarray
    A: np.ndarray
    y0: np.ndarray
    R: np.ndarray


@dataclass
class ClosedForm:
    """Closed-form moments of one affine round (see the module docstring); build it with :func:`closed_form`."""

    algorithm: str
    params: dict
    U: np.ndarray  # (d, r) orthonormal basis of the decaying invariant subspace (or the whole space, see decaying_basis)
    M: np.ndarray  # (r, r) restricted map
    b: np.ndarray  # (r,)
    Sigma: np.ndarray  # (r, r)
    s0: np.ndarray  # (r,)
    metrics: dict[str, _Metric]
    method: str  # "eigen" or "doubling"
    spectral_radius: float
    eig_cond: float
    full: tuple[np.ndarray, np.ndarray, np.ndarray] | None = field(default=None, repr=False)  # the whole state's (M, b, Sigma)
    leak: float = 0.0  # the largest relative component of s0, b, Sigma along the non-decaying modes (decaying_basis)
    _eig: dict[str, Any] = field(default_factory=dict, repr=False)
    _table: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list, repr=False)
    _limit_cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def r(self) -> int:
        """Dimension of the reachable subspace."""
        return int(self.M.shape[0])

    # ---- moments -------------------------------------------------------------------------------------------
    def _doubling(self, t: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(M^t, sum_{k<t} M^k b, C_t) by binary powering of the augmented map."""
        if not self._table:
            self._table.append((self.M, self.b.copy(), self.Sigma.copy()))
        r = self.r
        A, s, C = np.eye(r), np.zeros(r), np.zeros((r, r))
        j = 0
        while t >> j:
            while len(self._table) <= j:
                P, sp, Cp = self._table[-1]
                self._table.append((P @ P, sp + P @ sp, Cp + P @ Cp @ P.T))
            if (t >> j) & 1:
                P, sp, Cp = self._table[j]
                A, s, C = P @ A, P @ s + sp, P @ C @ P.T + Cp
            j += 1
        return A, s, 0.5 * (C + C.T)

    def moments(self, t: int | float) -> tuple[np.ndarray, np.ndarray]:
        """(E[s_t], Cov[s_t]) in the full state coordinates after t rounds (t = inf: the limit, see :meth:`limit`)."""
        if np.isinf(t):
            m, C = self._limit_reduced()
        elif self.method == "eigen":
            e = self._eig
            lam, W = e["lam"], e["W"]
            Ct = W @ (e["S"] * _geometric(np.outer(lam, lam), t)) @ W.T
            m, C = self._mean(t), 0.5 * (Ct.real + Ct.real.T)
        else:
            A, s, C = self._doubling(int(t))
            m = self._mean(t, A, s)
        return self.U @ m, self.U @ C @ self.U.T

    def _mean(self, t: int | float, A: np.ndarray | None = None, s: np.ndarray | None = None) -> np.ndarray:
        """E[s_t] (reduced). Where the limit exists, m_inf + M^t (s_0 - m_inf) with the refined m_inf: the geometric sum
        of a large offset b (heterogeneity 1e6) would lose cond(I - M) |b| eps to rounding."""
        minf = self._limit_cache.get("minf")
        if self.method == "eigen" and A is None:
            e = self._eig
            lam = e["lam"]
            if minf is not None:
                return minf + (e["W"] @ (lam**t * e["dm"])).real
            return (e["W"] @ (lam**t * e["m0"] + _geometric(lam, t) * e["b"])).real
        if A is None:
            A, s, _ = self._doubling(int(t))
        return A @ (self.s0 - minf) + minf if minf is not None else A @ self.s0 + s

    def _limit_reduced(self) -> tuple[np.ndarray, np.ndarray]:
        if not self.spectral_radius < 1.0 - RADIUS_TOL:
            raise NoLimit(f"no limit as t -> infinity: the round's map has spectral radius {self.spectral_radius:.12g} "
                          f">= 1 - {RADIUS_TOL:g} "
                          f"on its reachable subspace (dimension {self.r})")
        if "limit" in self._limit_cache:
            return self._limit_cache["limit"]
        eye = np.eye(self.r)
        m = np.linalg.solve(eye - self.M, self.b)
        C = sla.solve_discrete_lyapunov(self.M, self.Sigma)
        C = 0.5 * (C + C.T)
        if self.full is not None:  # refinement: residuals of the whole state's equations in extended precision
            Mf, bf, Sf = (np.asarray(v, dtype=np.longdouble) for v in self.full)
            U = self.U.astype(np.longdouble)
            for _ in range(REFINE_STEPS):
                Um = U @ m.astype(np.longdouble)
                r = U.T @ (bf - Um + Mf @ Um)
                m = m + np.linalg.solve(eye - self.M, np.asarray(r, dtype=float))
                UC = U @ C.astype(np.longdouble) @ U.T
                R = U.T @ (Sf + Mf @ UC @ Mf.T) @ U - C.astype(np.longdouble)
                dC = sla.solve_discrete_lyapunov(self.M, np.asarray(0.5 * (R + R.T), dtype=float))
                C = C + 0.5 * (dC + dC.T)
        self._limit_cache["limit"] = (m, C)
        return m, C

    def limit(self) -> tuple[np.ndarray, np.ndarray]:
        """(E[s_inf], Cov[s_inf]): the fixed point and the solution of C = M C M^T + Sigma; :class:`NoLimit` if the
        spectral radius is >= 1."""
        return self.moments(np.inf)

    # ---- metrics -------------------------------------------------------------------------------------------
    def expectation(self, metric: str, t: int | float) -> float:
        """E[metric] after t rounds (t = inf: in the limit). ``metric`` in :data:`METRICS` (where it applies)."""
        q = self._metric(metric)
        if self.method == "eigen" and not np.isinf(t):
            e = self._eig
            lam = e["lam"]
            Rt, B = e["R"][metric], e["B"][metric]
            if "minf" in self._limit_cache:
                y = q.y0 + e["yinf"][metric] + (Rt @ (lam**t * e["dm"])).real
            else:
                y = q.y0 + (Rt @ (lam**t * e["m0"] + _geometric(lam, t) * e["b"])).real
            tr = float(np.sum(B * e["S"] * _geometric(np.outer(lam, lam), t)).real)
        else:
            if np.isinf(t):
                m, C = self._limit_reduced()
            else:
                A, s, C = self._doubling(int(t))
                m = self._mean(t, A, s)
            return self._from_reduced(metric, m, C)
        return float(q.c + q.a @ y + 0.5 * y @ q.A @ y + 0.5 * tr)

    def _from_reduced(self, metric: str, m: np.ndarray, C: np.ndarray) -> float:
        """E[metric] from reduced moments (m, C)."""
        q = self._metric(metric)
        RU = q.R @ self.U
        y = q.y0 + RU @ m
        tr = float(np.sum((RU.T @ q.A @ RU) * C))
        return float(q.c + q.a @ y + 0.5 * y @ q.A @ y + 0.5 * tr)

    def _metric(self, metric: str) -> _Metric:
        if metric not in self.metrics:
            raise ValueError(f"metric must be one of {sorted(self.metrics)} for {self.algorithm}, got {metric!r}")
        return self.metrics[metric]

    def rounds_to_target(self, metric: str, target: float, *, t_max: int = 10**12) -> int | None:
        """The first round t with E[metric] <= ``target`` at t and at every later round checked: t + 2^j (j = 0, 1,
        ...) until the slowest mode has decayed by 1e-12, and the limit. Bisection on t (O(log t) evaluations).
        None when the limit is above the target or no round up to ``t_max`` qualifies; :class:`NoLimit` if there is
        no limit. The checks at t + 2^j are samples, not a proof that the curve never recrosses."""
        target = float(target)
        if not np.isfinite(target):
            raise ValueError(f"target must be finite, got {target!r}")
        if self.expectation(metric, np.inf) > target:
            return None
        slow = max(self.spectral_radius, 1e-300)
        horizon = int(min(t_max, np.ceil(np.log(1e-12) / np.log(slow)) if slow < 1.0 else t_max))
        offsets = [0] + [2**j for j in range(max(1, int(np.ceil(np.log2(max(horizon, 2))))) + 1)]

        def stays(t: int) -> bool:
            if self.expectation(metric, t) > target:
                return False
            if self.method == "eigen":
                return all(self.expectation(metric, t + o) <= target for o in offsets[1:])
            A, s, C = self._doubling(t)  # t + 2^j from the doubling table: O(r^3) per offset
            m = self._mean(t, A, s)
            minf = self._limit_cache.get("minf")
            for j in range(len(offsets) - 1):
                while len(self._table) <= j:
                    self._doubling(2 ** len(self._table))
                P, sp, Cp = self._table[j]
                mj = P @ (m - minf) + minf if minf is not None else P @ m + sp
                if self._from_reduced(metric, mj, P @ C @ P.T + Cp) > target:
                    return False
            return True

        if stays(0):
            return 0
        hi = 1
        while not stays(hi):
            hi *= 2
            if hi > t_max:
                return None
        lo = hi // 2  # stays(lo) is False (or lo = 0, checked above)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if stays(mid):
                hi = mid
            else:
                lo = mid
        return hi


def _metrics(rnd: Any) -> dict[str, _Metric]:
    c, a, A = rnd.psi_quadratic
    p = a.shape[0]
    x0, Px = rnd.readouts["x"]
    xs = rnd.x_star
    # centred at x*: psi(x) - psi* = (psi(x*) - psi*) + (a + A x*)^T (x - x*) + (x - x*)^T A (x - x*) / 2, so that a small
    # gap is not the difference of two large numbers
    out = {
        "psi_gap": _Metric(float(c + a @ xs + 0.5 * xs @ A @ xs - rnd.psi_star), a + A @ xs, A, x0 - xs, Px),
        "dist_sq": _Metric(0.0, np.zeros(p), 2.0 * np.eye(p), x0 - xs, Px),
    }
    for key, name in (("nor", "normal_map_sq"), ("nat", "natural_residual_sq")):
        if key in rnd.readouts:
            y0, R = rnd.readouts[key]
            out[name] = _Metric(0.0, np.zeros(R.shape[0]), 2.0 * np.eye(R.shape[0]), y0, R)
    return out


def closed_form(rnd: Any, *, method: str = "auto") -> ClosedForm:
    """The closed form of an :class:`fedbounds.algorithms.exact.AffineRound` (or anything with its fields).

    ``method``: "eigen", "doubling" or "auto" (eigen when the restricted map's eigenbasis has condition number
    <= :data:`EIG_COND_MAX` and its values agree with doubling at three rounds, else doubling)."""
    if method not in ("auto", "eigen", "doubling"):
        raise ValueError(f"method must be 'auto', 'eigen' or 'doubling', got {method!r}")
    M, b, Sigma, s0 = (np.asarray(v, dtype=float) for v in (rnd.M, rnd.b, rnd.Sigma, rnd.s0))
    U, leak = decaying_basis(M, s0, b, Sigma)
    Mr, br, Sr, s0r = U.T @ M @ U, U.T @ b, U.T @ Sigma @ U, U.T @ s0
    r = U.shape[1]
    lam, W = np.linalg.eig(Mr) if r else (np.zeros(0), np.zeros((0, 0)))
    rad = float(np.max(np.abs(lam), initial=0.0))
    cond = float(np.linalg.cond(W)) if r else 1.0
    use = method if method != "auto" else ("eigen" if np.isfinite(cond) and cond <= EIG_COND_MAX else "doubling")
    cf = ClosedForm(algorithm=str(rnd.algorithm), params=dict(rnd.params), U=U, M=Mr, b=br, Sigma=0.5 * (Sr + Sr.T), s0=s0r,
                    metrics=_metrics(rnd), method=use, spectral_radius=rad, eig_cond=cond, full=(M, b, Sigma), leak=leak)
    if use == "eigen":
        Wi = np.linalg.inv(W)
        cf._eig = {"lam": lam, "W": W, "m0": Wi @ s0r, "b": Wi @ br, "S": Wi @ cf.Sigma @ Wi.T, "R": {}, "B": {}}
        for name, q in cf.metrics.items():
            Rt = q.R @ U @ W
            cf._eig["R"][name] = Rt
            cf._eig["B"][name] = Rt.T @ q.A @ Rt
    if rad < 1.0 - RADIUS_TOL:
        minf = cf._limit_reduced()[0]
        cf._limit_cache["minf"] = minf
        if use == "eigen":
            cf._eig["dm"] = Wi @ (s0r - minf)
            cf._eig["yinf"] = {name: q.R @ U @ minf for name, q in cf.metrics.items()}
    if use == "eigen":
        if method == "auto" and not _agrees(cf):
            cf.method, cf._eig = "doubling", {}
    return cf


def _agrees(cf: ClosedForm, rtol: float = AUTO_RTOL) -> bool:
    """Whether the eigen evaluator matches doubling (relative ``rtol``) on the first metric at t = 1, 37, 4096: near
    repeated eigenvalues can cost the eigenbasis accuracy that its condition number alone does not show."""
    name = next(iter(cf.metrics))
    for t in (1, 37, 4096):
        e = cf.expectation(name, t)
        cf.method = "doubling"
        d = cf.expectation(name, t)
        cf.method = "eigen"
        if not abs(e - d) <= rtol * max(abs(d), 1e-300):
            return False
    return True
