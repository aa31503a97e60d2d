"""Tightness of the step-size conditions: the largest step at which a claim still held on an instance against
the largest the theorem allows, found by a doubling search (the paper's 1/100 factors make the ratio large).

* ``fednmap.theorem5.conditions`` (Theorem 5's conditions gamma <= 1/(5(rho+L)), eta_hat <= ..., eta_a <= ...
  [V], also used for Theorem 8): Theorem 8's bound (C_0 = 0, E[L_0] = psi(x_0) - psi*) with exact gradients
  (sigma^2 = 0, deterministic, exact verdicts) on the Lasso instance, doubling eta_hat (eta_a at its maximum)
  and, separately, eta_a (eta_hat at its maximum, horizon T0/4). The horizon shrinks as eta_hat grows (eta_hat T fixed).
* ``ds.assumption.small_step`` (A4(iv), eta_r <= 1/(6 L_F) [A]): Lemma 5.2's per-round inequality from r_0 on,
  deterministic (exact local gradient steps, gamma_r = 0, so Xi_r = 0 and any gain from a larger step could
  only come from the descent itself), doubling c in eta_r = c/(r+1)^0.6.

Verdict: the claim at the largest allowed step (factor 1), which must hold; negative control: the first
factor at which it failed (must be violated; a search that never fails within the cap leaves the control
inconclusive and says so). Tightness: largest factor that held (the ratio to the theorem's maximum).
"""

from __future__ import annotations

from collections.abc import Callable

from fedbounds.checks.core.verdict import INCONCLUSIVE, Verdict, compare
from fedbounds.checks.ds_fedproxgrad.checks import _eta_max, lemma5_2_verdict
from fedbounds.checks.ds_fedproxgrad.common import ds_record, fairness_instance
from fedbounds.checks.fednmap.checks import _start, fednmap_run, theorem8_curve, theorem8_values
from fedbounds.checks.fednmap.common import checkpoints, make_instance, theorem5_parameters
from fedbounds.checks.registry import CheckContext, CheckResult, Curve, Plot, register

#: the doubling search stops after this many doublings (factor 2^MAX_DOUBLINGS)
MAX_DOUBLINGS = 14


def doubling_search(verdict_at: Callable[[float], Verdict],
                    max_doublings: int = MAX_DOUBLINGS) -> tuple[list[tuple[float, Verdict]], float]:
    """Evaluate ``verdict_at(2^k)`` for k = 0, 1, ... until a verdict is not ``holds`` (or the cap); returns the
    tried (factor, verdict) pairs and the largest factor that held (0 if factor 1 did not)."""
    tried: list[tuple[float, Verdict]] = []
    largest = 0.0
    for k in range(max_doublings + 1):
        f = float(2**k)
        v = verdict_at(f)
        tried.append((f, v))
        if not v.holds:
            break
        largest = f
    return tried, largest


def _theorem8_at(ctx: CheckContext, *, eta_hat_frac: float, eta_a_frac: float, T0: int, T_fixed: int | None = None) -> Verdict:
    problem = make_instance("lasso", seed=ctx.seed)
    c = problem.constants
    setup = theorem5_parameters(c["L"].value, c["rho"].value, Q=2, m=1, frac=eta_hat_frac, eta_a_frac=eta_a_frac)
    z0, EL0 = _start(problem, setup.gamma, 1.0, ctx.seed)
    T = T_fixed if T_fixed is not None else max(20, int(T0 / eta_hat_frac))
    traj = fednmap_run(problem, setup.params(z0=z0), rounds=T, replicas=1, seed=ctx.seed, sigma2=0.0, metrics=("psi_gap",))
    ts = checkpoints(T, 40)
    bound = theorem8_curve(theorem8_values(problem, setup, sigma2=0.0, EL0=EL0), ts)
    name = f"lasso, sigma^2 = 0, eta_hat x{eta_hat_frac:g}, eta_a x{eta_a_frac:g}"
    details = {"eta_hat": setup.eta_hat, "eta_a": setup.eta_a, "eta_hat_max": setup.eta_hat_max, "eta_a_max": setup.eta_a_max, "T": T}
    if traj.divergence is not None:
        d = traj.divergence
        return Verdict("fednmap.theorem5.conditions", name, float("inf"), float(bound[-1]), float("inf"), float("inf"), "violated", 0.0,
                       True, {**details, "diverged": f"round {d.round}: {d.reason}"})
    obs = traj.metrics["psi_gap"][ts, 0]
    return compare("fednmap.theorem5.conditions", name, obs, bound, exact=True, details=details)


