"""The rooms of Theorem 8's 36 and 12100 on the searched Lyapunov function at the printed steps
(checks/fednmap/spep/constants_check.py; theory/fednmap/theorem8_c0.py ``needed``; docs/fednmap-reconstruction.md §10.9).

Rows are synthetic (the committed table's re-verification is ``fedbounds check``'s job): a K placed so that the floor
K/r sits a known amount above one printed term, so each verdict's needed constant is known by hand."""

from __future__ import annotations

import math
from typing import Any

import pytest
from fedbounds.checks.fednmap.spep import constants_check as CC
from fedbounds.checks.fednmap.spep import existence_check
from fedbounds.checks.registry import CheckContext
from fedbounds.checks.runtime.profiles import QUICK
from fedbounds.checks.verdicts.controls import MACHINERY, THEOREM, control_kind, counts_as_evidence
from fedbounds.checks.verdicts.scope import INSIDE
from fedbounds.theory.core.evaluate import evaluate
from fedbounds.theory.fednmap import formulas as fm
from fedbounds.theory.fednmap import theorem8_c0 as T8
from fedbounds.theory.registry import get_claim

get_claim(CC.C36)  # the claims' texts are built from the committed table: load them before a test swaps it


def _row(n: int, Q: int, C_0: float | None = 0.0) -> dict[str, Any]:
    return {"n": n, "Q": Q, "m": 1, "rho": 0.1, "gamma_rho": 0.1 / 5.5, "C_0_min": C_0, "C_0_low": 0.0, "K": None,
            "probes": [] if C_0 is None else [{"C_0": C_0, "status": "proved", "K": None, "proof": {"target": "value"}}]}


def _K(r: dict[str, Any], floor: float) -> float:
    """The K whose floor K/e8(C_0) is ``floor`` (per sigma^2) at the row's printed steps."""
    v = T8.row_values(r)
    return floor * evaluate(fm.theorem8_rate_exponent, v)


def _terms(r: dict[str, Any]) -> tuple[float, float]:
    v = T8.row_values(r)
    return evaluate(fm.theorem8_variance, v), evaluate(fm.theorem8_drift, v)


@pytest.fixture
def table(monkeypatch: pytest.MonkeyPatch):
    """Install synthetic rows: ``table(rows_with_K)``, each row's re-verified K its "K", its evidence "proved" (or
    "unknown", K None, where the row says ``"reverifies": False``)."""
    def install(rows: list[dict[str, Any]]) -> None:
        monkeypatch.setattr(T8, "table", lambda: {"rows": rows, "point": {"L": 1.0, "mu": 0.1}})

        def reverified(r: dict[str, Any]) -> tuple[str, float | None, dict[str, Any], float | None]:
            return ("unknown", None, {}, None) if r.get("reverifies") is False else ("proved", None, {}, r["K"])

        monkeypatch.setattr(existence_check, "reverified", reverified)
    return install


def test_the_needed_36_is_what_the_12100_term_leaves_in_units_of_sigma2_over_m_n_mu_Q() -> None:
    # at n = Q = m = 1, mu = 0.1 the 36-term is 36 * 10: a floor 180 above the 12100-term needs 36 -> 18, and 12100
    # nothing (the 36-term alone, 360, covers it)
    r = _row(1, 1)
    t36, t121 = _terms(r)
    assert t36 == pytest.approx(360.0)
    got = T8.needed(r, _K(r, t121 + 180.0))
    assert got["needed_36"] == pytest.approx(18.0) and got["ratio_36"] == pytest.approx(0.5)
    assert got["needed_12100"] == 0 and got["ratio_12100"] == 0
    # a floor 0.5 x the 12100-term above the 36-term: 12100 -> 6050 needed, 36 -> 36 + 0.5 * 12100-term / 10
    got = T8.needed(r, _K(r, t36 + 0.5 * t121))
    assert got["needed_12100"] == pytest.approx(6050.0) and got["ratio_12100"] == pytest.approx(0.5)
    assert T8.needed(r, None) is None and T8.needed({**r, "C_0_min": None}, 1e-6) is None  # undecided: no number


def test_a_36_planted_98x_too_small_reads_violated_where_the_room_is_below_98(table) -> None:
    """Control of the verdict itself, changed: the printed 36 (-> 36/98). At a row needing 18 (room 2) the planted
    constant reads violated; at a row needing 36/1e4 (room 1e4) it still holds: the verdict resolves what the room
    says, no finer."""
    tight, loose = _row(1, 1), _row(2, 1)
    tight["K"] = _K(tight, _terms(tight)[1] + 180.0)
    loose["K"] = _K(loose, _terms(loose)[1] + 36e-4 * 5.0)  # unit sigma^2/(n mu Q) = 5 at n = 2
    table([tight, loose])
    ctx = CheckContext(profile=QUICK)
    printed = CC._constant_check(ctx, CC.C36, "36")
    assert [v.status for v in printed.verdicts] == ["holds", "holds"]
    assert [v.observed for v in printed.verdicts] == pytest.approx([0.5, 1e-4])
    planted = CC._constant_check(ctx, CC.C36, "36", constants={"36": 36 / 98})
    assert [v.status for v in planted.verdicts] == ["violated", "holds"]
    assert planted.verdicts[0].observed == pytest.approx(49.0)


