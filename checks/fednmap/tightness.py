"""Tightness of the step-size conditions: the largest step at which a claim still held on an instance against
the largest the theorem allows, found by a doubling search (the paper's 1/100 factors make the ratio large).

* ``fednmap.theorem5.conditions`` (Theorem 5's conditions gamma <= 1/(5(rho+L)), eta_hat <= ..., eta_a <= ...
  [V], also used for Theorem 8): Theorem 8's bound (C_0 = 0, E[L_0] = psi gap + C_c correction heterogeneity at
  c_i,0 = 0, common.initial_lyapunov: a violation is never the psi-gap-only artefact) with exact gradients
  (sigma^2 = 0, deterministic, exact verdicts) on the Lasso instance, doubling eta_hat (eta_a at its maximum)
  and, separately, eta_a (eta_hat at its maximum, horizon T0/4). The horizon shrinks as eta_hat grows (eta_hat T fixed).

Verdict: the claim at the largest allowed step (factor 1), at rounds >= 1, which must hold; negative control: the
smallest factor at which it is violated without divergence (doubling, then bisection between the largest factor
that held and the first failure; a diverged run is recorded as such and never counts; a search that never fails
within the cap leaves the control inconclusive and says so). Tightness: largest factor that held (the ratio to the
theorem's maximum) and the smallest violating factor.
"""


from __future__ import annotations

from fedbounds.checks.fednmap.checks import _start, fednmap_run, theorem8_curve, theorem8_values
from fedbounds.checks.fednmap.common import checkpoints, make_instance, theorem5_parameters
from fedbounds.checks.registry import CheckContext, CheckResult, Curve, Plot, register
from fedbounds.checks.verdicts.scope import at_values
from fedbounds.checks.verdicts.search import MAX_DOUBLINGS, doubling_search, record_search
from fedbounds.checks.verdicts.verdict import Verdict, compare
from fedbounds.theory.core import symbols as S


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
    details = {"eta_hat": setup.eta_hat, "eta_a": setup.eta_a, "eta_hat_max": setup.eta_hat_max, "eta_a_max": setup.eta_a_max, "T": T,
               "at": at_values({**setup.values(), S.n: problem.n})}
    if traj.divergence is not None:
        d = traj.divergence
        return Verdict("fednmap.theorem5.conditions", name, float("inf"), float(bound[-1]), float("inf"), float("inf"), "violated", 0.0,
                       True, {**details, "diverged": f"round {d.round}: {d.reason}"})
    obs = traj.metrics["psi_gap"][ts, 0]
    v = compare("fednmap.theorem5.conditions", name, obs[1:], bound[1:], exact=True, details=details)
    return v.with_details(worst_round=int(ts[1 + v.details["worst_index"]]))


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
        record_search(res, tried, largest, what, plot, verdict_at=fn)
    held = {w: res.tightness[w]["largest_factor_that_held"] for w in ("eta_hat", "eta_a")}
    res.tightness["summary"] = f"held to eta_hat x{held['eta_hat']:g}, eta_a x{held['eta_a']:g}"
    plot.curves.append(Curve("slack 1", [1, 2**MAX_DOUBLINGS], [1.0, 1.0], role="bound"))
    res.plots.append(plot)
    res.notes.append("ratio = largest factor over the theorem's maximum at which Theorem 8's bound still held on the instance")
    res.scope_tag = "conditions probed"
    res.scope_caveat = "the verdict is at the printed maxima; the steps doubled past them are the tightness probe, not verdicts"
    return res