def _record_search(res: CheckResult, tried: list[tuple[float, Verdict]], largest: float, what: str, plot: Plot) -> None:
    res.verdicts.append(tried[0][1].with_details(search=what, factor=1.0))
    last_f, last_v = tried[-1]
    if last_v.holds:
        ctrl = Verdict(last_v.claim_id, f"{what}: no failure up to x{last_f:g}", last_v.observed, last_v.bound, last_v.ci_low,
                       last_v.ci_high, str(INCONCLUSIVE), last_v.slack, last_v.exact, {**last_v.details, "search": what})
    else:
        ctrl = last_v
    res.negatives.append(ctrl.with_details(control=f"{what} doubled to x{last_f:g} (first failure of the doubling search)"))
    res.tightness[what] = {"largest_factor_that_held": largest, "first_failure": None if last_v.holds else last_f,
                           "tried": [[f, v.status, v.slack] for f, v in tried]}
    plot.curves.append(Curve(what, [f for f, _ in tried], [max(v.slack, 1e-12) if v.slack == v.slack else 1e-12 for _, v in tried]))


@register("fednmap.theorem5.conditions", title="Theorem 5's step-size conditions: largest steps at which Theorem 8 still held vs allowed",
          label="Theorem 5 (conditions)", status="verbatim", family="fednmap")
def check_fednmap_conditions(ctx: CheckContext) -> CheckResult:
    """Doubling search on eta_hat and on eta_a (see the module docstring)."""
    T0 = ctx.profile.rounds(int(ctx.profile.get("fednmap.theorem5.conditions", "T0", 1000)))
    res = CheckResult("fednmap.theorem5.conditions")
    plot = Plot("conditions", "Theorem 8 slack (sigma = 0) as steps are doubled past Theorem 5's maxima", "factor over the maximum",
                "worst slack", logx=True)
    for what, fn in (("eta_hat", lambda f: _theorem8_at(ctx, eta_hat_frac=f, eta_a_frac=1.0, T0=T0)),
                     ("eta_a", lambda f: _theorem8_at(ctx, eta_hat_frac=1.0, eta_a_frac=f, T0=T0, T_fixed=T0 // 4))):
        ctx.tick(f"doubling {what}")
        tried, largest = doubling_search(fn)
        _record_search(res, tried, largest, what, plot)
    plot.curves.append(Curve("slack 1", [1, 2**MAX_DOUBLINGS], [1.0, 1.0], role="bound"))
    res.plots.append(plot)
    res.notes.append("ratio = largest factor over the theorem's maximum at which Theorem 8's bound still held on the instance")
    return res


def _lemma52_at(ctx: CheckContext, factor: float, T: int) -> Verdict:
    problem = fairness_instance(ctx.seed)
    inject = {"kind": "inject", "gamma": {"kind": "proportional", "c_gamma": 0.0}, "direction": "uphill"}
    params = {"schedule": {"kind": "power", "c": factor * _eta_max(problem), "alpha": 0.6}, "solver": inject,
              "estimator": {"kind": "gaussian", "sigma2": 0.0}}
    rec = ds_record(problem, params, rounds=T, replicas=1, seed=ctx.seed, B=float(problem.constants["B"].value))
    name = f"fairness, sigma^2 = 0, gamma = 0, c = {factor:g}/(6 L_F)"
    if rec.diverged and rec.rounds < 2:
        return Verdict("ds.assumption.small_step", name, float("inf"), float("nan"), float("inf"), float("inf"), "violated", 0.0, True,
                       {"diverged": rec.diverged})
    v, _ = lemma5_2_verdict("ds.assumption.small_step", name, problem, rec, sigma2=0.0, level=ctx.profile.level, exact=True,
                            rounds=slice(0, rec.rounds) if factor > 1 else None, extra={"factor": factor})
    return v


@register("ds.assumption.small_step", title="A4(iv) eta_r <= 1/(6 L_F): largest step at which Lemma 5.2 still held vs allowed",
          label="Assumption 4(iv)", status="verbatim", family="ds")
def check_ds_small_step(ctx: CheckContext) -> CheckResult:
    """Doubling search on c in eta_r = c/(r+1)^0.6 from c = 1/(6 L_F) (see the module docstring). Past the
    condition every round is checked (r_0 is a notion of the proof under the condition)."""
    T = ctx.profile.rounds(int(ctx.profile.get("ds.assumption.small_step", "T", 150)))
    res = CheckResult("ds.assumption.small_step")
    plot = Plot("small_step", "Lemma 5.2 slack (Phi*/Phi) as eta is doubled past 1/(6 L_F)", "factor over 1/(6 L_F)", "slack", logx=True)
    ctx.tick("doubling eta")
    tried, largest = doubling_search(lambda f: _lemma52_at(ctx, f, T), max_doublings=8)
    _record_search(res, tried, largest, "eta", plot)
    plot.curves.append(Curve("slack 1", [1, 2**8], [1.0, 1.0], role="bound"))
    res.plots.append(plot)
    return res
