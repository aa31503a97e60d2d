"""ds.theorem5_3 (issue 22, item 3): the finite-horizon form (24)-(25) exactly on a deterministic run, its rate as a
verdict, the Robbins-Monro control (theorem kind) and the worst-case search of the form."""

from __future__ import annotations

import pytest
from fedbounds.checks.ds_fedproxgrad import checks as dsc
from fedbounds.checks.registry import CheckContext, get_check
from fedbounds.checks.runtime.profiles import QUICK
from fedbounds.checks.verdicts.controls import counts_as_evidence

T = 1200


def _run(alpha: float = 0.6, c_frac: float = 1.0):
    return dsc._decaying_run({**dsc._THM53_DEFAULT, "sigma2": 0.0, "alpha": alpha, "c_frac": c_frac}, 0, 1, T)


def test_finite_horizon_form_is_exact_on_a_deterministic_run_and_can_fail() -> None:
    problem, rec = _run()
    v = dsc.thm53_sum_form(problem, rec, 0.0, 0.95)
    assert v.exact and v.status == "holds"
    worst = max(v.details["ratio_lhs_over_rhs"])
    assert 0.005 < worst < 0.1  # loose: the form's room on the default instance (reported as loose x1/worst)
    # the constant 4 printed as 4 * worst (less than its measured room): violated at a horizon, exactly
    bad = dsc.thm53_sum_form(problem, rec, 0.0, 0.95, scale=0.5 * worst)
    assert bad.status == "violated" and bad.exact


def test_rate_verdict_holds_on_the_claims_schedule_and_fails_outside_robbins_monro() -> None:
    _, rec = _run()
    ok = dsc.thm53_slope_verdict(rec, alpha_claim=0.6, label="default")
    assert ok.status == "holds" and ok.exact and ok.details["slope"] < -0.3
    _, rec_rm = _run(alpha=dsc.THM53_RM_ALPHA)  # sum eta_r < infinity: the weighted average stops decaying
    bad = dsc.thm53_slope_verdict(rec_rm, alpha_claim=0.6, label="RM violated")
    assert bad.status == "violated" and bad.details["slope"] > -0.05


@pytest.mark.slow
def test_check_has_exact_rate_rows_a_theorem_control_and_a_search_of_the_form() -> None:
    res = get_check("ds.theorem5_3").func(CheckContext(profile=QUICK, seed=0))
    assert [v.exact for v in res.verdicts] == [False, True, True] and all(v.status == "holds" for v in res.verdicts)
    theorem = [v for v in res.negatives if v.details["control_record"]["changed"] == "alpha"]
    assert theorem and all(counts_as_evidence(v) for v in theorem)
    s = res.tightness["search"]
    assert s["evaluations"] >= 6 and s["worst_ratio"] >= max(res.verdicts[0].details["ratio_lhs_over_rhs"]) * 0.5
    assert "proxy_search" not in res.tightness and res.tightness["proxy"]["status"] in ("holds", "violated", "inconclusive")
