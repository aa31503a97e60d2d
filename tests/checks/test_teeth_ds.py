"""Teeth of the DS FedProxGrad checks (issue "Verdicts that can fail"): every negative control fires for the reason it
names (violated, located away from round 0, without divergence, one thing changed), each quantitative claim records
its searched worst case, the search finds planted bugs, and an erratum check whose verdict differs from the one its
evidence predicts fails the run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from fedbounds.checks.cli import main
from fedbounds.checks.ds_fedproxgrad import checks as dsc
from fedbounds.checks.registry import CheckContext, CheckResult, get_check
from fedbounds.checks.runtime.profiles import QUICK
from fedbounds.checks.verdicts.adversarial import search_worst
from fedbounds.checks.verdicts.controls import fires_for_its_reason, why_not
from fedbounds.theory.ds_fedproxgrad import formulas as dc

DS_QUANTITATIVE = ("ds.lemma5_2", "ds.lemma5_1", "ds.theorem5_3", "ds.corollary_ii", "ds.constant_step_floor", "ds.corollary_decaying")
#: where a check records its search when that search is not the claim's tightness (none now: ds.theorem5_3 searches its
#: finite-horizon form, recorded as tightness["search"])
SEARCH_KEY: dict[str, str] = {}
ERRATA = {"erratum.ds_phi_prefix": "violated", "erratum.constant_gamma_floor": "holds",
          "erratum.ds_inexactness_gradient_step": "holds"}
_RESULTS: dict[str, Callable[[str], CheckResult]] = {}


@pytest.fixture(autouse=True)
def _shared(quick_result) -> None:
    _RESULTS["get"] = quick_result


def _result(check_id: str) -> CheckResult:
    """The quick-profile result of ``check_id`` (computed once per session for every module and xdist worker:
    the ``quick_result`` fixture of conftest.py)."""
    return _RESULTS["get"](check_id)


@pytest.mark.parametrize("check_id", [*DS_QUANTITATIVE, "ds.assumption.small_step", *ERRATA])
def test_every_control_fires_for_its_reason(check_id: str) -> None:
    res = _result(check_id)
    bad = {v.instance: why_not(v) for v in res.negatives if not fires_for_its_reason(v)}
    assert not bad, f"{check_id}: controls that do not fire for their stated reason: {bad}"
    for v in res.negatives:
        rec = v.details["control_record"]
        assert rec["changed"] and rec["violated_at"] != 0


@pytest.mark.parametrize("check_id", DS_QUANTITATIVE)
def test_quantitative_claims_record_a_searched_worst_case(check_id: str) -> None:
    res = _result(check_id)
    tight = res.tightness[SEARCH_KEY.get(check_id, "search")]
    assert tight["evaluations"] >= 6 and tight["worst_ratio"] > 0
    assert "instance" in tight["searched"] and "x0" in tight["searched"]
    calibrated = [v for v in res.negatives if v.details["control_record"]["changed"] in ("bound", "Phi")]
    assert calibrated and all(v.violated for v in calibrated), f"{check_id}: no violated calibrated control"


def test_ds_family_has_a_step_past_condition_control() -> None:
    """The family's step-past control: A4(iv) exceeded by the smallest factor that breaks Lemma 5.2, no divergence."""
    res = _result("ds.assumption.small_step")
    steps = [v for v in res.negatives if v.details["control_record"]["changed"] == "eta"]
    assert steps and all(fires_for_its_reason(v) for v in steps)
    factor = steps[0].details["control_record"]["after"]
    eta = res.tightness["eta"]
    assert eta["smallest_violating_factor"] == factor
    assert 1.0 <= eta["largest_factor_that_held"] < factor <= eta["first_failure"]


# ds.corollary_ii is the same search on a 2x longer run (10 s on 2 slow cores): slow
@pytest.mark.parametrize("check_id", ["ds.lemma5_1", pytest.param("ds.corollary_ii", marks=pytest.mark.slow)])
def test_search_finds_a_planted_bug(check_id: str) -> None:
    """A bound divided by twice its measured slack (on the default experiment) is found violated by the search
    started WITHOUT the default point, in the quick budget."""
    res = _result(check_id)
    slack = res.verdicts[0].slack
    assert slack > 1
    T = QUICK.rounds(int(QUICK.get("ds.lemma5_2", "T", 300)))
    if check_id == "ds.lemma5_1":
        def measure(q):
            return dsc._lemma51_measure(q, 0, 4, 0, T)
        space = dsc._LEMMA51_DIMS
    else:
        def measure(q):
            return dsc._cor_measure(q, 0, 8, 0, [100, 400])
        space = dsc._COR_DIMS
    worst = search_worst(lambda q: 2 * slack * measure(q).ratio(), space, budget=int(QUICK.get(check_id, "search_budget", 24)), seed=1)
    assert worst.ratio > 1, f"planted bug (bound / {2 * slack:.3g}) not found: worst ratio {worst.ratio:.3g}"


@pytest.mark.parametrize("check_id", list(ERRATA))
def test_erratum_expectations_match_their_evidence(check_id: str) -> None:
    spec = get_check(check_id)
    res = _result(check_id)
    assert spec.expect == ERRATA[check_id] == res.verdict
    assert spec.accepts(res)
    other = "holds" if spec.expect == "violated" else "violated"
    assert not replace(spec, expect=other).accepts(res)


@pytest.mark.slow  # runs erratum.constant_gamma_floor, a heavy claim (conftest.HEAVY_CLAIMS), twice
def test_constant_gamma_floor_over_100_fails_the_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The audit's case: the derived floor divided by 100 turns the verdict to violated, which must fail the run."""
    monkeypatch.setattr(dc, "constant_gamma_floor", dc.constant_gamma_floor / 100)
    res = get_check("erratum.constant_gamma_floor").func(CheckContext(profile=QUICK, seed=0))
    assert res.verdict == "violated"
    assert not get_check("erratum.constant_gamma_floor").accepts(res)
    status = main(["check", "--claim", "erratum.constant_gamma_floor", "--out", str(tmp_path), "--no-progress"])
    assert status == 1
