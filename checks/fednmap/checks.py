"""FedNMap checks (arXiv 2602.03357): Theorem 8, Theorem 5's rate shape, and the F_nat / F_nor relation.

* ``fednmap.theorem8`` (Theorem 8 [V]): E[psi(x_T)] - psi* <= exp(-2 eta_hat mu T / (9 (1 + gamma mu C_0)))
  E[L_0] + 36 sigma^2/(m n mu Q) + 12100 eta_a^2 Q L^2 sigma^2/(mu (1 - gamma rho)^2), in its strictest form
  C_0 = 0, E[L_0] = psi(x_0) - psi*, with steps at the largest values Theorem 5's conditions allow (Theorem 8's
  own conditions are lost; [?]). Every T on a trajectory is a valid horizon, so the bound is compared at
  log-spaced rounds t <= T. Two starts per instance: away from x* (the whole bound) and at x* (E[L_0] = 0:
  the error floor alone). Instances: Lasso and MCP (Monte Carlo), ridge (linear-Gaussian, exact).
* ``fednmap.theorem8.floor`` (Theorem 8 as T -> infinity [D]): started at x*, the whole trajectory against
  the floor 36 sigma^2/(m n mu Q) + 12100 eta_a^2 Q L^2 sigma^2/(mu (1 - gamma rho)^2).
* ``fednmap.theorem5.rate`` (Theorem 5 / Table 1, O(sqrt(sigma^2/(nQT)) + 1/T) [V]): with exact gradients the
  average of ||F_nor(z_t)||^2 over t < T against the rate's shape 1/T (log-log slope).
* ``fednmap.nat_nor_relation`` ([I], section 3): (1 - gamma rho) ||F_nat(prox z)|| <= gamma ||F_nor(z)||,
  pointwise at every round and replica of whole trajectories (a deterministic statement: exact verdicts).
"""

from __future__ import annotations

import numpy as np
from fedbounds.checks.core.formulas import evaluate
from fedbounds.checks.core.profiles import Profile
from fedbounds.checks.core.stats import mean_ci
from fedbounds.checks.core.verdict import VIOLATED, Verdict, compare, decide
from fedbounds.checks.fednmap.common import cached, checkpoints, gaussian_oracle, make_instance, pl_constant, theorem5_parameters
from fedbounds.checks.registry import CheckContext, CheckResult, Curve, Plot, register
from fedbounds.theory.core import symbols as S
from fedbounds.theory.fednmap import formulas as fc

#: noise level of the Theorem 8 / Theorem 5 runs (Assumption 1's sigma^2)
SIGMA2 = 0.05
#: local steps and multistep window of the Theorem 8 runs
Q8, M8 = 2, 1
#: Theorem 8's instances: PL, convex (Lasso) and weakly convex (MCP) Monte Carlo, linear-Gaussian (ridge) exact
INSTANCES8 = ("lasso", "mcp", "ridge")
#: slope tolerance of the rate-shape test: an O-rate compared over about a decade of T
SHAPE_TOL = 0.1


def _start(problem, gamma: float, offset: float, seed: int) -> tuple[np.ndarray, float]:
    """z_0 = z* + offset * u (u a seeded unit vector, z* = x* - gamma grad f(x*) the normal-map zero), and
    psi(x_0) - psi* with x_0 = prox(z_0)."""
    sol = problem.solution()
    z_star = sol.x_star - gamma * problem.grad_f(sol.x_star)
    u = np.random.default_rng([seed, 31]).standard_normal(problem.p)
    z0 = z_star + offset * u / np.linalg.norm(u)
    x0 = problem.phi.prox(z0, gamma)
    return z0, max(float(problem.psi(x0) - sol.psi_star), 0.0)


