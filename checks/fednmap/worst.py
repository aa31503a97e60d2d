"""Worst cases of FedNMap's quantitative claims, searched over what their hypotheses allow (design.md,
principle 4), and the calibrated negative controls built from them (principle 3).

Each claim's search (:func:`fedbounds.checks.verdicts.adversarial.search_worst`, differential evolution on the unit
cube, seeded) maximises observed / bound over:

* the instance family (the linear-Gaussian ones, ``ridge`` and ``smooth``, so that every evaluation is an exact
  moment computation, ``fedbounds.algorithms.exact``: no Monte Carlo error inside the search) and its dimension
  (n clients, p coordinates);
* the conditioning (samples per client: fewer samples, larger L / mu; spread of the client curvatures),
  the heterogeneity of the client targets, sigma^2 and the start point (its distance from z*);
* the step sizes anywhere inside Theorem 5's conditions, as fractions of their maxima on a log scale (gamma,
  eta_hat, eta_a; eta_s = eta_hat/(eta_a Q) then follows), Q and the window m;
* the horizon, in units of the bound's own time constant 1/kappa (``tau`` = kappa T in [1, 4]: the rounds where
  Theorem 8 is informative, see :func:`fedbounds.checks.fednmap.common.informative_from`).

The l1 / MCP families are not linear-Gaussian; their verdicts are Monte Carlo on the default experiments and
the searched worst case covers them only through the shared constants (said in the report). The quantity
maximised is exactly what the check's verdict compares, at the rounds where the claim is informative:

* ``fednmap.theorem8``: max over informative rounds t (kappa t >= 1) of E[psi(x_t) - psi*] / bound(t);
* ``fednmap.theorem8.floor``: from x_0 = x*, max over rounds t >= 1 of E[psi(x_t) - psi*] / floor;
* ``fednmap.lyapunov``: max over the windows with E[L_t] > floor of the decrease the window claim promises,
  m kappa (E[L_t] - floor), over the decrease achieved, E[L_t] - E[L_{t+m}] (C_c = 0, C_0 in {0, 1}); > 1 is a
  violation; its calibrated control multiplies the rate exponent kappa by 2 / worst ratio;
* ``fednmap.nat_nor_relation``: max over 64 seeded points z of (1 - gamma rho)||F_nat(prox z)|| / (gamma ||F_nor(z)||),
  on the l1, MCP and ridge families (deterministic, pointwise).

A point is rebuilt from its ``instance`` dictionary and the search seed (report.json ``tightness.search``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from fedbounds.checks.fednmap.common import (
    FedNMapSetup,
    Start,
    exact_run,
    informative_checkpoints,
    informative_from,
    kappa_of,
    make_instance,
    theorem5_parameters,
    theorem8_curve,
    theorem8_start,
    theorem8_values,
)
from fedbounds.checks.registry import CheckContext
from fedbounds.checks.runtime.cache import cached
from fedbounds.checks.verdicts.adversarial import Dimension, WorstCase, calibrated_scale, search_worst
from fedbounds.checks.verdicts.controls import MACHINERY, control
from fedbounds.checks.verdicts.formulas import evaluate
from fedbounds.checks.verdicts.verdict import Verdict, compare
from fedbounds.theory.core import symbols as S
from fedbounds.theory.fednmap import formulas as fc

__all__ = ["EXPERIMENT_DIMENSIONS", "Experiment", "build", "calibrated_at_worst", "default_start", "objective", "search", "space",
           "tightness_record"]

#: the axes shared by the Theorem 8 family of claims (theorem8, floor, lyapunov)
EXPERIMENT_DIMENSIONS: tuple[Dimension, ...] = (
    Dimension("family", choices=("ridge", "smooth")),
    Dimension("n", 2, 4, integer=True),
    Dimension("p", 2, 5, integer=True),
    Dimension("samples", 12, 200, log=True, integer=True),
    Dimension("hessian_het", 0.0, 0.9),
    Dimension("heterogeneity", 0.01, 10.0, log=True),
    Dimension("sigma2", 1e-4, 10.0, log=True),
    Dimension("gamma_frac", 0.2, 1.0, log=True),
    Dimension("eta_hat_frac", 0.1, 1.0, log=True),
    Dimension("eta_a_frac", 0.01, 1.0, log=True),
    Dimension("Q", 1, 8, integer=True),
    Dimension("m", 1, 2, integer=True),
    Dimension("seed", 0, 99, integer=True),
)

#: the check's default experiment (the ridge instance of ``fednmap.theorem8``) as a search start
DEFAULT_POINT: dict[str, Any] = {"family": "ridge", "n": 4, "p": 5, "samples": 200, "hessian_het": 0.0, "heterogeneity": 0.5,
                                 "sigma2": 0.05, "gamma_frac": 1.0, "eta_hat_frac": 1.0, "eta_a_frac": 1.0, "Q": 2, "m": 1,
                                 "seed": 0, "offset": 1.0, "tau": 1.0, "C_0": 0.0}


def space(claim: str) -> list[Dimension]:
    """The search space of ``claim`` (see the module docstring)."""
    if claim == "fednmap.nat_nor_relation":
        return [Dimension("family", choices=("lasso", "mcp", "ridge")), Dimension("n", 2, 6, integer=True),
                Dimension("p", 2, 8, integer=True), Dimension("heterogeneity", 0.01, 10.0, log=True),
                Dimension("gamma_frac", 1e-3, 0.999, log=True), Dimension("z_scale", 1e-3, 1e2, log=True),
                Dimension("seed", 0, 99, integer=True)]
    dims = list(EXPERIMENT_DIMENSIONS)
    if claim in ("fednmap.theorem8", "fednmap.lyapunov"):
        dims += [Dimension("offset", 1e-3, 1e2, log=True), Dimension("tau", 1.0, 3.0, log=True)]
    if claim == "fednmap.lyapunov":
        dims.append(Dimension("C_0", choices=(0.0, 1.0)))
    return dims


@dataclass(frozen=True)
class Experiment:
    """One point of the space, built: the instance, Theorem 5's steps there, the start and the horizon."""

    problem: Any
    setup: FedNMapSetup
    start: Start
    EL0: float
    sigma2: float
    values: dict
    t0: int
    T: int

    @property
    def z0(self) -> np.ndarray:
        return self.start.z0

    def params(self) -> dict:
        return self.setup.params(**self.start.params())


