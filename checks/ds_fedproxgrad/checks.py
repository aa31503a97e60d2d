"""DS FedProxGrad checks (Arif, arXiv 2512.08671): Lemma 5.1, Lemma 5.2 round by round, Theorem 5.3, the
Corollary's finite-horizon bound, and the constant-step floor (notes section 1.6).

* ``ds.lemma5_1`` (Lemma 5.1, eq. (11)): ||e_f^r||^2 <= gamma_r^2 (G^2 + B^2 ||grad f(x^r)||^2), pointwise at
  every round and replica (a deterministic statement: exact verdicts).
* ``ds.lemma5_2`` (Lemma 5.2, eq. (14)): E F(x^{r+1}) - E F(x^r) <= -eta_r Phi_r E||grad F(x^r)||^2 + Xi_r with
  Phi_r = 1/4 from r_0 on (r_0 explicit, notes 1.4), checked as E[F(x^{r+1}) - F(x^r) + eta_r/4 ||grad F||^2]
  <= Xi_r every round (Monte Carlo with sigma^2 > 0; exact when deterministic).
* ``ds.theorem5_3`` (Theorem 5.3): decaying steps drive E||grad F||^2 below the constant-step floor.
* ``ds.corollary_ii`` (Corollary (ii), eq. (26), constants from notes 1.6): with eta = c/sqrt(R) the average
  (1/R) sum_{r<R} E||grad F(x^r)||^2 meets 4 Delta_0/(c sqrt R) + 6 L_F sigma^2 c/sqrt R + 5 C_e K_e^2 c_gamma^2 c^2/R.
* ``ds.constant_step_floor`` (notes 1.6, derived): with a constant step the average meets
  4 Delta_0/(eta R) + 6 L_F sigma^2 eta + 5 C_e K_e^2 gamma^2.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from fedbounds.checks.core.formulas import evaluate
from fedbounds.checks.core.stats import mean_ci
from fedbounds.checks.core.verdict import VIOLATED, Verdict, compare
from fedbounds.checks.ds_fedproxgrad.common import ds_record, fairness_instance, measured_constants, r0_of, xi_per_round
from fedbounds.checks.registry import CheckContext, CheckResult, Curve, Plot, register
from fedbounds.theory.core import symbols as S
from fedbounds.theory.ds_fedproxgrad import formulas as dc

SIGMA2 = 0.05


def _eta_max(problem) -> float:
    """1/(6 L_F) (A4(iv), fedbounds.theory.ds_fedproxgrad.formulas.eta_max_smooth)."""
    return evaluate(dc.eta_max_smooth, {S.L_F: float(problem.constants["L_F"].value)})


def _diverged(claim: str, instance: str, rec, details: dict) -> Verdict:
    return Verdict(claim, instance, float("inf"), float("nan"), float("inf"), float("inf"), str(VIOLATED), 0.0, True,
                   {**details, "diverged": rec.diverged})


def lemma5_2_verdict(claim: str, instance: str, problem, rec, *, sigma2: float, level: float, phi_scale: float = 1.0,
                     rounds: slice | None = None, exact: bool = False, extra: dict | None = None) -> tuple[Verdict, dict]:
    """Lemma 5.2 from r_0 on (or on ``rounds``): samples D_r = F(x^{r+1}) - F(x^r) + eta_r Phi ||grad F(x^r)||^2
    against Xi_r. Phi from theory (1/4), times ``phi_scale``."""
    vals = measured_constants(problem, rec, sigma2=sigma2)
    gamma = rec.gamma_emp.max(axis=1)
    xi = xi_per_round(vals, rec.eta, gamma)
    phi = evaluate(dc.Phi, {}) * phi_scale
    # per replica, minus the zero-mean control variate eta_r <grad F(u_r), e_r^stoch> (DSRecord.cv)
    D = rec.F[1:] - rec.F[:-1] + phi * rec.eta[:, None] * rec.g2[:-1] - rec.cv  # (T, R)
    r0 = r0_of(vals, gamma)
    sel = rounds if rounds is not None else slice(r0, rec.rounds)
    idx = np.arange(rec.rounds)[sel]
    details = {"r_0": r0, "rounds_checked": [int(idx[0]), int(idx[-1])] if idx.size else [], "sigma2": sigma2,
               "B": vals[S.B], "G": vals[S.G], "G_r": vals[S.G_r], "L_F": vals[S.L_F], "Phi": phi,
               "quantity": "E[F(x^{r+1}) - F(x^r) + eta_r Phi ||grad F(x^r)||^2] against Xi_r", **(extra or {})}
    if idx.size == 0:
        raise ValueError(f"{claim}: no round to check (r_0 = {r0} of {rec.rounds})")
    if exact:
        v = compare(claim, instance, D[idx, 0], xi[idx], exact=True, details=details)
    else:
        v = compare(claim, instance, D[idx].T, xi[idx], exact=False, level=level, details=details)
    mean, lo, hi = mean_ci(D.T, level=level)
    # slack in the lemma's own terms: the largest Phi for which each round's inequality holds (on the mean),
    # Phi*_r = Phi + (Xi_r - E D_r)/(eta_r E||grad F(x^r)||^2), over the checked rounds, relative to Phi
    g2m = rec.g2[:-1].mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        phi_star = phi + (xi - np.atleast_1d(mean)) / (rec.eta * g2m)
    phi_min = float(np.nanmin(phi_star[idx])) if phi > 0 else float("nan")
    v = replace(v, slack=phi_min / phi if phi > 0 else v.slack, details={**v.details, "Phi_star_min": phi_min,
                                                                         "slack_meaning": "largest Phi that holds / Phi"})
    return v, {"r": np.arange(rec.rounds), "D": np.atleast_1d(mean), "lo": np.atleast_1d(lo), "hi": np.atleast_1d(hi), "xi": xi, "r0": r0}


def _schedule_power(problem, alpha: float = 0.6) -> dict:
    return {"kind": "power", "c": _eta_max(problem), "alpha": alpha}


@register("ds.lemma5_2", title="Lemma 5.2: per-round descent E F(x^{r+1}) - E F(x^r) <= -eta_r/4 E||grad F||^2 + Xi_r (r >= r_0)",
          label="Lemma 5.2", status="verbatim", family="ds")
def check_lemma5_2(ctx: CheckContext) -> CheckResult:
    """Round by round on the fairness instance: (a) deterministic (sigma^2 = 0, uphill injected error
    gamma_r = 2 eta_r), exact; (b) Gaussian fairness-gradient noise (sigma^2 > 0), exact local prox, Monte
    Carlo. Negative control: a constant step 60 times past 1/(6 L_F)."""
    prof = ctx.profile
    T = prof.rounds(int(prof.get("ds.lemma5_2", "T", 300)))
    res = CheckResult("ds.lemma5_2")
    problem = fairness_instance(ctx.seed)
    plot = Plot("lemma5_2", "DS FedProxGrad Lemma 5.2: E[dF + eta/4 ||grad F||^2] vs Xi_r", "round r", "value", logy=False)
    ctx.tick("lemma5.2 deterministic")
    inject = {"kind": "inject", "gamma": {"kind": "proportional", "c_gamma": 2.0}, "direction": "uphill"}
    p_det = {"schedule": _schedule_power(problem), "solver": inject, "estimator": {"kind": "gaussian", "sigma2": 0.0}}
    rec = ds_record(problem, p_det, rounds=T, replicas=1, seed=ctx.seed, B=float(problem.constants["B"].value))
    v, d = lemma5_2_verdict("ds.lemma5_2", "fairness, sigma^2 = 0, uphill gamma_r = 2 eta_r", problem, rec, sigma2=0.0,
                            level=prof.level, exact=True)
    res.verdicts.append(v)
    plot.curves += [Curve("deterministic: dF + eta/4 |g|^2", d["r"].tolist(), d["D"].tolist()),
                    Curve("deterministic: Xi_r", d["r"].tolist(), d["xi"].tolist(), role="bound")]
    ctx.tick("lemma5.2 stochastic")
    p_mc = {"schedule": _schedule_power(problem), "solver": {"kind": "exact", "tol": 1e-10},
            "estimator": {"kind": "gaussian", "sigma2": SIGMA2}}
    rec2 = ds_record(problem, p_mc, rounds=T, replicas=int(prof.replicas), seed=ctx.seed, B=float(problem.constants["B"].value))
    v2, d2 = lemma5_2_verdict("ds.lemma5_2", f"fairness, sigma^2 = {SIGMA2}, exact prox", problem, rec2, sigma2=SIGMA2, level=prof.level)
    res.verdicts.append(v2)
    plot.curves += [Curve("MC: dF + eta/4 |g|^2", d2["r"].tolist(), d2["D"].tolist(), d2["lo"].tolist(), d2["hi"].tolist()),
                    Curve("MC: Xi_r", d2["r"].tolist(), d2["xi"].tolist(), role="bound")]
    ctx.tick("lemma5.2 negative control")
    eta_bad = 60.0 * _eta_max(problem)
    zero = {"kind": "inject", "gamma": {"kind": "proportional", "c_gamma": 0.0}, "direction": "uphill"}
    p_bad = {"schedule": {"kind": "constant", "eta": eta_bad}, "solver": zero, "estimator": {"kind": "gaussian", "sigma2": 0.0}}
    rec3 = ds_record(problem, p_bad, rounds=min(T, 100), replicas=1, seed=ctx.seed, B=float(problem.constants["B"].value))
    if rec3.diverged and rec3.rounds == 0:
        neg = _diverged("ds.lemma5_2", "eta 60x past 1/(6 L_F)", rec3, {})
    else:
        neg, _ = lemma5_2_verdict("ds.lemma5_2", "eta 60x past 1/(6 L_F)", problem, rec3, sigma2=0.0, level=prof.level,
                                  rounds=slice(0, rec3.rounds), exact=True, extra={"eta": eta_bad})
    res.negatives.append(neg.with_details(control="constant eta = 60/(6 L_F), exact gradient steps"))
    res.plots.append(plot)
    return res


@register("ds.lemma5_1", title="Lemma 5.1: ||e_f^r||^2 <= gamma_r^2 (G^2 + B^2 ||grad f(x^r)||^2) along trajectories",
          label="Lemma 5.1", status="verbatim", family="ds")
def check_lemma5_1(ctx: CheckContext) -> CheckResult:
    """Pointwise along the Lemma 5.2 trajectories (uphill injected error: the worst case; exact prox).
    gamma_r: the round's empirical inexactness per replica; G measured at the iterates. Negative control:
    the bound / 10."""
    prof = ctx.profile
    T = prof.rounds(int(prof.get("ds.lemma5_2", "T", 300)))
    res = CheckResult("ds.lemma5_1")
    problem = fairness_instance(ctx.seed)
    B = float(problem.constants["B"].value)
    inject = {"kind": "inject", "gamma": {"kind": "proportional", "c_gamma": 2.0}, "direction": "uphill"}
    runs = {
        "uphill gamma_r = 2 eta_r": ({"schedule": _schedule_power(problem), "solver": inject,
                                      "estimator": {"kind": "gaussian", "sigma2": 0.0}}, 1),
        "exact prox, sigma^2 > 0": ({"schedule": _schedule_power(problem), "solver": {"kind": "exact", "tol": 1e-10},
                                     "estimator": {"kind": "gaussian", "sigma2": SIGMA2}}, int(prof.replicas)),
    }
    plot = Plot("lemma5_1", "DS FedProxGrad Lemma 5.1: ||e_f||^2 / bound (max over replicas)", "round r", "ratio", logy=False)
    for name, (params, R) in runs.items():
        ctx.tick(f"lemma5.1 {name}")
        sigma2 = params["estimator"]["sigma2"]
        rec = ds_record(problem, params, rounds=T, replicas=R, seed=ctx.seed, B=B)
        vals = measured_constants(problem, rec, sigma2=sigma2)
        bound = np.array([[evaluate(dc.lemma5_1_bound, {**vals, S.gamma_r: float(g), S.gradf2: float(gf)})
                           for g, gf in zip(grow, gfrow)] for grow, gfrow in zip(rec.gamma_emp, rec.gradf2[:-1])])
        lhs = rec.ef2
        v = compare("ds.lemma5_1", f"fairness, {name}", lhs.ravel(), bound.ravel(), exact=True,
                    details={"G": vals[S.G], "B": vals[S.B], "points": int(lhs.size)})
        res.verdicts.append(v)
        ratio = np.where(bound > 0, lhs / np.maximum(bound, 1e-300), 0.0).max(axis=1)
        plot.curves.append(Curve(name, list(range(rec.rounds)), ratio.tolist()))
        if name.startswith("uphill"):
            neg = compare("ds.lemma5_1", "bound / 10", lhs.ravel(), bound.ravel() / 10, exact=True)
            res.negatives.append(neg.with_details(control="Lemma 5.1 bound / 10 (uphill error)"))
    plot.curves.append(Curve("bound", [0, T], [1.0, 1.0], role="bound"))
    res.plots.append(plot)
    return res


def _tail(rec, frac: float = 0.2) -> np.ndarray:
    """Per-replica mean of ||grad F(x^r)||^2 over the last ``frac`` of the rounds, shape (R,)."""
    k = max(1, int(frac * rec.g2.shape[0]))
    return rec.g2[-k:].mean(axis=0)


@register("ds.theorem5_3", title="Theorem 5.3: decaying steps drive E||grad F||^2 below the constant-step floor",
          label="Theorem 5.3", status="verbatim", family="ds")
def check_theorem5_3(ctx: CheckContext) -> CheckResult:
    """Constant eta = 1/(6 L_F) vs eta_r = c/(r+1)^alpha (alpha = 0.6, c = 1/(6 L_F)), same seeds, sigma^2 > 0:
    E||grad F||^2 over the last 20% of rounds must fall below the constant-step plateau (paired replicas).
    Negative control: the decaying run against a tenth of the plateau."""
    prof = ctx.profile
    T = prof.rounds(int(prof.get("ds.theorem5_3", "T", 1200)))
    res = CheckResult("ds.theorem5_3")
    problem = fairness_instance(ctx.seed)
    B = float(problem.constants["B"].value)
    sigma2 = 0.5
    est = {"kind": "gaussian", "sigma2": sigma2}
    ctx.tick("theorem5.3 constant step")
    const = ds_record(problem, {"schedule": {"kind": "constant", "eta": _eta_max(problem)}, "solver": {"kind": "exact", "tol": 1e-10},
                                "estimator": est}, rounds=T, replicas=int(prof.replicas), seed=ctx.seed, B=B)
    ctx.tick("theorem5.3 decaying step")
    decay = ds_record(problem, {"schedule": _schedule_power(problem, 0.6), "solver": {"kind": "exact", "tol": 1e-10},
                                "estimator": est}, rounds=T, replicas=int(prof.replicas), seed=ctx.seed, B=B)
    a, b = _tail(decay), _tail(const)
    diff = a - b  # paired (common random numbers)
    floor_mean = float(b.mean())
    for scale, target in ((1.0, res.verdicts), (0.1, res.negatives)):
        m, lo, hi = mean_ci(diff + (1 - scale) * b, level=prof.level)  # E[a - scale b] <= 0
        status = "holds" if hi <= 0 else ("violated" if lo > 0 else "inconclusive")
        obs = float(a.mean())
        v = Verdict("ds.theorem5_3", f"fairness, sigma^2 = {sigma2}" + ("" if scale == 1 else ", plateau / 10"), obs, scale * floor_mean,
                    obs - (m - lo), obs + (hi - m), status, scale * floor_mean / obs if obs > 0 else float("inf"), False,
                    {"quantity": "E||grad F||^2 over the last 20% of rounds, decaying vs constant step (paired)", "T": T,
                     "constant_plateau": floor_mean, "decaying_tail": obs, "alpha": 0.6})
        target.append(v if scale == 1 else v.with_details(control="constant-step plateau / 10"))
    plot = Plot("theorem5_3", "DS FedProxGrad: E||grad F(x^r)||^2, constant vs decaying step", "round r", "E||grad F||^2")
    for name, rec in (("constant eta = 1/(6 L_F)", const), ("eta_r = c/(r+1)^0.6", decay)):
        mean, lo, hi = mean_ci(rec.g2.T, level=prof.level)
        plot.curves.append(Curve(name, list(range(len(mean))), mean.tolist(), np.maximum(lo, 1e-300).tolist(), hi.tolist()))
    res.plots.append(plot)
    # the derived constant-step floor 6 L_F sigma^2 eta (notes 1.6) beside the measured plateau
    vals = measured_constants(problem, const, sigma2=sigma2)
    res.tightness = {"constant_plateau": floor_mean, "decaying_tail": float(a.mean()),
                     "derived_sigma_floor_6LFsigma2eta": 6 * vals[S.L_F] * sigma2 * _eta_max(problem)}
    return res


def _past_condition_control(claim: str, problem, ctx: CheckContext, *, B: float, R: int, corollary: bool) -> Verdict:
    """Negative control for the averaged bounds: a constant step 60 times past 1/(6 L_F) (A4(iv)), exact local
    gradient steps (gamma = 0) and sigma^2 = 0, so the bound reduces to 4 Delta_0/(eta R): oscillating
    iterates keep ||grad F||^2 far above it (deterministic, exact verdict)."""
    eta = 60.0 * _eta_max(problem)
    zero = {"kind": "inject", "gamma": {"kind": "proportional", "c_gamma": 0.0}, "direction": "uphill"}
    est = {"kind": "gaussian", "sigma2": 0.0}
    if corollary:
        c = eta * np.sqrt(R)
        params = {"schedule": {"kind": "sqrt_horizon", "c": float(c), "R": R}, "solver": zero, "estimator": est}
    else:
        params = {"schedule": {"kind": "constant", "eta": eta}, "solver": zero, "estimator": est}
    rec = ds_record(problem, params, rounds=R, replicas=1, seed=ctx.seed, B=B)
    vals = measured_constants(problem, rec, sigma2=0.0)
    delta0 = float(rec.F[0, 0]) - float(problem.constants["F_star_lower"].value)
    Dsym = S.Delta_0
    if corollary:
        bound = evaluate(dc.corollary_ii_bound(Dsym), {**vals, S.c: float(c), S.c_gamma: 0.0, S.R: R, Dsym: delta0})
    else:
        bound = evaluate(dc.constant_step_bound(Dsym), {**vals, S.eta: eta, S.gamma_r: 0.0, S.R: R, Dsym: delta0})
    v = compare(claim, f"eta = 60/(6 L_F), R = {R}", np.array([float(rec.g2[:-1, 0].mean())]), np.array([bound]), exact=True)
    return v.with_details(control="step 60x past 1/(6 L_F) (sigma^2 = 0, gamma = 0)", eta=eta)


def _avg_grad(rec) -> np.ndarray:
    """Per-replica (1/R) sum_{r<R} ||grad F(x^r)||^2, shape (replicas,)."""
    return rec.g2[:-1].mean(axis=0)


@register("ds.corollary_ii", title="Corollary (ii): eta = c/sqrt(R) gives (1/R) sum E||grad F||^2 <= explicit O(1/sqrt(R))",
          label="Corollary 5.4 (ii)", status="derived", family="ds")
def check_corollary_ii(ctx: CheckContext) -> CheckResult:
    """Finite horizons R on a grid, eta = c/sqrt(R), c = sqrt(R_min)/(6 L_F) (so R >= R_min satisfies
    A4(iv)), injected error gamma_r = c_gamma eta_r (random direction), sigma^2 > 0; Delta_0 = F(x^0) - F_star_lower.
    Negative control: a step 60 times past A4(iv)."""
    prof = ctx.profile
    problem = fairness_instance(ctx.seed)
    B = float(problem.constants["B"].value)
    R_min = int(prof.get("ds.corollary_ii", "R_min", 100))
    Rs = [R_min * 4**k for k in range(int(prof.get("ds.corollary_ii", "grid", 2 if prof.name == "quick" else 3)))]
    c = np.sqrt(R_min) * _eta_max(problem)
    c_gamma, sigma2 = 1.0, SIGMA2
    res = CheckResult("ds.corollary_ii")
    obs_means, bounds = [], []
    samples, bnds = [], []
    for R in Rs:
        ctx.tick(f"corollary R={R}")
        params = {"schedule": {"kind": "sqrt_horizon", "c": float(c), "R": R},
                  "solver": {"kind": "inject", "gamma": {"kind": "proportional", "c_gamma": c_gamma}, "direction": "random"},
                  "estimator": {"kind": "gaussian", "sigma2": sigma2}}
        rec = ds_record(problem, params, rounds=R, replicas=int(prof.replicas), seed=ctx.seed, B=B)
        vals = measured_constants(problem, rec, sigma2=sigma2)
        delta0 = float(rec.F[0, 0]) - float(problem.constants["F_star_lower"].value)
        Dsym = S.Delta_0
        b = evaluate(dc.corollary_ii_bound(Dsym), {**vals, S.c: float(c), S.c_gamma: c_gamma, S.R: R, Dsym: delta0})
        hmin = evaluate(dc.corollary_ii_horizon_min, {**vals, S.c: float(c), S.c_gamma: c_gamma})
        if R < hmin:
            raise ValueError(f"corollary_ii: horizon R = {R} below the corollary's minimum {hmin:.3g}")
        samples.append(_avg_grad(rec))
        bnds.append(b)
        obs_means.append(float(_avg_grad(rec).mean()))
        bounds.append(b)
    S_ = np.stack(samples, axis=1)
    v = compare("ds.corollary_ii", f"fairness, R in {Rs}", S_, np.array(bnds), exact=False, level=prof.level,
                details={"c": float(c), "c_gamma": c_gamma, "sigma2": sigma2, "R": Rs, "avg": obs_means, "bound": bounds})
    res.verdicts.append(v)
    ctx.tick("corollary negative control")
    res.negatives.append(_past_condition_control("ds.corollary_ii", problem, ctx, B=B, R=Rs[0], corollary=True))
    res.plots.append(Plot("corollary_ii", "DS FedProxGrad Corollary (ii): (1/R) sum E||grad F||^2 vs bound", "R", "average",
                          [Curve("measured", Rs, obs_means), Curve("bound (26)", Rs, bounds, role="bound")], logx=True))
    return res


@register("ds.constant_step_floor",
          title="Constant step: (1/R) sum E||grad F||^2 <= 4 Delta_0/(eta R) + 6 L_F sigma^2 eta + 5 C_e K_e^2 gamma^2",
          label="Notes 1.6 (from Lemma 5.2)", status="derived", family="ds")
def check_constant_step_floor(ctx: CheckContext) -> CheckResult:
    """The constant-step run of ``ds.theorem5_3`` (exact prox: gamma = the largest measured gamma_emp)
    against the derived noise-floor bound at every horizon R on a grid. Negative control: a step 60 times past
    A4(iv)."""
    prof = ctx.profile
    T = prof.rounds(int(prof.get("ds.theorem5_3", "T", 1200)))
    problem = fairness_instance(ctx.seed)
    B = float(problem.constants["B"].value)
    sigma2 = 0.5
    eta = _eta_max(problem)
    params = {"schedule": {"kind": "constant", "eta": eta}, "solver": {"kind": "exact", "tol": 1e-10},
              "estimator": {"kind": "gaussian", "sigma2": sigma2}}
    rec = ds_record(problem, params, rounds=T, replicas=int(prof.replicas), seed=ctx.seed, B=B)
    vals = measured_constants(problem, rec, sigma2=sigma2)
    gamma = float(rec.gamma_emp.max())
    delta0 = float(rec.F[0, 0]) - float(problem.constants["F_star_lower"].value)
    Rs = np.unique(np.round(np.geomspace(10, T, 12)).astype(int))
    cums = np.cumsum(rec.g2[:-1], axis=0)  # (T, reps)
    samples = np.stack([cums[R - 1] / R for R in Rs], axis=1)
    Dsym = S.Delta_0
    expr = dc.constant_step_bound(Dsym)
    bound = np.array([evaluate(expr, {**vals, S.eta: eta, S.gamma_r: gamma, S.R: int(R), Dsym: delta0}) for R in Rs])
    res = CheckResult("ds.constant_step_floor")
    res.verdicts.append(compare("ds.constant_step_floor", f"fairness, eta = 1/(6 L_F), sigma^2 = {sigma2}", samples, bound, exact=False,
                                level=prof.level, details={"gamma": gamma, "eta": eta, "Delta_0": delta0}))
    res.negatives.append(_past_condition_control("ds.constant_step_floor", problem, ctx, B=B, R=100, corollary=False))
    m, lo, hi = mean_ci(samples, level=prof.level)
    res.plots.append(Plot("constant_step", "Constant step: (1/R) sum E||grad F||^2 vs derived bound", "R", "average",
                          [Curve("measured", Rs.tolist(), m.tolist(), lo.tolist(), hi.tolist()),
                           Curve("bound", Rs.tolist(), bound.tolist(), role="bound")],
                          logx=True))
    return res
