"""FedNMap's checks have teeth (issue 12): the quick-profile worst-case search finds planted bugs (a bound divided
by twice its measured slack), its calibrated controls fire for their reason, the step-past-condition search
returns the smallest violation without divergence, and the speedup note states the real step ratios."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from fedbounds.checks.fednmap import worst
from fedbounds.checks.registry import CheckContext
from fedbounds.checks.runtime.profiles import QUICK
from fedbounds.checks.verdicts.controls import fires_for_its_reason, why_not
from fedbounds.checks.verdicts.search import smallest_violating_factor
from fedbounds.checks.verdicts.verdict import compare

SEARCHED = ("fednmap.theorem8", "fednmap.theorem8.floor", "fednmap.lyapunov", "fednmap.nat_nor_relation")
CTX = CheckContext(profile=QUICK, seed=0)


def _quick_search(claim: str, scale: float, seed: int):
    """The quick profile's search on ``claim`` with its bound times ``scale``, from a different seed and without
    the default experiment as a start (so it has to find the bug, not replay it)."""
    from fedbounds.checks.verdicts.adversarial import search_worst

    T_cap = int(QUICK.get(claim, "search_T_cap"))
    budget = int(QUICK.get(claim, "search_budget"))
    return search_worst(worst.objective(claim, T_cap=T_cap, scale=scale), worst.space(claim), budget=budget, seed=seed)


@pytest.mark.parametrize("claim", SEARCHED)
def test_quick_search_finds_a_bound_divided_by_twice_its_measured_slack(claim: str) -> None:
    T_cap = int(QUICK.get(claim, "search_T_cap"))
    measured = worst.objective(claim, T_cap=T_cap)(worst.default_start(claim))  # observed / bound = 1 / slack
    assert 0 < measured <= 1.0 + 1e-9, "the claim itself must hold on its default experiment"
    wc = _quick_search(claim, scale=measured / 2.0, seed=11)  # the bound divided by 2 x slack
    assert wc.ratio > 1.0, f"planted bug not found: worst ratio {wc.ratio} at {wc.point}"


@pytest.mark.parametrize("claim", SEARCHED)
def test_calibrated_control_at_the_worst_case_fires_for_its_reason(claim: str) -> None:
    wc = worst.search(claim, CTX)
    assert wc.evaluations == int(QUICK.get(claim, "search_budget"))
    v = worst.calibrated_at_worst(claim, wc, CTX)
    assert fires_for_its_reason(v), why_not(v)
    rec = v.details["control_record"]
    assert rec["changed"] in ("bound", "kappa") and rec["violated_at"] not in (None, 0)
    # the same comparison at the unscaled bound holds: the control fires because of the scale, nothing else
    assert wc.ratio <= 1.0 + 1e-9


def test_tightness_record_can_rebuild_the_worst_case() -> None:
    # a short search (8 runs of at most 4000 rounds, not the quick profile's 60 of 20000): the record is what is tested
    small = replace(QUICK, name="record-test", per_check={"fednmap.theorem8": {"search_budget": 8, "search_T_cap": 4000}})
    wc = worst.search("fednmap.theorem8", CheckContext(profile=small, seed=0))
    rec = worst.tightness_record(wc, quantity="q", T_cap=4000, slack_before=100.0)
    assert rec["worst_ratio"] == wc.ratio and rec["seed"] == 0 and rec["evaluations"] == wc.evaluations == 8
    again = worst.objective("fednmap.theorem8", T_cap=4000)(rec["instance"])
    assert again == pytest.approx(wc.ratio, rel=1e-12)


def _synthetic(f: float):
    """A claim violated from f = 37 on, and a run that diverges from f = 300 on."""
    value = 2.0 if f >= 37 else 0.5
    v = compare("c", f"x{f:g}", [value], [1.0], exact=True)
    return v.with_details(diverged="overflow") if f >= 300 else v


def test_smallest_violating_factor_bisects_to_the_threshold_without_divergence() -> None:
    f, v, tried = smallest_violating_factor(_synthetic, refine=6)
    assert v is not None and v.violated and not v.details.get("diverged")
    assert 37 <= f < 37 * 2 ** (1 / 32)
    assert [t[0] for t in tried[:6]] == [2, 4, 8, 16, 32, 64]


def test_smallest_violating_factor_never_returns_a_diverged_run() -> None:
    def only_diverges(f: float):
        return _synthetic(max(f, 300.0)) if f >= 300 else compare("c", "x", [0.5], [1.0], exact=True)

    f, v, tried = smallest_violating_factor(only_diverges, refine=3)
    assert f is None and v is None and any(t[2] for t in tried)


def test_speedup_note_states_the_real_step_ratios() -> None:
    from fedbounds.checks.fednmap.common import make_instance
    from fedbounds.checks.fednmap.speedup import SPEEDUP_SETUP, step_ratio_note, step_ratios

    cfg = SPEEDUP_SETUP
    base = make_instance("lasso", n=cfg["n0"], seed=0, heterogeneity=cfg["heterogeneity"], hessian_het=cfg["hessian_het"])
    c = base.constants
    from fedbounds.checks.fednmap.common import theorem5_parameters

    eh0 = cfg["eta_hat_factor"] * theorem5_parameters(c["L"].value, c["rho"].value, Q=2, m=1).eta_hat
    ratios = step_ratios(c["L"].value, c["rho"].value, eh0, [(1, 2), (4, 2), (1, 8)])
    note = step_ratio_note(ratios)
    ea = float(re.search(r"eta_a (\d+)x", note).group(1))
    assert ea > 100, "the sweep's eta_a = 0.2/Q is two orders past Theorem 5's bound (the audit measured 222x), not 4x"
    assert "eta_hat 4x to 16x" in note  # eta_hat = 4 eta_hat_max n Q/(n0 Q0): 4x at the base, 16x at nQ = 16


def test_a_theorem8_violation_at_c0_zero_is_not_implied() -> None:
    """C_0 = 0 is our choice (Theorem 8's C_0 is lost; psi alone is no Lyapunov function): a violation there is read
    as inconclusive with the reason, never VIOLATED (it was before); at C_0 = 1 a violation stays one."""
    import numpy as np
    from fedbounds.checks.fednmap.checks import not_implied_at_c0

    bad = compare("fednmap.theorem8", "ridge", np.array([1.0, 3.0]), np.array([2.0, 2.0]), exact=True)
    at0 = not_implied_at_c0(bad.with_details(C_0=0.0))
    assert at0.status == "inconclusive" and "not implied" in at0.details["not_implied"]
    assert at0.details["computed_status"] == "violated" and "C_0 = 0" in at0.details["not_implied"]
    assert not_implied_at_c0(bad.with_details(C_0=1.0)).status == "violated"
    ok = compare("fednmap.theorem8", "ridge", np.array([1.0]), np.array([2.0]), exact=True).with_details(C_0=0.0)
    assert not_implied_at_c0(ok).status == "holds"


def test_lyapunov_is_decided_exactly_on_the_linear_gaussian_twin() -> None:
    """fednmap.lyapunov read inconclusive (32 replicas against a per-window decrease of ~1e-5): its row is now the
    window claim on exact moments of the ridge instance, which agree with 4000 Monte Carlo replicas (z < 4) and give
    an exact verdict (holds or violated, never inconclusive)."""
    import numpy as np
    from fedbounds.checks.fednmap import lyapunov as ly
    from fedbounds.checks.fednmap.checks import SIGMA2
    from fedbounds.checks.fednmap.common import make_instance, theorem5_parameters, theorem8_start

    problem = make_instance("ridge", seed=0)
    setup = theorem5_parameters(problem.constants["L"].value, problem.constants["rho"].value, Q=2, m=ly.WINDOW)
    params = setup.params(z0=theorem8_start(problem, setup.gamma, 1.0, 0).z0)
    EL = ly.exact_lyapunov(problem, params, rounds=40, sigma2=SIGMA2, gamma=setup.gamma, C0=1.0, Cc=1.0)
    L = ly.lyapunov_values(ly.lyapunov_run(problem, params, rounds=40, replicas=4000, seed=5, sigma2=SIGMA2), setup.gamma, 1.0, 1.0)
    z = (L.mean(axis=1) - EL)[1:] / (L.std(axis=1)[1:] / np.sqrt(L.shape[1]))
    assert np.max(np.abs(z)) < 4.0, z
    # the correction term matters: with C_c = 0 the exact E[L_t] differs (the check reads the c-slice of the state)
    EL0 = ly.exact_lyapunov(problem, params, rounds=40, sigma2=SIGMA2, gamma=setup.gamma, C0=1.0, Cc=0.0)
    assert np.max(np.abs(EL - EL0)) > 1e-3
    v = ly.exact_row(CTX, 1.0, 1.0, 300)
    assert v.exact and v.status in ("holds", "violated") and v.details["exact"]