def fednmap_run(problem, params: dict, *, rounds: int, replicas: int, seed: int, sigma2: float, metrics: tuple[str, ...]):
    """A cached Monte Carlo FedNMap run (``fedbounds.algorithms.run.run``); returns the Trajectory."""
    from fedbounds.algorithms.run import run

    key = ("fednmap", problem.name, tuple(sorted((k, str(v)) for k, v in params.items())), rounds, replicas, seed, sigma2, metrics)
    return cached(key, lambda: run("fednmap", problem, params, rounds=rounds, replicas=replicas, seed=seed,
                                   oracle=gaussian_oracle(sigma2), metrics=metrics))


def exact_gap(problem, params: dict, *, rounds: int, sigma2: float) -> np.ndarray:
    """E[psi(x_t)] - psi* for t = 0..rounds, exactly (linear-Gaussian instance, ``fedbounds.algorithms.exact``)."""
    from fedbounds.algorithms.exact import run_exact

    key = ("exact", problem.name, tuple(sorted((k, str(v)) for k, v in params.items())), rounds, sigma2)
    res = cached(key, lambda: run_exact("fednmap", problem, params, rounds=rounds, oracle=gaussian_oracle(sigma2)))
    return np.asarray(res.E_psi_gap, dtype=float)


def theorem8_values(problem, setup, *, sigma2: float, EL0: float, C0: float = 0.0) -> dict:
    """Theory symbol values of Theorem 8 on this instance (mu = the PL constant of psi)."""
    return {**setup.values(), S.mu: pl_constant(problem), S.sigma2: sigma2, S.n: problem.n, S.C_0: C0, S.EL_0: EL0}


def theorem8_curve(values: dict, ts: np.ndarray, *, scale: float = 1.0) -> np.ndarray:
    """Theorem 8's bound at each horizon T in ``ts`` (times ``scale``; scale 1/10 is a negative control)."""
    return np.array([scale * evaluate(fc.theorem8_bound, {**values, S.T: int(t)}) for t in ts])


def _theorem8_instance(kind: str, ctx: CheckContext, T: int, *, start: str, scale: float = 1.0, frac: float = 1.0,
                       eta_a_frac: float | None = None, sigma2: float = SIGMA2, Q: int = Q8, correction: bool = True,
                       heterogeneity: float = 0.5, hessian_het: float = 0.0, claim: str = "fednmap.theorem8",
                       label: str = "", instance_seed: int | None = None) -> tuple[Verdict, Curve, Curve]:
    prof: Profile = ctx.profile
    iseed = ctx.seed if instance_seed is None else instance_seed
    problem = make_instance(kind, seed=iseed, heterogeneity=heterogeneity, hessian_het=hessian_het)
    c = problem.constants
    setup = theorem5_parameters(c["L"].value, c["rho"].value, Q=Q, m=M8, frac=frac, eta_a_frac=eta_a_frac)
    z0, EL0 = _start(problem, setup.gamma, 1.0 if start == "away" else 0.0, iseed)
    values = theorem8_values(problem, setup, sigma2=sigma2, EL0=EL0)
    ts = checkpoints(T, 40)
    bound = theorem8_curve(values, ts, scale=scale)
    params = setup.params(z0=z0) if correction else setup.params(z0=z0, correction=False)
    name = label or f"{kind}, x0 {'away from' if start == 'away' else 'at'} x*" + (f", instance seed {iseed}" if iseed != ctx.seed else "")
    details = {"T": T, "C_0": 0.0, "E[L_0]": EL0, "mu_PL": values[S.mu], "sigma2": sigma2, "Q": Q, "m": M8, "correction": correction,
               "gamma": setup.gamma, "eta_hat": setup.eta_hat, "eta_a": setup.eta_a, "eta_s": setup.eta_s,
               "eta_hat/eta_hat_max": frac}
    if kind == "ridge":
        gap = exact_gap(problem, params, rounds=T, sigma2=sigma2)
        obs = gap[ts]
        v = compare(claim, name, obs, bound, exact=True, details={**details, "slack_at_T": float(bound[-1] / max(obs[-1], 1e-300))})
        cur = Curve(f"{name}: exact E gap", ts.tolist(), obs.tolist())
    else:
        traj = fednmap_run(problem, params, rounds=T, replicas=int(prof.replicas), seed=ctx.seed, sigma2=sigma2,
                           metrics=("psi_gap", "normal_map_sq", "natural_residual_sq"))
        if traj.divergence is not None:
            d = traj.divergence
            v = Verdict(claim, name, float("inf"), float(bound[-1]), float("inf"), float("inf"), str(VIOLATED), 0.0,
                        True, {**details, "diverged": f"round {d.round} (replica {d.replica}): {d.reason}"})
            return v, Curve(name, [], []), Curve("bound", ts.tolist(), bound.tolist(), role="bound")
        samples = traj.metrics["psi_gap"][ts].T
        mean, lo, hi = mean_ci(samples, level=prof.level)
        details["slack_at_T"] = float(bound[-1] / max(mean[-1], 1e-300))
        v = compare(claim, name, samples, bound, exact=False, level=prof.level, details=details)
        cur = Curve(f"{name}: MC mean", ts.tolist(), np.maximum(mean, 1e-300).tolist(), np.maximum(lo, 1e-300).tolist(), hi.tolist())
    return v, cur, Curve(f"bound ({name})", ts.tolist(), bound.tolist(), role="bound")