def test_a_12100_planted_too_small_reads_violated_where_the_36_term_does_not_pay(table) -> None:
    r = _row(1, 1)
    t36, t121 = _terms(r)
    r["K"] = _K(r, t36 + 0.5 * t121)  # needed 12100: 6050
    table([r])
    ctx = CheckContext(profile=QUICK)
    assert CC._constant_check(ctx, CC.C12100, "12100").verdicts[0].status == "holds"
    bad = CC._constant_check(ctx, CC.C12100, "12100", constants={"12100": 12100 / 4}).verdicts[0]
    assert bad.status == "violated" and bad.observed == pytest.approx(2.0)


def test_an_undecided_row_gives_no_verdict_and_an_unverified_one_never_holds(table) -> None:
    undecided = _row(2, 2, None)
    unverified = {**_row(2, 1), "reverifies": False}
    unverified["K"] = _K(unverified, 1e-3)  # would hold by miles, if its certificate re-verified
    table([undecided, unverified])
    for claim, which in ((CC.C36, "36"), (CC.C12100, "12100")):
        res = CC._constant_check(CheckContext(profile=QUICK), claim, which)
        assert len(res.verdicts) == 1 and res.verdicts[0].status == "inconclusive"
        assert math.isnan(res.verdicts[0].observed)
        assert any("n=2 Q=2" in n and "no verdict" in n for n in res.notes)
        assert res.verdict != "holds"


def test_the_controls_fire_for_their_reason_and_only_36_s_counts(table) -> None:
    """36 -> 0: violated at the row where the 12100-term alone does not pay (a theorem control, counted). 12100's
    control drops the 36-term too: it can fire, but says nothing of 12100 (machinery, never counted)."""
    r = _row(1, 1)
    r["K"] = _K(r, 1.1 * _terms(r)[1])  # 10% above the 12100-term: some 36 needed, 12100 not
    table([r])
    ctx = CheckContext(profile=QUICK)
    c36 = CC._constant_check(ctx, CC.C36, "36")
    assert c36.verdicts[0].status == "holds" and c36.verdicts[0].details["needed"]["needed_12100"] == 0
    (neg,) = c36.negatives
    assert control_kind(neg) == THEOREM and counts_as_evidence(neg) and math.isinf(neg.observed)
    (neg,) = CC._constant_check(ctx, CC.C12100, "12100").negatives
    assert control_kind(neg) == MACHINERY and not counts_as_evidence(neg)
    assert neg.violated and neg.observed == pytest.approx(1.1)
    # where the 12100-term alone pays (the floor below it), dropping 36 cannot fire: no control, and a note says why
    r["K"] = _K(r, 0.5 * _terms(r)[1])
    res = CC._constant_check(ctx, CC.C36, "36")
    assert not res.negatives and any(n.startswith("no control") for n in res.notes)


def test_the_verdicts_are_inside_the_printed_steps_and_name_their_evidence(table) -> None:
    r = _row(2, 1)
    r["K"] = _K(r, 0.2)
    table([r])
    res = CC._constant_check(CheckContext(profile=QUICK), CC.C36, "36")
    assert res.scope_info().kind == INSIDE, res.scope_info().text
    assert "[proved]" in res.verdicts[0].instance and "C_0=0" in res.verdicts[0].instance
    assert "not caught" in res.notes[-1]


def test_the_shape_study_is_outside_and_not_a_verdict_on_theorem8() -> None:
    """lyapunov_windows runs our shape at chosen (C_0, C_c) and 16x the steps: its scope is ``outside`` even where the
    PEP-certified steps cover 16x (it read ``certified`` before), and its claim rests on no Theorem 8 claim."""
    from fedbounds.checks.fednmap.spep import family
    from fedbounds.checks.registry import CheckResult
    from fedbounds.checks.verdicts.scope import CERTIFIED, OUTSIDE, scope_of
    from fedbounds.checks.verdicts.verdict import Verdict

    v = Verdict(claim_id=family.WINDOWS, instance="x", observed=0.01, bound=1.0, ci_low=0.01, ci_high=0.01, status="holds",
                slack=100.0, exact=True, details={"at": family._at(2, 1, 1.0, 1e-3)})
    res = CheckResult(family.WINDOWS, verdicts=[v], scope_tag="chosen: C_0=1, C_c=0.001, steps 16x printed, mu=0.1, m=1")
    assert scope_of(family.WINDOWS, [v]).kind == CERTIFIED  # what the steps alone would say
    scope = family._outside(res)
    assert scope.kind == OUTSIDE and scope.factors["eta_hat"] == pytest.approx((16.0, 16.0)) and "chosen" in scope.text
    claim = get_claim(family.WINDOWS)
    assert claim.title.startswith("Study") and not any("theorem8" in d for d in claim.depends_on)
