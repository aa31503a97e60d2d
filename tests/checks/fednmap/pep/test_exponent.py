"""Theorem 8's exponent on the searched Lyapunov family at the printed steps (checks/fednmap/pep/exponent.py;
theory/fednmap/theorem8_c0.py ``exponent_ratio``; docs/fednmap-reconstruction.md §10.9).

The verdict logic runs on synthetic fronts with the certificate check and the live solve stubbed (their machinery is
the existence tables' and is tested there); two tests use the committed front itself: its largest rate re-verifies,
and a rate its certificates do not cover does not."""

from __future__ import annotations

import math
from typing import Any

import pytest
from fedbounds.checks.fednmap.pep import exponent as X
from fedbounds.checks.registry import CheckContext
from fedbounds.checks.runtime.profiles import QUICK
from fedbounds.checks.verdicts.controls import THEOREM, control_kind, counts_as_evidence, fires_for_its_reason
from fedbounds.checks.verdicts.scope import INSIDE, OUTSIDE
from fedbounds.theory.fednmap import theorem8_c0 as T8
from fedbounds.theory.registry import get_claim

CTX = CheckContext(profile=QUICK)
get_claim(X.EXPONENT)  # the claim's text is built from the committed table: load it before a test swaps the front
#: a front like the committed one: a member proved at tau_low, none at tau_high
FRONT = {"n": 2, "Q": 1, "m": 1, "rho": 0.1, "k": 1.0, "tau_low": 0.15625, "tau_high": 0.1875,
         "points": [{"tau": 0.140625, "status": "proved", "K": 2.9e-5}]}


@pytest.fixture
def front(monkeypatch: pytest.MonkeyPatch):
    """Install a synthetic front: ``front(fr, evidence, tau_p, unbounded)``; the certificate check returns
    (evidence, tau_p) and the live solve at tau_high reads ``unbounded`` (records each rate it was asked at)."""
    asked: list[float] = []

    def install(fr: dict[str, Any], evidence: str = "proved", tau_p: float | None = 0.15625, unbounded: bool = True) -> list[float]:
        monkeypatch.setattr(T8, "front", lambda: dict(fr))
        monkeypatch.setattr(X, "proved_rate", lambda f: (evidence, tau_p, {}))

        def live(f: dict[str, Any], tau: float) -> tuple[bool, dict[str, Any]]:
            asked.append(tau)
            return unbounded, {"status": "unbounded" if unbounded else "proved"}

        monkeypatch.setattr(X, "_unbounded", live)
        return asked
    return install


def test_the_theorem_s_tau_is_2_mu_over_9_from_the_sympy() -> None:
    # e8(0) = 2 eta_hat mu/9 at mu = 0.1: tau = 0.2/9, whatever the steps (eta_hat cancels)
    assert T8.theorem_tau(FRONT) == pytest.approx(0.2 / 9, rel=1e-12)
    assert X.theorem_tau(FRONT, 10.0) == pytest.approx(2.0 / 9, rel=1e-12)


def test_the_exponent_holds_with_its_room_and_bracket_inside_the_hypotheses(front) -> None:
    asked = front(FRONT)
    res = X.check_theorem8_exponent(CTX)
    (v,) = res.verdicts
    assert v.status == "holds" and v.details["evidence"] == "proved"
    assert v.observed == pytest.approx((0.2 / 9) / 0.15625)
    assert v.details["room"] == pytest.approx(0.15625 / (0.2 / 9))
    assert v.details["room_bracket"] == pytest.approx((0.15625 * 45, 0.1875 * 45))
    assert res.scope_info().kind == INSIDE  # the printed steps, C_0 = 0
    assert v.details["at"]["C_0"] == 0.0
    assert asked == [0.1875]  # one live solve, the control's