@register("fednmap.theorem8", title="Theorem 8: E[psi(x_T)] - psi* bound in its strictest form (C_0 = 0, E[L_0] = psi(x_0) - psi*)",
          label="Theorem 8", status="verbatim", family="fednmap")
def check_theorem8(ctx: CheckContext) -> CheckResult:
    """FedNMap Theorem 8 from x_0 away from x* on Lasso, MCP (Monte Carlo) and ridge (exact). Negative
    controls: the bound / 10, and eta_hat 300 times past Theorem 5's condition (eta_s larger)."""
    T = ctx.profile.rounds(int(ctx.profile.get("fednmap.theorem8", "T", 2000)))
    res = CheckResult("fednmap.theorem8")
    plot = Plot("theorem8", "FedNMap Theorem 8 (C_0 = 0, E[L_0] = psi(x_0) - psi*)", "round T", "E[psi(x_T)] - psi*")
    for kind in INSTANCES8:
        for k in range(int(ctx.profile.instances)):
            ctx.tick(f"theorem8 {kind} #{k}")
            v, cur, bnd = _theorem8_instance(kind, ctx, T, start="away", instance_seed=ctx.seed + k)
            res.verdicts.append(v)
            if k == 0:
                plot.curves += [cur, bnd]
    ctx.tick("theorem8 negative controls")
    neg, _, _ = _theorem8_instance("lasso", ctx, T, start="away", scale=0.1, label="lasso, bound / 10")
    res.negatives.append(neg.with_details(control="bound / 10 (lasso)"))
    neg2, cur2, _ = _theorem8_instance("lasso", ctx, min(T, 300), start="away", frac=2000.0, eta_a_frac=1.0,
                                       label="lasso, eta_hat 2000x past Thm 5")
    res.negatives.append(neg2.with_details(control="eta_hat 2000x past Theorem 5's condition (lasso)"))
    if cur2.x:
        plot.curves.append(Curve(cur2.label, cur2.x, cur2.y, role="negative"))
    res.plots.append(plot)
    res.tightness = {
        "slack_at_T": {v.instance: v.details.get("slack_at_T") for v in res.verdicts},
        "note": "worst slack is at t = 0, where it is (E[L_0] + floor)/E[L_0] by construction; slack_at_T is at the horizon",
    }
    res.notes.append("Theorem 8's own step-size conditions are lost; Theorem 5's are used (reconstruction, section 4).")
    return res


