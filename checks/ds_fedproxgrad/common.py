"""Shared pieces of the DS FedProxGrad checks (arXiv 2512.08671): instances, a run recorder that measures
the quantities of Lemmas 5.1 and 5.2 round by round, and the constants measured on the trajectory.

Constants "measured on the instance": L_F, L_f, B, lambda come from the instance; G and G_r are measured
along the trajectory (the proofs use (8) and A3 only at the iterates): G^2 = max(instance estimate,
max over iterates of (1/N) sum ||grad f_i||^2 - B^2 ||grad f||^2), G_r = max over iterates of ||grad r||.
sigma^2 is the estimator's (Gaussian: exact); gamma_r is the solver's (inject: exact; otherwise the measured
empirical inexactness gamma_emp, the smallest gamma_r for which (10) holds that round).

Worst cases (design.md, principle 4; issue "Verdicts that can fail"): :data:`INSTANCE_DIMS` are the fairness
instance's knobs that the hypotheses leave free (lambda, heterogeneity B^2 of (8), the clients' data
heterogeneity, the conditioning through the nonconvex penalty's weight, dimension p, clients N, the start
point's radius); :class:`Measured` is one experiment of a quantitative claim (observations against the bound at
K points); :func:`worst_and_calibrated` searches a claim's experiment for the largest observed / bound and
re-runs the worst case with fresh noise against the bound scaled by half that ratio (the calibrated control).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy as sp
from fedbounds.checks.runtime.cache import cached
from fedbounds.checks.verdicts.adversarial import Dimension, WorstCase, calibrated_scale, search_worst
from fedbounds.checks.verdicts.controls import control
from fedbounds.checks.verdicts.formulas import evaluate, function_of
from fedbounds.checks.verdicts.verdict import Verdict, compare
from fedbounds.theory.core import symbols as S
from fedbounds.theory.ds_fedproxgrad import formulas as dc

__all__ = [
    "DEFAULT_INSTANCE",
    "FRESH_SEED",
    "INSTANCE_DIMS",
    "DSRecord",
    "Measured",
    "ds_record",
    "eta_max",
    "evaluate_array",
    "fairness_instance",
    "instance_at",
    "instance_pool",
    "knobs_of",
    "measured_constants",
    "scaled_clients_instance",
    "searched",
    "worst_and_calibrated",
    "x0_at",
]

#: offset added to the check's seed for the calibrated control's fresh Monte Carlo noise
FRESH_SEED = 7919


def fairness_instance(seed: int = 0, *, lam: float = 1.0, B2: float = 1.0, n: int = 4, p: int = 5, het: float = 1.0,
                      alpha_pen: float = 0.1):
    """The fairness instance (notes section 3), small enough for the quick profile: by default N = 4 clients,
    p = 5; ``het`` sets alpha_het = beta_het (the clients' data heterogeneity), ``alpha_pen`` the nonconvex
    penalty's weight (the conditioning: L_f = (1/4) max_i lambda_max + 2 alpha_pen)."""
    from fedbounds.algorithms.instances.fairness import fairness

    prob = fairness(n=n, p=p, m=20, lam=lam, B2=B2, alpha_het=het, beta_het=het, alpha_pen=alpha_pen,
                    shifted_features=min(5, p), seed=seed)
    extra = "" if (B2, het, alpha_pen) == (1.0, 1.0, 0.1) else f",B2={B2:.6g},het={het:.6g},pen={alpha_pen:.6g}"
    prob.name = f"fairness(N={n},p={p},lam={lam:.6g}{extra},seed={seed})"
    return prob


def eta_max(problem) -> float:
    """1/(6 L_F) (A4(iv), fedbounds.theory.ds_fedproxgrad.formulas.eta_max_smooth)."""
    c = problem.constants
    return evaluate(dc.eta_max_smooth, {S.L_F: float((c["L_F"] if "L_F" in c else c["L"]).value)})


#: the fairness instance's free knobs (what the hypotheses allow) and their ranges
INSTANCE_KNOBS: tuple[Dimension, ...] = (
    Dimension("lam", 0.1, 10.0, log=True),
    Dimension("B2", 1.0, 4.0, log=True),
    Dimension("het", 0.1, 4.0, log=True),
    Dimension("alpha_pen", 0.01, 1.0, log=True),
    Dimension("p", 3, 10, integer=True),
    Dimension("n", 2, 8, integer=True),
)
#: the checks' default instance (``fairness_instance(seed)``) as a point of those knobs
DEFAULT_KNOBS: dict[str, Any] = {"lam": 1.0, "B2": 1.0, "het": 1.0, "alpha_pen": 0.1, "p": 5, "n": 4}
#: size of the instance pool the searches draw from (entry 0: the default instance)
POOL_SIZE = 12


def instance_pool(size: int = POOL_SIZE) -> tuple[dict[str, Any], ...]:
    """The searched instances: the default, then ``size - 1`` knob settings on a seeded Latin hypercube over
    :data:`INSTANCE_KNOBS` (each knob's range cut in ``size - 1`` strata, one point per stratum, strata paired at
    random). A pool, not a continuum, because building an instance (its stationary point and G) costs more than
    a run; every claim's search shares the same instances, built once per process."""
    rng = np.random.default_rng(20251208)
    k = size - 1
    cols = {d.name: [d.value((i + rng.random()) / k) for i in rng.permutation(k)] for d in INSTANCE_KNOBS}
    return (dict(DEFAULT_KNOBS), *({name: cols[name][j] for name in cols} for j in range(k)))


#: the instance and start point axes of every DS search: the pool entry and the start's radius
INSTANCE_DIMS: tuple[Dimension, ...] = (Dimension("instance", choices=tuple(range(POOL_SIZE))), Dimension("x0", 0.0, 3.0))
#: the default instance, started at x^0 = 0, as a point of :data:`INSTANCE_DIMS`
DEFAULT_INSTANCE: dict[str, Any] = {"instance": 0, "x0": 0.0}


@functools.lru_cache(maxsize=64)
def _pooled(index: int, seed: int):
    q = instance_pool()[index]
    return fairness_instance(seed, lam=float(q["lam"]), B2=float(q["B2"]), n=int(q["n"]), p=int(q["p"]), het=float(q["het"]),
                             alpha_pen=float(q["alpha_pen"]))


def instance_at(point: Mapping[str, Any], seed: int):
    """The fairness instance of pool entry ``point["instance"]`` (default 0), built from ``seed`` (cached)."""
    return _pooled(int(point.get("instance", 0)), int(seed))


def knobs_of(point: Mapping[str, Any]) -> dict[str, Any]:
    """The instance knobs behind a search point (for the report)."""
    return dict(instance_pool()[int(point.get("instance", 0))])


def x0_at(point: Mapping[str, Any], problem, seed: int) -> list[float] | None:
    """The start x^0: radius ``point["x0"]`` along a seeded unit direction (``None``: the origin)."""
    radius = float(point.get("x0", 0.0))
    if radius == 0.0:
        return None
    u = np.random.default_rng([seed, 31337, problem.p]).standard_normal(problem.p)
    return (radius * u / np.linalg.norm(u)).tolist()


@dataclass
class Measured:
    """One experiment of a quantitative claim: ``values`` (exact: (K,); Monte Carlo: (replicas, K)) against
    ``bound`` (K,) at the K points labelled ``where`` (rounds or horizons)."""

    values: np.ndarray
    bound: np.ndarray
    exact: bool
    where: list
    instance: str
    details: dict = field(default_factory=dict)

    def means(self) -> np.ndarray:
        v = np.asarray(self.values, float)
        return v if self.exact else v.reshape(v.shape[0], -1).mean(axis=0)

    def ratio(self) -> float:
        """max over the points of observed (mean) / bound: the experiment's tightness."""
        return float(np.max(self.means() / self.bound))

    def argworst(self) -> int:
        return int(np.argmax(self.means() / self.bound))

    def verdict(self, claim: str, level: float, scale: float = 1.0, label: str | None = None) -> Verdict:
        """The claim's verdict with the bound times ``scale``."""
        return compare(claim, label or self.instance, self.values, self.bound * scale, exact=self.exact, level=level,
                       details={**self.details, "where": self.where})


def _located(v: Verdict, where: list) -> Any:
    i = int(v.details.get("worst_index", 0))
    return where[i] if 0 <= i < len(where) else None


def worst_and_calibrated(claim: str, measure: Callable[[Mapping[str, Any], int, int, int], Measured], space: Sequence[Dimension],
                         default: Mapping[str, Any], *, budget: int, replicas: int, search_replicas: int, seed: int,
                         level: float) -> tuple[WorstCase, Verdict, dict]:
    """Search ``measure(point, seed, replicas, noise_seed).ratio()`` over ``space`` (``default``, the check's own
    experiment, evaluated first), then the calibrated control: the worst point (same instance and start, built from
    ``seed``) re-run with fresh noise (noise seed + FRESH_SEED; a reproduction when the run is exact) against the
    bound times ``calibrated_scale(worst ratio)``. Returns the worst case, the control, and the ``tightness``
    record ``{"search": WorstCase.to_dict() + what was searched + what the calibrated bound does, at the worst case
    and on the default experiment}``."""
    worst = search_worst(lambda q: measure(q, seed, search_replicas, seed).ratio(), space, budget=budget, seed=seed,
                         starts=[default])
    scale = calibrated_scale(worst.ratio)
    fresh = measure(worst.point, seed, replicas, seed + FRESH_SEED)
    v = fresh.verdict(claim, level, scale, label=f"worst case, bound x {scale:.3g}")
    kind = "reproduction (exact run)" if fresh.exact else f"fresh Monte Carlo noise (seed {seed + FRESH_SEED}, {replicas} replicas)"
    ctrl = control(v.with_details(worst_point=dict(worst.point), worst_instance=knobs_of(worst.point)), changed="bound",
                   what=f"calibrated: bound x {scale:.3g} (worst ratio {worst.ratio:.3g} / 2) at the worst case, {kind}",
                   before=1.0, after=scale, violated_at=_located(v, fresh.where) if v.violated else None)
    base = measure(default, seed, replicas, seed)
    on_default = base.verdict(claim, level, scale)
    tight = {**worst.to_dict(), "instance_knobs": knobs_of(worst.point), "searched": searched(space),
             "search_replicas": search_replicas, "default_ratio": base.ratio(),
             "fresh_ratio": fresh.ratio(), "calibrated_scale": scale, "calibrated_at_worst": str(v.status),
             "calibrated_on_default": str(on_default.status), "calibrated_on_default_at": _located(on_default, base.where),
             "evaluation": kind}
    return worst, ctrl, {"search": tight}


def searched(space: Sequence[Dimension]) -> dict:
    """What a search covered: each dimension's range or choices, the instance pool's knob ranges (``tightness``)."""
    out = {d.name: (list(d.choices) if d.choices else [d.low, d.high]) for d in space}
    if "instance" in out:
        out["instance"] = {"pool": len(instance_pool()), "knobs": {d.name: [d.low, d.high] for d in INSTANCE_KNOBS}}
    return out


def evaluate_array(expr: sp.Expr, values: Mapping[sp.Symbol, Any]) -> np.ndarray:
    """``expr`` (a rational expression: no math functions) at array-valued ``values``, elementwise (the same
    lambdified formula :func:`fedbounds.checks.verdicts.formulas.evaluate` uses, fed numpy arrays)."""
    syms = tuple(sorted(sp.sympify(expr).free_symbols, key=lambda s: s.name))
    f = function_of(expr, syms)
    return np.asarray(f(*(np.asarray(values[s], dtype=float) for s in syms)), dtype=float)


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
    return evaluate_array(dc.Xi, {**vals, S.eta: np.asarray(eta, float), S.gamma_r: np.asarray(gamma, float)})


def r0_of(vals: dict, gamma: np.ndarray) -> int:
    """r_0: the first round from which gamma_s <= 1/(sqrt(10) B) (theory: absorption_gamma_max) for every later s."""
    thr = evaluate(dc.absorption_gamma_max, vals)
    bad = np.flatnonzero(np.asarray(gamma) > thr)
    return int(bad[-1] + 1) if bad.size else 0
