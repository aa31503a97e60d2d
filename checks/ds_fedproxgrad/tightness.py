"""Tightness of the step-size conditions: the largest step at which a claim still held on an instance against
the largest the theorem allows, found by a doubling search (the paper's 1/100 factors make the ratio large).

* ``ds.assumption.small_step`` (A4(iv), eta_r <= 1/(6 L_F) [A]): Lemma 5.2's per-round inequality from r_0 on,
  deterministic (exact local gradient steps, gamma_r = 0, so Xi_r = 0 and any gain from a larger step could
  only come from the descent itself), doubling c in eta_r = c/(r+1)^0.6.

Verdict: the claim at the largest allowed step (factor 1), which must hold; negative control: only c changed,
by the smallest factor at which the inequality is violated without divergence (doubling, then 4 bisections on
log c between the largest factor that held and the first failure; a diverged run never counts; a search that
never fails within the cap leaves the control inconclusive and says so). Tightness: largest factor that held
(the ratio to the theorem's maximum). This is the DS family's step-past-its-condition control: in the checks of
``ds.lemma5_2`` the inexactness gamma_r = c_gamma eta_r (or the exact prox's gamma ~ L_f eta) is absorbed only
once eta_r <= 1/(sqrt(10) B c_gamma), so the rounds r >= r_0 that Lemma 5.2 speaks about never see a step far
past 1/(6 L_F); here gamma_r = 0 and every round counts.
"""


from __future__ import annotations

from fedbounds.checks.ds_fedproxgrad.checks import _eta_max, lemma5_2_verdict
from fedbounds.checks.ds_fedproxgrad.common import ds_record, fairness_instance
from fedbounds.checks.registry import CheckContext, CheckResult, Curve, Plot, register
from fedbounds.checks.verdicts.scope import scope_of
from fedbounds.checks.verdicts.search import doubling_search, record_search
from fedbounds.checks.verdicts.verdict import Verdict


def _lemma52_at(ctx: CheckContext, factor: float, T: int) -> Verdict:
    problem = fairness_instance(ctx.seed)
    inject = {"kind": "inject", "gamma": {"kind": "proportional", "c_gamma": 0.0}, "direction": "uphill"}
    params = {"schedule": {"kind": "power", "c": factor * _eta_max(problem), "alpha": 0.6}, "solver": inject,
              "estimator": {"kind": "gaussian", "sigma2": 0.0}}
    rec = ds_record(problem, params, rounds=T, replicas=1, seed=ctx.seed, B=float(problem.constants["B"].value))
    name = f"fairness, sigma^2 = 0, gamma = 0, c = {factor:g}/(6 L_F)"
    if rec.diverged:
        return Verdict("ds.assumption.small_step", name, float("inf"), float("nan"), float("inf"), float("inf"), "violated", 0.0, True,
                       {"diverged": rec.diverged})
    v, _ = lemma5_2_verdict("ds.assumption.small_step", name, problem, rec, sigma2=0.0, level=ctx.profile.level, exact=True,
                            rounds=slice(1, rec.rounds) if factor > 1 else None, extra={"factor": factor})
    return v


@register("ds.assumption.small_step", title="A4(iv) eta_r <= 1/(6 L_F): largest step at which Lemma 5.2 still held vs allowed",
          label="Assumption 4(iv)", status="verbatim", family="ds")
def check_ds_small_step(ctx: CheckContext) -> CheckResult:
    """Doubling search on c in eta_r = c/(r+1)^0.6 from c = 1/(6 L_F) (see the module docstring). Past the
    condition every round from r = 1 on is checked (r_0 is a notion of the proof under the condition; round 0 is
    left out so that the control's violation is located where the controls' rule counts it)."""
    T = ctx.profile.rounds(int(ctx.profile.get("ds.assumption.small_step", "T", 150)))
    res = CheckResult("ds.assumption.small_step")
    plot = Plot("small_step", "Lemma 5.2 slack (Phi*/Phi) as eta is doubled past 1/(6 L_F)", "factor over 1/(6 L_F)", "slack", logx=True)
    ctx.tick("doubling eta")
    tried, largest = doubling_search(lambda f: _lemma52_at(ctx, f, T), max_doublings=8)
    record_search(res, tried, largest, "eta", plot, verdict_at=lambda f: _lemma52_at(ctx, f, T), refine=4)
    eta = res.tightness["eta"]
    res.tightness["summary"] = (f"held to x{eta['largest_factor_that_held']:g}; smallest violation x{eta['smallest_violating_factor']:.3g}"
                                if eta.get("smallest_violating_factor") else f"held to x{eta['largest_factor_that_held']:g}")
    plot.curves.append(Curve("slack 1", [1, 2**8], [1.0, 1.0], role="bound"))
    res.plots.append(plot)
    # A4(iv) is the condition probed, so the scope is Lemma 5.2's hypotheses (A4(iv) among them) at the verdict's steps
    res.scope = scope_of("ds.lemma5_2", res.verdicts, tag="A4(iv) probed",
                         caveat="the verdict is at the printed maximum; the steps doubled past A4(iv) are the tightness probe")
    return res