def build(point: Mapping[str, Any], *, T_cap: int, start: bool = True, clamp: bool = False) -> Experiment:
    """The experiment at ``point`` (``start=False``: x_0 = x*, the floor's experiment). Its horizon is tau / kappa
    rounds; above ``T_cap`` it is cut to ``T_cap`` when ``clamp`` (claims informative at every round: the floor,
    the Lyapunov windows), else a ValueError (Theorem 8, informative only from round 1/kappa: outside the budget,
    the search counts the point as a failure)."""
    problem = make_instance(point["family"], n=int(point["n"]), p=int(point["p"]), m=int(point["samples"]),
                            heterogeneity=float(point["heterogeneity"]), hessian_het=float(point["hessian_het"]),
                            seed=int(point["seed"]))
    c = problem.constants
    setup = theorem5_parameters(c["L"].value, c["rho"].value, Q=int(point["Q"]), m=int(point["m"]),
                                frac=float(point["eta_hat_frac"]), gamma_frac=float(point["gamma_frac"]),
                                eta_a_frac=float(point["eta_a_frac"]))
    # E[L_0] from the same function as the verdicts' (common.initial_lyapunov, via theorem8_start): psi gap + C_c x
    # correction error, c_{i,0} = 0 away from x*, the fixed point (z*, c*) at x* (the floor's experiment)
    st = theorem8_start(problem, setup.gamma, float(point.get("offset", 1.0)) if start else 0.0, int(point["seed"]))
    EL0 = st.EL0
    sigma2 = float(point["sigma2"])
    values = theorem8_values(problem, setup, sigma2=sigma2, EL0=EL0)
    t0 = informative_from(values)
    T = math.ceil(float(point.get("tau", 1.0)) / kappa_of(values))
    if T > T_cap and not clamp:
        raise ValueError(f"horizon {T} > budget {T_cap} rounds")
    return Experiment(problem, setup, st, EL0, sigma2, values, t0, min(T, T_cap) if clamp else max(T, t0))


# ---------------------------------------------------------------------------------------------- objectives


def theorem8_profile(exp: Experiment) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rounds, exact E gap, Theorem 8's bound) at the informative rounds of ``exp``."""
    gap = np.asarray(exact_run(exp.problem, exp.params(), rounds=exp.T, sigma2=exp.sigma2).E_psi_gap, dtype=float)
    ts = informative_checkpoints(exp.t0, exp.T)
    return ts, gap[ts], theorem8_curve(exp.values, ts)


def floor_profile(exp: Experiment) -> tuple[np.ndarray, np.ndarray, float]:
    """(rounds 1..T, exact E gap from x* there, the floor)."""
    gap = np.asarray(exact_run(exp.problem, exp.params(), rounds=exp.T, sigma2=exp.sigma2).E_psi_gap, dtype=float)
    return np.arange(1, exp.T + 1), gap[1:], evaluate(fc.theorem8_floor, exp.values)