@register("fednmap.theorem8.floor", title="Theorem 8's error floor 36 sigma^2/(m n mu Q) + 12100 eta_a^2 Q L^2 sigma^2/(mu(1-gamma rho)^2)",
          label="Theorem 8 (T -> infinity)", status="derived", family="fednmap")
def check_theorem8_floor(ctx: CheckContext) -> CheckResult:
    """Started at x_0 = x* (z_0 the normal-map zero, E[L_0] = psi(x_0) - psi* = 0), so the bound is the floor
    at every T: E[psi(x_t)] - psi* must stay below it on the whole trajectory (Lasso, MCP: Monte Carlo;
    ridge: exact). Negative control: FedNMap without its correction, Q = 8, sigma^2 tiny (floor ~ 0), eta_a
    50 times past its condition on a strongly heterogeneous Lasso: the client-drift bias stays above the floor."""
    T = ctx.profile.rounds(int(ctx.profile.get("fednmap.theorem8.floor", "T", 1500)))
    res = CheckResult("fednmap.theorem8.floor")
    plot = Plot("floor", "FedNMap Theorem 8 error floor (x_0 = x*, E[L_0] = 0)", "round T", "E[psi(x_T)] - psi*")
    for kind in INSTANCES8:
        for k in range(int(ctx.profile.instances)):
            ctx.tick(f"floor {kind} #{k}")
            v, cur, bnd = _theorem8_instance(kind, ctx, T, start="opt", claim="fednmap.theorem8.floor", instance_seed=ctx.seed + k)
            res.verdicts.append(v)
            if k == 0:
                plot.curves += [cur, bnd]
    ctx.tick("floor negative control")
    neg, cur, bnd = _theorem8_instance("lasso", ctx, min(T, 1500), start="opt", claim="fednmap.theorem8.floor", sigma2=1e-8, Q=8,
                                       eta_a_frac=50.0, correction=False, heterogeneity=2.0, hessian_het=0.5,
                                       label="lasso, no correction, eta_a 50x past, Q = 8")
    res.negatives.append(neg.with_details(control="correction removed (heterogeneous lasso, Q = 8, eta_a 50x past, sigma^2 = 1e-8)"))
    plot.curves += [Curve(cur.label, cur.x, cur.y, role="negative")]
    res.plots.append(plot)
    res.tightness = {"slack": {v.instance: v.slack for v in res.verdicts}}
    return res


# ---------------------------------------------------------------------------------------------- Theorem 5


def _rate_shape(ctx: CheckContext, Ts: list[int], *, Q: int, correction: bool, eta_a_frac: float | None,
                label: str, hessian_het: float = 0.0, heterogeneity: float = 0.5, frac: float = 1.0) -> tuple[Verdict, dict]:
    """(1/T) sum_{t<T} ||F_nor(z_t)||^2 on the T grid from one deterministic run (sigma^2 = 0, so the rate is
    O(1/T)); verdict on the local log-log slope over the last grid step against the rate's (fedbounds.theory.fednmap.formulas
    .theorem5_rate at sigma^2 = 0) plus SHAPE_TOL."""
    problem = make_instance("mcp", seed=ctx.seed, hessian_het=hessian_het, heterogeneity=heterogeneity)
    c = problem.constants
    setup = theorem5_parameters(c["L"].value, c["rho"].value, Q=Q, m=1, frac=frac, eta_a_frac=eta_a_frac)
    z0, _ = _start(problem, setup.gamma, 1.0, ctx.seed)
    params = setup.params(z0=z0) if correction else setup.params(z0=z0, correction=False)
    traj = fednmap_run(problem, params, rounds=Ts[-1], replicas=1, seed=ctx.seed, sigma2=0.0, metrics=("normal_map_sq",))
    traj.raise_if_diverged()
    cums = np.cumsum(traj.metrics["normal_map_sq"][:, 0])
    avg = np.array([cums[T - 1] / T for T in Ts])
    rate = np.array([evaluate(fc.theorem5_rate, {S.sigma2: 0.0, S.n: problem.n, S.Q: Q, S.T: T}) for T in Ts])
    slope = float(np.log(avg[-1] / avg[-2]) / np.log(Ts[-1] / Ts[-2]))
    rate_slope = float(np.log(rate[-1] / rate[-2]) / np.log(Ts[-1] / Ts[-2]))
    allowed = rate_slope + SHAPE_TOL
    v = Verdict("fednmap.theorem5.rate", label, slope, allowed, slope, slope, str(decide(slope, slope, allowed, exact=True)),
                float("nan"), True,
                {"quantity": "local log-log slope in T of (1/T) sum_{t<T} ||F_nor(z_t)||^2 (sigma^2 = 0), last grid step",
                 "rate_slope": rate_slope, "tolerance": SHAPE_TOL, "T": Ts, "avg": avg.tolist(),
                 "implied_constant_T_avg": (avg * np.array(Ts)).tolist(), "eta_hat": setup.eta_hat, "eta_a": setup.eta_a,
                 "Q": Q, "correction": correction})
    return v, {"T": Ts, "avg": avg.tolist(), "rate": rate.tolist()}


