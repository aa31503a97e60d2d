"""Shared pieces of the DS FedProxGrad checks (arXiv 2512.08671): instances, a run recorder that measures
the quantities of Lemmas 5.1 and 5.2 round by round, and the constants measured on the trajectory.

Constants "measured on the instance": L_F, L_f, B, lambda come from the instance; G and G_r are measured
along the trajectory (the proofs use (8) and A3 only at the iterates): G^2 = max(instance estimate,
max over iterates of (1/N) sum ||grad f_i||^2 - B^2 ||grad f||^2), G_r = max over iterates of ||grad r||.
sigma^2 is the estimator's (Gaussian: exact); gamma_r is the solver's (inject: exact; otherwise the measured
empirical inexactness gamma_emp, the smallest gamma_r for which (10) holds that round).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy as sp
from fedbounds.checks.core.cache import cached
from fedbounds.checks.core.formulas import evaluate
from fedbounds.theory.core import symbols as S
from fedbounds.theory.ds_fedproxgrad import formulas as dc

__all__ = ["DSRecord", "ds_record", "fairness_instance", "measured_constants", "scaled_clients_instance"]


def fairness_instance(seed: int = 0, *, lam: float = 1.0, B2: float = 1.0):
    """The fairness instance (notes section 3), small enough for the quick profile: N = 4 clients, p = 5."""
    from fedbounds.algorithms.instances.fairness import fairness

    prob = fairness(n=4, p=5, m=20, lam=lam, B2=B2, seed=seed)
    prob.name = f"fairness(N=4,p=5,lam={lam},seed={seed})"
    return prob


def scaled_clients_instance(seed: int = 0, scales: tuple[float, ...] = (0.1, 0.1, 0.1, 3.7)):
    """A smooth instance with f_i = s_i f_0 (a quadratic f_0, mean s_i = 1): grad f_i = s_i grad f, so (8) holds
    with G = 0 and B^2 = mean(s_i^2) exactly; large B makes gamma_r <= 1/(sqrt(10) B) (absorption) strict.
    lambda = 0, so F = f (a plain smooth Problem)."""
    from fedbounds.algorithms.instances.least_squares import LeastSquares

    rng = np.random.default_rng([seed, 104729])
    p, m = 5, 50
    A0 = rng.standard_normal((m, p))
    x_star = rng.standard_normal(p)
    s = np.asarray(scales, dtype=float)
    A = np.sqrt(s)[:, None, None] * A0[None]
    b = np.einsum("ikp,p->ik", A, x_star)
    prob = LeastSquares(A, b)
    prob.name = f"scaled clients (s={list(scales)}, seed={seed})"
    prob.B_exact = float(np.sqrt(np.mean(s**2)))  # (8) with G = 0
    return prob


@dataclass
class DSRecord:
    """Per-round measurements of a DS FedProxGrad run (R replicas, T rounds).

    ``F``, ``g2`` (||grad F||^2), ``gradf2`` (||grad f||^2), ``G2_at`` ((1/N) sum ||grad f_i||^2 - B^2
    ||grad f||^2), ``gr`` (||grad r||): shape (T + 1, R) at x^0..x^T. ``eta`` (T,), ``gamma_emp`` (T, R),
    ``ef2`` (T, R) = ||e_f^r||^2 with e_f^r = (1/N) sum_i ((y_i - x^r)/eta_r + grad f_i(x^r)) (eq. (6)).
    ``cv`` (T, R) = eta_r <grad F(u_r), e_r^stoch> with u_r = x^{r+1} - eta_r e_r^stoch (the noise-free update):
    since e_r^stoch has conditional mean 0 given u_r (A2 (9)), E[cv] = 0 exactly, so subtracting it from a
    per-round difference is an unbiased control variate that removes the first-order noise.
    """

    F: np.ndarray
    g2: np.ndarray
    gradf2: np.ndarray
    G2_at: np.ndarray
    gr: np.ndarray
    eta: np.ndarray
    gamma_emp: np.ndarray
    ef2: np.ndarray
    cv: np.ndarray
    diverged: str | None = None
    info: dict = field(default_factory=dict)

    @property
    def rounds(self) -> int:
        return int(self.eta.shape[0])


def _sq(v: np.ndarray) -> np.ndarray:
    return np.einsum("...p,...p->...", v, v)


def _measure(problem, x: np.ndarray, B: float) -> tuple[np.ndarray, ...]:
    X = np.broadcast_to(x[:, None, :], (x.shape[0], problem.n, problem.p))
    gi = problem.grad(X)
    gf = gi.mean(axis=1)
    lam = float(getattr(problem, "lam", 0.0))
    gr = problem.grad_r(x) if hasattr(problem, "grad_r") else np.zeros_like(x)
    gF = gf + lam * gr
    Fx = problem.F(x) if hasattr(problem, "F") else problem.f(x)
    G2_at = _sq(gi).mean(axis=1) - B**2 * _sq(gf)
    return Fx, _sq(gF), _sq(gf), G2_at, np.sqrt(_sq(gr)), gi


def ds_record(problem, params: dict, *, rounds: int, replicas: int, seed: int, B: float, algorithm: str = "ds_fedproxgrad") -> DSRecord:
    """Run DS FedProxGrad (``fedbounds.algorithms.run.run``) and record the Lemma 5.1 / 5.2 quantities every round (cached)."""
    key = ("ds", algorithm, problem.name, repr(sorted(params.items())), rounds, replicas, seed, B)

    def make() -> DSRecord:
        from fedbounds.algorithms.run import run

        x0 = np.zeros((replicas, problem.p))
        if params.get("x0") is not None:
            x0 = np.broadcast_to(np.asarray(params["x0"], float), (replicas, problem.p)).copy()
        cols: dict[str, list] = {k: [] for k in ("F", "g2", "gradf2", "G2_at", "gr", "eta", "gamma_emp", "ef2", "cv")}
        prev = {"x": x0, "gi": None}

        def push(x: np.ndarray) -> np.ndarray:
            Fx, g2, gf2, G2, gr, gi = _measure(problem, x, B)
            for k, v in zip(("F", "g2", "gradf2", "G2_at", "gr"), (Fx, g2, gf2, G2, gr)):
                cols[k].append(v)
            return gi

        prev["gi"] = push(x0)

        def callback(t: int, state) -> None:
            eta = float(state.eta)
            e = ((state.y - prev["x"][:, None, :]) / eta + prev["gi"]).mean(axis=1)
            cols["eta"].append(eta)
            cols["gamma_emp"].append(np.asarray(state.gamma_emp, dtype=float))
            cols["ef2"].append(_sq(e))
            u = state.x - eta * state.e_stoch
            gFu = problem.grad_F(u) if hasattr(problem, "grad_F") else problem.grad_f(u)
            cols["cv"].append(eta * np.einsum("rp,rp->r", gFu, state.e_stoch))
            prev["x"] = state.x.copy()
            prev["gi"] = push(state.x)

        traj = run(algorithm, problem, params, rounds=rounds, replicas=replicas, seed=seed, metrics=("eta",), callback=callback)
        done = len(cols["eta"])
        arr = {k: np.asarray(v, dtype=float) for k, v in cols.items()}
        for k in ("F", "g2", "gradf2", "G2_at", "gr"):
            arr[k] = arr[k][: done + 1]
        div = None
        if traj.divergence is not None:
            d = traj.divergence
            div = f"round {d.round} (replica {d.replica}): {d.reason}"
        return DSRecord(arr["F"], arr["g2"], arr["gradf2"], arr["G2_at"], arr["gr"], arr["eta"].reshape(done),
                        arr["gamma_emp"].reshape(done, replicas), arr["ef2"].reshape(done, replicas),
                        arr["cv"].reshape(done, replicas), div)

    return cached(key, make)  # type: ignore[return-value]


def measured_constants(problem, rec: DSRecord, *, sigma2: float) -> dict[sp.Symbol, float]:
    """Theory symbol values for the DS formulas, measured on ``problem`` and the trajectory ``rec``."""
    c = problem.constants
    if "B" in c:
        B = float(c["B"].value)
        G2_inst = float(c["G"].value) ** 2
    else:
        B = float(problem.B_exact)
        G2_inst = 0.0
    G2 = max(G2_inst, float(np.max(rec.G2_at)), 0.0)
    L_F = float(c["L_F"].value) if "L_F" in c else float(c["L"].value)
    L_f = float(c["L_f"].value) if "L_f" in c else float(c["L"].value)
    lam = float(c["lam"].value) if "lam" in c else 0.0
    G_r = float(np.max(rec.gr)) if lam > 0 else 0.0
    return {S.B: B, S.G: float(np.sqrt(G2)), S.G_r: G_r, S.lam: lam, S.L_F: L_F, S.L_f: L_f, S.sigma2: float(sigma2)}


def xi_per_round(vals: dict, eta: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """Xi_r (eq. (22), fedbounds.theory.ds_fedproxgrad.formulas.Xi) for each round's eta_r and gamma_r."""
    return np.array([evaluate(dc.Xi, {**vals, S.eta: float(e), S.gamma_r: float(g)}) for e, g in zip(eta, gamma)])


def r0_of(vals: dict, gamma: np.ndarray) -> int:
    """r_0: the first round from which gamma_s <= 1/(sqrt(10) B) (theory: absorption_gamma_max) for every later s."""
    thr = evaluate(dc.absorption_gamma_max, vals)
    bad = np.flatnonzero(np.asarray(gamma) > thr)
    return int(bad[-1] + 1) if bad.size else 0
