"""FedNMap's steps inside Theorem 5's printed conditions (fedbounds.checks.fednmap.inside) and the exact check."""

from __future__ import annotations

import pytest
from fedbounds.checks.fednmap.inside import SCOPE_INSIDE, SCOPE_OUTSIDE, SCOPE_PEP, inside_steps
from fedbounds.checks.verdicts.formulas import evaluate
from fedbounds.theory.core import symbols as S
from fedbounds.theory.fednmap import formulas as fm

CONST = {"L": 1.0, "rho": 0.1, "mu": 0.65, "sigma2": 1.0}


@pytest.mark.parametrize(("n", "Q"), [(1, 1), (8, 4), (256, 64)])
def test_printed_steps_satisfy_every_printed_condition(n, Q):
    """gamma, eta_hat = eta_s eta_a Q and eta_a at window m each meet Theorem 5's bound (evaluated from the theory),
    and eta_a is at its bound: the steps are the printed maxima, not merely below them."""
    st = inside_steps(**CONST, n=n, Q=Q, eps=0.01)
    v = {S.L: 1.0, S.rho: 0.1, S.Q: Q, S.m: st["m"], S.gamma: st["gamma"]}
    assert st["gamma"] == evaluate(fm.theorem5_gamma_max, v)
    assert st["eta_s"] * st["eta_a"] * Q == pytest.approx(st["eta_hat"], rel=1e-12)
    assert st["eta_hat"] <= evaluate(fm.theorem5_eta_hat_max, v) * (1 + 1e-12)
    assert st["eta_a"] == pytest.approx(evaluate(fm.theorem5_eta_a_max, v), rel=1e-12)
    assert st["scope"] == SCOPE_INSIDE and not st["cap_binds"]
    # the variance term of Theorem 8 at these steps is eps/3 or below (the rule's purpose)
    assert st["variance_bound"] <= 0.01 / 3 * (1 + 1e-9)


def test_eta_hat_grows_as_nQ_until_the_cap():
    a, b = inside_steps(**CONST, n=2, Q=4, eps=0.01), inside_steps(**CONST, n=16, Q=4, eps=0.01)
    assert b["eta_hat"] / a["eta_hat"] == pytest.approx(8.0, rel=1e-12)
    capped = inside_steps(**CONST, n=256, Q=64, eps=0.05)
    assert capped["cap_binds"] and capped["eta_hat"] == capped["eta_hat_cap"]
    uncapped = inside_steps(**CONST, n=256, Q=64, eps=0.05, cap=False)
    assert uncapped["eta_hat"] > uncapped["eta_hat_cap"] and uncapped["scope"] != SCOPE_INSIDE


def test_pep_steps_are_labelled_by_the_grid():
    on = inside_steps(**CONST, n=2, Q=2, eps=0.01, kind="pep")
    off = inside_steps(**CONST, n=4, Q=4, eps=0.01, kind="pep")
    base = inside_steps(**CONST, n=2, Q=2, eps=0.01)
    assert on["scope"] == SCOPE_PEP and off["scope"] == SCOPE_OUTSIDE
    assert on["eta_hat"] == pytest.approx(on["k"] * base["eta_hat"]) and on["eta_s"] == pytest.approx(1.0)


def test_the_check_holds_and_its_control_fires_for_its_reason():
    from fedbounds.checks.registry import CheckContext, get_check
    from fedbounds.checks.runtime.profiles import QUICK
    from fedbounds.checks.verdicts.controls import fires_for_its_reason

    res = get_check("fednmap.theorem8.complexity_inside").func(CheckContext(profile=QUICK, seed=0))
    v = res.verdicts[0]
    assert v.status == "holds" and v.exact and abs(v.observed + 1.0) < 1e-3
    (c,) = res.negatives
    assert c.status == "violated" and fires_for_its_reason(c)
    assert c.details["control_record"]["changed"] == "correction"


def test_the_verdict_fails_when_eta_hat_does_not_grow_with_n(monkeypatch):
    """Teeth: the same check with the step rule evaluated at n = 1 for every n (eta_hat grows with Q only) measures a
    slope near -0.5 in nQ and is violated."""
    import fedbounds.checks.fednmap.inside as inside
    from fedbounds.checks.registry import CheckContext, get_check
    from fedbounds.checks.runtime.profiles import QUICK

    original = inside.inside_steps
    monkeypatch.setattr(inside, "inside_steps", lambda **kw: original(**{**kw, "n": 1}))
    res = get_check("fednmap.theorem8.complexity_inside").func(CheckContext(profile=QUICK, seed=0))
    v = res.verdicts[0]
    assert v.status == "violated" and -0.7 < v.observed < -0.3