@register("fednmap.theorem5.rate", title="Theorem 5 / Table 1: average ||F_nor||^2 has the rate's shape O(1/T) (sigma = 0)",
          label="Theorem 5 / Table 1", status="verbatim", family="fednmap")
def check_theorem5_rate(ctx: CheckContext) -> CheckResult:
    """With exact gradients the rate O(sqrt(sigma^2/(nQT)) + 1/T) is O(1/T): (1/T) sum ||F_nor(z_t)||^2 must
    decay like 1/T (local log-log slope <= -1 + tolerance) once T eta_hat mu >> 1, on the weakly convex (MCP)
    instance at the largest steps Theorem 5 allows. Negative control: the correction removed on a strongly
    heterogeneous instance (targets and Hessians), Q = 16, eta_a 400 and eta_hat 20 times past their
    conditions: a biased fixed point, so the average stalls at ||F_nor(z_bias)||^2 > 0 (slope -> 0). With
    the correction and the same steps it still holds (a verdict too: the conditions are loose)."""
    base = ctx.profile.rounds(int(ctx.profile.get("fednmap.theorem5.rate", "T0", 750)))
    Ts = [base, 2 * base, 4 * base]
    res = CheckResult("fednmap.theorem5.rate")
    plot = Plot("theorem5", "FedNMap Theorem 5 (sigma = 0): (1/T) sum ||F_nor(z_t)||^2", "T", "average ||F_nor||^2", logx=True)
    ctx.tick("theorem5 at the maxima")
    v, data = _rate_shape(ctx, Ts, Q=2, correction=True, eta_a_frac=None, label="mcp, steps at Theorem 5's maxima")
    res.verdicts.append(v)
    plot.curves.append(Curve(v.instance, data["T"], data["avg"]))
    # the control pair: strongly heterogeneous (targets and Hessians), Q = 16, eta_a 400x and eta_hat 20x past
    Tc = [200, 400, 800]
    hard = {"Q": 16, "eta_a_frac": 400.0, "frac": 20.0, "heterogeneity": 3.0, "hessian_het": 0.8}
    for corr in (True, False):
        label = f"mcp (heterogeneous), correction {'kept' if corr else 'removed'}, Q = 16, eta_a 400x, eta_hat 20x past"
        ctx.tick(f"theorem5 correction {'kept' if corr else 'removed'}")
        v, data = _rate_shape(ctx, Tc, correction=corr, label=label, **hard)
        if corr:
            res.verdicts.append(v)
        else:
            res.negatives.append(v.with_details(control="correction removed (heterogeneous, Q = 16, steps past the conditions)"))
        plot.curves.append(Curve(label, data["T"], data["avg"], role="observed" if corr else "negative"))
    r = res.verdicts[0].details
    plot.curves.append(Curve("K/T (K from the smallest T)", Ts, [r["avg"][0] * Ts[0] / T for T in Ts], role="bound"))
    res.plots.append(plot)
    res.notes.append(f"Shape test: local slope <= rate slope + {SHAPE_TOL}; Theorem 5's constants are lost, so only the shape is checked.")
    return res