def lyapunov_profile(exp: Experiment, C0: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    """Exact E[L_t] (C_c = 0) on windows of m rounds: (window starts t, E[L_t], E[L_{t+m}], window_factor,
    window_noise) at the informative windows, those with E[L_t] > floor (below it the claim's right-hand side
    exceeds E[L_t] and any non-increasing run meets it). ValueError when there is none."""
    tr = exact_run(exp.problem, exp.params(), rounds=exp.T, sigma2=exp.sigma2)
    m = exp.setup.m
    f = {S.gamma: exp.setup.gamma, S.C_0: C0, S.C_c: 0.0}
    a = evaluate(fc.lyapunov, {**f, S.psi_gap: 1.0, S.Fnor2: 0.0, S.corr_err: 0.0})
    b = evaluate(fc.lyapunov, {**f, S.psi_gap: 0.0, S.Fnor2: 1.0, S.corr_err: 0.0})
    EL = a * np.asarray(tr.E_psi_gap) + b * np.asarray(tr.E_normal_map_sq)
    vals = {**exp.values, S.C_0: C0}
    factor = evaluate(fc.lyapunov_window_factor, vals)
    noise = evaluate(fc.lyapunov_window_noise, vals)
    floor = evaluate(fc.theorem8_floor, vals)
    starts = np.unique(np.round(np.geomspace(1, exp.T - m, 40)).astype(int))
    starts = starts[EL[starts] > floor]
    if starts.size == 0:
        raise ValueError("no informative window: E[L_t] <= floor from round 1")
    return starts, EL[starts], EL[starts + m], factor, noise


def promised_over_achieved(EL_t: np.ndarray, EL_tm: np.ndarray, factor: float, noise: float) -> np.ndarray:
    """The window claim E[L_{t+m}] <= factor E[L_t] + noise as a ratio: the decrease it promises,
    (1 - factor) E[L_t] - noise, over the decrease achieved, E[L_t] - E[L_{t+m}] (> 1: violated; a window that
    promises a decrease and achieves none is inf)."""
    promised = (1.0 - factor) * EL_t - noise
    achieved = EL_t - EL_tm
    return np.where(achieved > 0, promised / np.where(achieved > 0, achieved, 1.0), np.where(promised > 0, np.inf, 0.0))


def nat_nor_ratios(point: Mapping[str, Any]) -> tuple[float, np.ndarray]:
    """(gamma, the ratios (1 - gamma rho)||F_nat(prox z)|| / (gamma ||F_nor(z)||) at 64 seeded z around z*)."""
    from fedbounds.algorithms.base import natural_residual, normal_map

    problem = make_instance(point["family"], n=int(point["n"]), p=int(point["p"]), heterogeneity=float(point["heterogeneity"]),
                            seed=int(point["seed"]))
    c = problem.constants
    L, rho = c["L"].value, c["rho"].value
    gamma = float(point["gamma_frac"]) / (rho + L)  # gamma rho < 1 (the claim's hypothesis), gamma <= 1/(rho + L)
    sol = problem.solution()
    u = np.random.default_rng([int(point["seed"]), 57]).standard_normal((64, problem.p))
    z = sol.x_star + float(point["z_scale"]) * u
    factor = evaluate(fc.nat_nor_factor, {S.gamma: gamma, S.rho: rho})
    nat = np.linalg.norm(natural_residual(problem, problem.phi.prox(z, gamma), gamma), axis=-1)
    nor = np.linalg.norm(normal_map(problem, z, gamma), axis=-1)
    return gamma, np.where(nor > 0, nat / np.maximum(factor * nor, 1e-300), 0.0)


def objective(claim: str, *, T_cap: int, scale: float = 1.0) -> Callable[[Mapping[str, Any]], float]:
    """observed / (``scale`` x bound) at the informative rounds of ``claim``'s experiment at a point
    (``scale`` < 1 plants a bug: the bound divided by 1/scale)."""

    def f(point: Mapping[str, Any]) -> float:
        if claim == "fednmap.nat_nor_relation":
            return float(nat_nor_ratios(point)[1].max()) / scale
        if claim == "fednmap.theorem8":
            _, obs, bound = theorem8_profile(build(point, T_cap=T_cap))
            return float(np.max(obs / (scale * bound)))
        if claim == "fednmap.theorem8.floor":
            _, obs, floor = floor_profile(build(point, T_cap=T_cap, start=False, clamp=True))
            return float(obs.max() / (scale * floor))
        if claim == "fednmap.lyapunov":
            _, EL_t, EL_tm, factor, noise = lyapunov_profile(build(point, T_cap=T_cap, clamp=True), float(point["C_0"]))
            # the bug planted by ``scale``: the rate exponent (1 - factor) and the noise term both times 1/scale
            return float(promised_over_achieved(EL_t, EL_tm, 1.0 - (1.0 - factor) / scale, noise / scale).max())
        raise ValueError(f"no search objective for {claim!r}")

    return f


def default_start(claim: str) -> dict[str, Any]:
    """The check's default experiment as a point of ``claim``'s space."""
    if claim == "fednmap.nat_nor_relation":
        return {"family": "lasso", "n": 4, "p": 5, "heterogeneity": 0.5, "gamma_frac": 0.2, "z_scale": 1.0, "seed": 0}
    names = {d.name for d in space(claim)}
    return {k: v for k, v in DEFAULT_POINT.items() if k in names}


def search(claim: str, ctx: CheckContext) -> WorstCase:
    """The worst case of ``claim`` within the profile's budget (``search_budget`` evaluations, horizons up to
    ``search_T_cap`` rounds), started from the check's default experiment; cached per (claim, profile, seed)."""
    prof = ctx.profile
    budget = int(prof.get(claim, "search_budget", 24))
    T_cap = int(prof.get(claim, "search_T_cap", 12000))
    key = ("worst", claim, prof.name, budget, T_cap, ctx.seed)
    return cached(key, lambda: search_worst(objective(claim, T_cap=T_cap), space(claim), budget=budget, seed=ctx.seed,
                                            starts=[default_start(claim)]))  # type: ignore[return-value]


def tightness_record(wc: WorstCase, *, quantity: str, T_cap: int, slack_before: float | None = None) -> dict:
    """``CheckResult.tightness['search']``: the worst ratio, how loose, the instance and seed, the budget."""
    d = wc.to_dict()
    d.update({"quantity": quantity, "horizon_cap_rounds": T_cap, "method": "scipy differential evolution on the unit cube"})
    if slack_before is not None:
        d["default_experiment_slack"] = slack_before
        d["default_experiment_ratio"] = (1.0 / slack_before) if slack_before and slack_before > 0 else None
    return d


def calibrated_at_worst(claim: str, wc: WorstCase, ctx: CheckContext) -> Verdict:
    """The calibrated control at the worst case found: the bound scaled by ``calibrated_scale(ratio)`` (a factor 2
    below the worst observed / bound), through :func:`compare`. The search's evaluations are exact (linear-Gaussian
    moments, or deterministic residuals), so this is a reproduction, not fresh Monte Carlo noise (said in its record)."""
    T_cap = int(ctx.profile.get(claim, "search_T_cap", 12000))
    s = calibrated_scale(wc.ratio)
    point = wc.point
    what = f"bound x {s:.3g} (calibrated: worst ratio {wc.ratio:.3g} / 2) at the searched worst case"
    name = f"worst case: {_describe(point)}"
    if claim == "fednmap.nat_nor_relation":
        _, r = nat_nor_ratios(point)
        v = compare(claim, name, r, np.full(r.shape, s), exact=True, details={"quantity": "nat/nor ratio against 1 x scale"})
        where: Any = f"z #{int(np.argmax(r))} of 64"
    elif claim == "fednmap.theorem8":
        ts, obs, bound = theorem8_profile(build(point, T_cap=T_cap))
        v = compare(claim, name, obs, s * bound, exact=True, details={"rounds": ts.tolist()})
        where = int(ts[v.details["worst_index"]])
    elif claim == "fednmap.theorem8.floor":
        ts, obs, floor = floor_profile(build(point, T_cap=T_cap, start=False, clamp=True))
        v = compare(claim, name, obs, np.full(obs.shape, s * floor), exact=True)
        where = int(ts[v.details["worst_index"]])
    else:
        ts, EL_t, EL_tm, factor, noise = lyapunov_profile(build(point, T_cap=T_cap, clamp=True), float(point["C_0"]))
        c = 1.0 / s  # the rate exponent m kappa (and with it the noise m kappa floor) times 2 / worst ratio
        v = compare(claim, name, EL_tm, (1.0 - c * (1.0 - factor)) * EL_t + c * noise, exact=True,
                    details={"quantity": "E[L_{t+m}] against (1 - c m kappa) E[L_t] + c m kappa floor", "kappa_times": c})
        what = f"rate exponent m kappa x {c:.3g} (calibrated: 2 / worst promised-over-achieved ratio {wc.ratio:.3g})"
        where = f"window starting at round {int(ts[v.details['worst_index']])}"
    v = v.with_details(instance_point=dict(point), search_seed=wc.seed, noise="exact (a reproduction of the search's evaluation)")
    changed = "kappa" if claim == "fednmap.lyapunov" else "bound"
    return control(v, changed=changed, what=what, before=1.0, after=1.0 / s if changed == "kappa" else s, kind=MACHINERY,
                   violated_at=where if v.violated else None)


def _describe(point: Mapping[str, Any]) -> str:
    keys = ("family", "n", "p", "samples", "Q", "m", "sigma2", "eta_hat_frac", "eta_a_frac", "gamma_frac", "tau", "offset", "z_scale")
    return ", ".join(f"{k}={point[k]:.3g}" if isinstance(point[k], float) else f"{k}={point[k]}" for k in keys if k in point)
