"""Shared pieces of the FedNMap checks: the instances, Theorem 5's parameters (from the theory layer's
expressions), the oracle, cached runs and the round checkpoints.

Instances (all heterogeneous least squares, seeded, with L, mu exact from eigenvalues):

* ``lasso``: phi = w ||x||_1 (rho = 0), the PL example of the paper (Assumption 4, "Typical examples include
  Lasso regression"); not linear-Gaussian, so Monte Carlo;
* ``mcp``: phi = MCP (rho = 1/theta > 0), weakly convex; f is mu-strongly convex with mu > rho, so psi is
  (mu - rho)-strongly convex and satisfies the proximal-PL inequality (2) with constant mu - rho;
* ``ridge``: phi = w/2 ||x||^2, linear-Gaussian, so expectations are exact (``fedbounds.algorithms.exact``).

Clients have well-conditioned features (rows N(0, I)) and their own target models (heterogeneity), so
zeta^2 > 0 while L / mu stays small: the paper's 1/100 factors make steps tiny, and a small condition
number keeps the number of rounds affordable.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp
from fedbounds.checks.runtime.cache import cached
from fedbounds.checks.verdicts.formulas import evaluate
from fedbounds.theory.core import symbols as S
from fedbounds.theory.fednmap import formulas as fc

__all__ = [
    "C_C",
    "FedNMapSetup",
    "Start",
    "cached",
    "checkpoints",
    "correction_error",
    "fixed_point_corrections",
    "gaussian_oracle",
    "initial_lyapunov",
    "make_instance",
    "pl_constant",
    "start_point",
    "theorem5_parameters",
    "theorem8_start",
]


def gaussian_oracle(sigma2: float):
    """The additive Gaussian oracle of Assumption 1 (E||g - grad f_i||^2 = sigma2 exactly)."""
    from fedbounds.algorithms.oracles import GaussianOracle

    return GaussianOracle(sigma2=float(sigma2))


def make_instance(kind: str, *, n: int = 4, p: int = 5, m: int = 200, heterogeneity: float = 0.5, hessian_het: float = 0.0,
                  seed: int = 0):
    """A seeded heterogeneous least-squares instance with phi given by ``kind`` (lasso | mcp | ridge | smooth).

    f_i(x) = (1/(2m)) ||A_i x - b_i||^2 with A_i rows ~ N(0, s_i I_p) (so H_i ~ s_i I and L/mu ~ 1.5 when all
    s_i = 1) and b_i = A_i (x_true + heterogeneity * v_i) + noise, so client minimisers differ (zeta^2 > 0).
    ``hessian_het`` spreads the curvatures s_i linearly over [1 - h, 1 + h] (mean 1): with equal Hessians
    the client drift of uncorrected local steps cancels to first order, with unequal ones it does not.
    """
    from fedbounds.algorithms.instances.least_squares import LeastSquares
    from fedbounds.algorithms.regularizers import L1, MCP, SquaredL2, Zero

    rng = np.random.default_rng([seed, 7919])
    A = rng.standard_normal((n, m, p)) * np.sqrt(1.0 + hessian_het * np.linspace(-1.0, 1.0, n))[:, None, None]
    x_true = rng.standard_normal(p) * (rng.random(p) < 0.6)
    models = x_true + heterogeneity * rng.standard_normal((n, p))
    b = np.einsum("ikp,ip->ik", A, models) + 0.1 * rng.standard_normal((n, m))
    phis = {
        "lasso": lambda: L1(0.1),
        "mcp": lambda: MCP(lam=0.1, theta=4.0),
        "ridge": lambda: SquaredL2(0.1),
        "smooth": lambda: Zero(),
    }
    if kind not in phis:
        raise ValueError(f"instance kind must be one of {sorted(phis)}, got {kind!r}")
    prob = LeastSquares(A, b, phis[kind]())
    prob.name = f"{kind}(n={n},p={p},m={m},het={heterogeneity},hhet={hessian_het},seed={seed})"
    return prob


def pl_constant(problem) -> float:
    """The proximal-PL constant mu of psi (Assumption 4) for a least-squares instance: psi is
    (mu_f - rho + w)-strongly convex (mu_f = strong convexity of f, w the weight of a ridge phi = w/2 ||x||^2,
    else 0), and a strongly convex function satisfies (2) with its modulus (the largest constant known, so the
    bound is as tight as the instance allows). ValueError when that modulus is <= 0 (no PL constant known)."""
    c = problem.constants
    mu_f, rho = c["mu"].value, c["rho"].value
    w = float(problem.phi.weight) if getattr(problem.phi, "name", "") == "squared_l2" else 0.0
    if mu_f + w <= rho:
        raise ValueError(f"instance {problem.name}: mu_f = {mu_f:g} <= rho = {rho:g}, no PL constant")
    return mu_f - rho + w


@dataclass(frozen=True)
class FedNMapSetup:
    """Parameters of a FedNMap run and the constants they were derived from."""

    gamma: float
    eta_hat: float
    eta_a: float
    eta_s: float
    Q: int
    m: int
    L: float
    rho: float
    eta_hat_max: float
    eta_a_max: float
    gamma_max: float

    def params(self, **extra: object) -> dict:
        return {"gamma": self.gamma, "eta_a": self.eta_a, "eta_s": self.eta_s, "Q": self.Q, **extra}

    def values(self) -> dict[sp.Symbol, float]:
        """Numeric values of the theory symbols for this setup."""
        return {S.gamma: self.gamma, S.eta_hat: self.eta_hat, S.eta_a: self.eta_a, S.eta_s: self.eta_s, S.Q: self.Q, S.m: self.m,
                S.L: self.L, S.rho: self.rho}


_ETA_S = sp.solve(sp.Eq(fc.eta_hat_definition, S.eta_hat), S.eta_s)[0]


def theorem5_parameters(L: float, rho: float, *, Q: int, m: int = 1, frac: float = 1.0, gamma_frac: float = 1.0,
                        eta_a_frac: float | None = None) -> FedNMapSetup:
    """Step sizes at ``frac`` times the largest that Theorem 5's conditions allow (fedbounds.theory.fednmap.formulas:
    gamma <= 1/(5(rho+L)), eta_hat <= (1-gamma rho)/(100 m sqrt(L^2+1/gamma^2)), eta_a <= (1-gamma rho)/(100 Q
    sqrt(m(L^2+1/gamma^2)))); eta_s from eta_hat = eta_s eta_a Q (reconstruction section 2.4). ``frac`` > 1
    gives steps past the conditions (negative controls, tightness search)."""
    vals: dict[sp.Symbol, float] = {S.L: L, S.rho: rho, S.Q: Q, S.m: m}
    gamma_max = evaluate(fc.theorem5_conditions[S.gamma], vals)
    gamma = gamma_frac * gamma_max
    vals[S.gamma] = gamma
    eta_hat_max = evaluate(fc.theorem5_conditions[S.eta_hat], vals)
    eta_a_max = evaluate(fc.theorem5_conditions[S.eta_a], vals)
    eta_hat = frac * eta_hat_max
    eta_a = (frac if eta_a_frac is None else eta_a_frac) * eta_a_max
    eta_s = evaluate(_ETA_S, {S.eta_hat: eta_hat, S.eta_a: eta_a, S.Q: Q})
    return FedNMapSetup(gamma, eta_hat, eta_a, eta_s, Q, m, L, rho, eta_hat_max, eta_a_max, gamma_max)


def checkpoints(T: int, k: int = 40) -> np.ndarray:
    """About ``k`` rounds in [0, T], log-spaced (0 and T included): where a bound is compared."""
    pts = np.unique(np.concatenate([[0], np.round(np.geomspace(1, max(T, 1), k)).astype(int), [T]]))
    return pts[pts <= T]




# ---------------------------------------------------------------------------------------------- runs


#: the correction weight C_c of the reconstructed Lyapunov function in Theorem 8's E[L_0] (fednmap.pep.lyapunov_constants
#: recovers C_c = 1; C_0 = 0 throughout Theorem 8's checks)
C_C = 1.0


def fixed_point_corrections(problem, x: np.ndarray) -> np.ndarray:
    """c_i = grad f(x) - grad f_i(x), shape (n, p): at x = x*, z = z* the corrections of Algorithm 1's fixed point
    (with exact gradients every local step is then zero, so (z*, c*) maps to itself)."""
    G = np.asarray(problem.grad(np.broadcast_to(np.asarray(x, dtype=float), (problem.n, problem.p))), dtype=float)
    return G.mean(axis=0) - G


def correction_error(problem, x: np.ndarray, c: np.ndarray | None = None) -> float:
    """(1/n) sum_i ||c_i + grad f_i(x) - grad f(x)||^2 (reconstruction §4, the correction term of L); with c = 0
    (Algorithm 1's c_{i,0}) it is the correction heterogeneity (1/n) sum_i ||grad f_i(x) - grad f(x)||^2."""
    G = np.asarray(problem.grad(np.broadcast_to(np.asarray(x, dtype=float), (problem.n, problem.p))), dtype=float)
    d = G - G.mean(axis=0) + (0.0 if c is None else np.asarray(c, dtype=float))
    return float(np.mean(np.sum(d**2, axis=1)))


@dataclass(frozen=True)
class Start:
    """A start of Algorithm 1 and Theorem 8's E[L_0] there (C_0 = 0): the psi gap plus C_c times the correction
    error. ``c0`` None means Algorithm 1's own c_{i,0} = 0."""

    z0: np.ndarray
    c0: np.ndarray | None
    EL0: float
    psi_gap: float
    corr_err: float

    def params(self) -> dict:
        """The start as algorithm parameters (z0, and c0 when not Algorithm 1's zeros)."""
        return {"z0": self.z0} if self.c0 is None else {"z0": self.z0, "c0": self.c0}


def initial_lyapunov(problem, z0: np.ndarray, gamma: float, c0: np.ndarray | None = None, C_c: float = C_C) -> Start:
    """Theorem 8's E[L_0] from (z_0, c_0) (deterministic start), through the theory layer's L with C_0 = 0:
    psi(x_0) - psi* + C_c (1/n) sum_i ||c_{i,0} + grad f_i(x_0) - grad f(x_0)||^2, x_0 = prox(z_0). The ONE place
    the FedNMap checks (verdicts, worst-case search, step-size tightness) take E[L_0] from."""
    z0 = np.asarray(z0, dtype=float)
    x0 = problem.phi.prox(z0, gamma)
    gap = max(float(problem.psi(x0) - problem.solution().psi_star), 0.0)
    err = correction_error(problem, x0, c0)
    EL0 = evaluate(fc.lyapunov, {S.gamma: gamma, S.C_0: 0.0, S.C_c: C_c, S.psi_gap: gap, S.Fnor2: 0.0, S.corr_err: err})
    return Start(z0, c0, EL0, gap, err)


def theorem8_start(problem, gamma: float, offset: float, seed: int) -> Start:
    """z_0 = z* + offset * u (u a seeded unit vector, z* = x* - gamma grad f(x*) the normal-map zero). Away from
    z* (offset > 0) the corrections start at Algorithm 1's c_{i,0} = 0, so E[L_0] carries the correction
    heterogeneity; at z* (offset = 0) they start at the fixed point's c* (:func:`fixed_point_corrections`), the
    only start at x* with E[L_0] = 0 (with c_{i,0} = 0 there, psi(x_1) - psi* > 0 = the psi gap at x*: the former
    "strictest form" artefact, ``fednmap.strict_form``)."""
    sol = problem.solution()
    z_star = sol.x_star - gamma * problem.grad_f(sol.x_star)
    if offset == 0.0:
        return initial_lyapunov(problem, z_star, gamma, fixed_point_corrections(problem, sol.x_star))
    u = np.random.default_rng([seed, 31]).standard_normal(problem.p)
    return initial_lyapunov(problem, z_star + offset * u / np.linalg.norm(u), gamma)


def start_point(problem, gamma: float, offset: float, seed: int) -> tuple[np.ndarray, float]:
    """z_0 as in :func:`theorem8_start` and E[L_0] with Algorithm 1's c_{i,0} = 0 (also at offset 0: a caller that
    passes only z0 to the algorithm starts from zero corrections, so E[L_0] carries the heterogeneity there)."""
    st = theorem8_start(problem, gamma, offset, seed)
    if st.c0 is not None:
        st = initial_lyapunov(problem, st.z0, gamma)
    return st.z0, st.EL0


def _key(params: dict) -> tuple:
    return tuple(sorted((k, str(v)) for k, v in params.items()))


def fednmap_run(problem, params: dict, *, rounds: int, replicas: int, seed: int, sigma2: float, metrics: tuple[str, ...]):
    """A cached Monte Carlo FedNMap run (``fedbounds.algorithms.run.run``); returns the Trajectory."""
    from fedbounds.algorithms.run import run

    key = ("fednmap", problem.name, _key(params), rounds, replicas, seed, sigma2, metrics)
    return cached(key, lambda: run("fednmap", problem, params, rounds=rounds, replicas=replicas, seed=seed,
                                   oracle=gaussian_oracle(sigma2), metrics=metrics))


def exact_run(problem, params: dict, *, rounds: int, sigma2: float):
    """Exact moments of a FedNMap run on a linear-Gaussian instance (``fedbounds.algorithms.exact``), cached."""
    from fedbounds.algorithms.exact import run_exact

    key = ("exact", problem.name, _key(params), rounds, sigma2)
    return cached(key, lambda: run_exact("fednmap", problem, params, rounds=rounds, oracle=gaussian_oracle(sigma2)))


def exact_gap(problem, params: dict, *, rounds: int, sigma2: float) -> np.ndarray:
    """E[psi(x_t)] - psi* for t = 0..rounds, exactly (linear-Gaussian instance)."""
    return np.asarray(exact_run(problem, params, rounds=rounds, sigma2=sigma2).E_psi_gap, dtype=float)


def theorem8_values(problem, setup: FedNMapSetup, *, sigma2: float, EL0: float, C0: float = 0.0) -> dict:
    """Theory symbol values of Theorem 8 on this instance (mu = the PL constant of psi)."""
    return {**setup.values(), S.mu: pl_constant(problem), S.sigma2: sigma2, S.n: problem.n, S.C_0: C0, S.EL_0: EL0}


def theorem8_curve(values: dict, ts: np.ndarray, *, scale: float = 1.0) -> np.ndarray:
    """Theorem 8's bound at each horizon T in ``ts`` (times ``scale``: a calibrated negative control)."""
    return np.array([scale * evaluate(fc.theorem8_bound, {**values, S.T: int(t)}) for t in ts])


def kappa_of(values: dict) -> float:
    """Theorem 8's rate exponent per round, kappa = 2 eta_hat mu/(9 (1 + gamma mu C_0))."""
    return evaluate(fc.theorem8_rate_exponent, values)


def informative_from(values: dict) -> int:
    """The first round at which Theorem 8 says more than "the gap does not grow": kappa t >= 1, where the
    transient bound exp(-kappa t) E[L_0] has decayed by at least a factor e (before it, the bound is within a
    factor e of E[L_0] + floor and any non-increasing run meets it)."""
    return max(1, int(np.ceil(1.0 / kappa_of(values))))


def informative_checkpoints(t0: int, T: int, k: int = 30) -> np.ndarray:
    """About ``k`` log-spaced rounds in [t0, T] (both included): where a claim informative from t0 is compared."""
    if T < t0:
        raise ValueError(f"horizon T = {T} is before the first informative round {t0}")
    return np.unique(np.concatenate([np.round(np.geomspace(t0, T, k)).astype(int), [t0, T]]))