# ---------------------------------------------------------------------------------------------- F_nat / F_nor


@register("fednmap.nat_nor_relation", title="(1 - gamma rho) ||F_nat(prox z)|| <= gamma ||F_nor(z)|| along trajectories",
          label="Section 3 relation", status="reconstructed", family="fednmap")
def check_nat_nor(ctx: CheckContext) -> CheckResult:
    """Pointwise at every round and replica of the Theorem 8 trajectories (Lasso, rho = 0, where it is tight;
    MCP, rho > 0): the ratio (1 - gamma rho)^2 ||F_nat||^2 / (gamma^2 ||F_nor||^2) must be <= 1. Negative
    control: the right-hand side divided by 10."""
    T = ctx.profile.rounds(int(ctx.profile.get("fednmap.theorem8", "T", 2000)))
    res = CheckResult("fednmap.nat_nor_relation")
    plot = Plot("nat_nor", "(1-gamma rho)||F_nat(prox z_t)|| / (gamma ||F_nor(z_t)||), max over replicas", "round", "ratio")
    worst_ratio = {}
    for kind in ("lasso", "mcp"):
        ctx.tick(f"nat_nor {kind}")
        problem = make_instance(kind, seed=ctx.seed)
        c = problem.constants
        setup = theorem5_parameters(c["L"].value, c["rho"].value, Q=Q8, m=M8)
        z0, _ = _start(problem, setup.gamma, 1.0, ctx.seed)
        traj = fednmap_run(problem, setup.params(z0=z0), rounds=T, replicas=int(ctx.profile.replicas), seed=ctx.seed,
                           sigma2=SIGMA2, metrics=("psi_gap", "normal_map_sq", "natural_residual_sq"))
        nat, nor = traj.metrics["natural_residual_sq"], traj.metrics["normal_map_sq"]
        # the relation from the theory layer, squared: ||F_nat||^2 <= (gamma/(1 - gamma rho))^2 ||F_nor||^2
        vals = {S.gamma: setup.gamma, S.rho: setup.rho}
        factor2 = evaluate(fc.nat_nor_sq_bound, {**vals, S.Fnor2: 1.0})
        lhs, rhs = nat.ravel(), factor2 * nor.ravel()
        ratio = np.sqrt(np.where(nor > 0, nat / np.maximum(factor2 * nor, 1e-300), 0.0))
        worst = float(ratio.max())
        worst_ratio[kind] = worst
        v = compare("fednmap.nat_nor_relation", f"{kind}, every round and replica", lhs, rhs, exact=True,
                    details={"max_ratio": worst, "points": int(lhs.size), "gamma": setup.gamma, "rho": setup.rho,
                             "quantity": "||F_nat(prox z_t)||^2 against (gamma/(1-gamma rho))^2 ||F_nor(z_t)||^2"})
        res.verdicts.append(v)
        plot.curves.append(Curve(kind, list(range(ratio.shape[0])), ratio.max(axis=1).tolist()))
        if kind == "lasso":
            neg = compare("fednmap.nat_nor_relation", "lasso, rhs / 10", lhs, rhs / 10, exact=True)
            res.negatives.append(neg.with_details(control="right-hand side / 10 (lasso)"))
    plot.curves.append(Curve("bound 1", [0, T], [1.0, 1.0], role="bound"))
    plot.logy = False
    res.plots.append(plot)
    res.tightness = {"max_ratio": worst_ratio, "note": "ratio 1 means the relation is tight"}
    return res