def test_a_10x_exponent_planted_past_tau_high_reads_violated(front) -> None:
    asked = front(FRONT)
    res = X.check_theorem8_exponent(CTX, scale=10.0)  # tau 2/9 = 0.222 > tau_high = 0.1875
    (v,) = res.verdicts
    assert v.status == "violated" and v.details["unbounded_at_tau_high"] is True
    assert asked[0] == 0.1875


def test_the_violation_needs_the_family_unbounded_at_tau_high(front) -> None:
    # the same 10x exponent where the live solve finds a member at tau_high: nothing decides, never "holds"
    front(FRONT, unbounded=False)
    (v,) = X.check_theorem8_exponent(CTX, scale=10.0).verdicts
    assert v.status == "inconclusive"


def test_between_the_front_s_ends_nothing_is_decided(front) -> None:
    front(FRONT)
    (v,) = X.check_theorem8_exponent(CTX, scale=7.5).verdicts  # 0.1667 in (tau_low, tau_high)
    assert v.status == "inconclusive" and v.observed > 1


@pytest.mark.parametrize("fr", [{}, {**FRONT, "tau_low": None}, {**FRONT, "tau_low": 0.0}], ids=["none", "no-tau-low", "zero"])
def test_an_undecided_front_gives_no_verdict(front, fr: dict[str, Any]) -> None:
    front(fr)
    res = X.check_theorem8_exponent(CTX)
    assert res.verdict == "inconclusive" and not res.negatives
    assert all(v.status == "inconclusive" and math.isnan(v.observed) for v in res.verdicts)
    assert any("no decided front" in n for n in res.notes)


def test_a_front_whose_certificates_do_not_reverify_reads_unknown(front) -> None:
    front(FRONT, evidence="unknown", tau_p=None)
    res = X.check_theorem8_exponent(CTX)
    (v,) = res.verdicts
    assert v.status == "inconclusive" and v.details["evidence"] == "unknown"


def test_the_control_is_the_exponent_at_tau_high_and_fires_for_it(front) -> None:
    front(FRONT)
    (ctrl,) = X.check_theorem8_exponent(CTX).negatives
    assert ctrl.status == "violated" and fires_for_its_reason(ctrl)
    assert control_kind(ctrl) == THEOREM and counts_as_evidence(ctrl)
    assert ctrl.details["control_record"]["changed"] == "exponent"
    assert ctrl.details["control_record"]["after"] == 0.1875


def test_the_control_cannot_fire_where_a_member_contracts_at_tau_high(front) -> None:
    front(FRONT, unbounded=False)
    (ctrl,) = X.check_theorem8_exponent(CTX).negatives
    assert ctrl.status != "violated"


def test_the_committed_front_s_largest_rate_reverifies_and_a_rate_off_its_certificates_does_not() -> None:
    fr = T8.front()
    if not fr.get("tau_low"):
        pytest.skip("no committed front")
    ev, tau, det = X.proved_rate(fr)
    assert ev == "proved" and tau == fr["tau_low"] and det["proof"]["status"] == "proved"
    off = {**fr, "tau_low": fr["tau_low"] * 1.001, "points": []}  # no stored certificate is of this PEP
    assert X.proved_rate(off)[0] == "unknown"


def test_the_claims_say_what_they_rest_on() -> None:
    c = get_claim(X.EXPONENT)
    assert c.depends_on == ("fednmap.theorem8",) and c.relation == "<="
    assert "C_0 = C_c = 1" not in c.title and "16x" not in c.title
    study = get_claim("fednmap.pep.shape_exponent")
    assert "fednmap.theorem8" not in study.depends_on and study.title.startswith("Study")
    assert "chosen" in study.provenance.note and "16 x" in study.provenance.note


@pytest.mark.slow  # the study's quick run: 7.3 s at load 1.7 (pytest --durations, 2026-12-04)
def test_the_shape_study_is_outside_whatever_its_certificates(quick_result) -> None:
    res = quick_result("fednmap.pep.shape_exponent")
    assert res.verdict == "holds" and res.scope_info().kind == OUTSIDE and res.verdict_shown == "holds*"
