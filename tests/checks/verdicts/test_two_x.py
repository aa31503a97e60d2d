"""The 2x-detection column (fedbounds.checks.verdicts.two_x): every row measured (verdicts re-judged with the bound x2
and /2, proof steps and pins run on the perturbed expression), committed with its command and commit, printed by
``fedbounds claims``; no row filled by rule."""

from __future__ import annotations

import json

import pytest
from fedbounds.checks.cli import main
from fedbounds.checks.verdicts import two_x
from fedbounds.theory.registry import all_claims, get_claim


def _verdict(observed: float, bound: float, lo: float | None = None, exact: bool = True) -> dict:
    lo = observed if lo is None else lo
    return {"observed": observed, "bound": bound, "ci_low": lo, "ci_high": observed, "exact": exact}


def test_rejudge_fires_only_when_the_perturbed_bound_is_exceeded() -> None:
    slack_225 = [_verdict(1.0, 2.25)]  # ds.pep.lemma5_2's slack: a halved bound (1.125) still holds
    assert two_x.rejudge(slack_225, 0.5) is False and two_x.rejudge(slack_225, 2.0) is False
    assert two_x.rejudge([_verdict(1.0, 1.5)], 0.5) is True  # slack 1.5 < 2: the halved bound is violated
    # a Monte Carlo interval straddling the halved bound is inconclusive, not caught
    assert two_x.rejudge([_verdict(1.0, 1.9, lo=0.5, exact=False)], 0.5) is False
    assert two_x.rejudge([{"bound": "nan", "ci_low": "nan", "ci_high": "nan"}], 0.5) is None


def test_a_loose_claim_with_a_proof_is_not_relabelled_by_rule() -> None:
    """ds.pep.lemma5_2 (slack 2.25): the old column moved it from 'nothing' to 'a proof' because it has proof steps;
    now the row is what was measured: a check of slack 2.25 does not catch a halved bound."""
    claim = get_claim("ds.pep.lemma5_2")
    checks = {"ds.pep.lemma5_2": {"verdict": "holds", "worst_slack": 2.25, "verdicts": [_verdict(1.0, 2.25)]}}
    row = two_x.measure_claim(claim, checks, {}, {})
    assert row["perturbations"]["/2"]["b"] is False and row["perturbations"]["x2"]["b"] is False
    assert row["catcher"] in ("c", "e") and "d" in row["not_asked"]
    if row["catcher"] == "c":  # only if a reaching step actually failed on the perturbed expression
        assert any(p["steps_failed"] for p in row["perturbations"].values())


def test_a_pin_is_run_on_the_perturbed_formula() -> None:
    """theorem8_variance (36 sigma^2/(m n mu Q)) is pinned: the pin fails for x2 and /2 alike (it cannot tell a wrong
    constant from a looser valid one)."""
    import sympy as sp
    from fedbounds.theory.fednmap import formulas as fn

    pins = two_x._pins()

    class _C:
        conclusion = fn.theorem8_variance
        paper = "fednmap"

    assert two_x._pin_catches(_C, 2.0, pins) == (True, ["theorem8_variance"])
    assert two_x._pin_catches(_C, 0.5, pins) == (True, ["theorem8_variance"])
    assert fn.theorem8_variance == _C.conclusion and isinstance(fn.theorem8_variance, sp.Basic)  # restored
    # Theorem 8's whole bound: the pins of its terms see its constants (36 in the variance term, 12100 in the drift)
    hit, names = two_x._pin_catches(get_claim("fednmap.theorem8"), 0.5, pins)
    assert hit and {"theorem8_variance", "theorem8_drift"} <= set(names)
    # a claim no pinned formula carries: the pin is not asked (None), never "nothing caught"
    assert two_x._pin_catches(get_claim("fednmap.spep.constant_36"), 0.5, pins) == (None, [])


def test_the_committed_table_is_measured_for_every_claim() -> None:
    data = two_x.load()
    assert data["command"].startswith(two_x.COMMAND) and len(data["commit"]) == 40
    ids = {c.id for c in all_claims()}
    missing = ids - set(data["rows"])
    assert not missing or set(data.get("missing", [])) >= missing
    for cid, row in data["rows"].items():
        if row["catcher"] in ("n/a", "not measured"):
            assert row["catcher"] != "not measured" or cid in data["missing"]
            continue
        fired = {x for p in row["perturbations"].values() for x in "abcd" if p[x]}
        expect = next((x for x in "abc" if x in fired), "d" if "d" in fired else "e")
        assert row["catcher"] == expect, cid  # the letter follows the measured booleans, nothing else
    assert two_x.summary(data["rows"]) == data["summary"]


@pytest.mark.slow  # 9 s at load 5-7 (pytest --durations, 2026-12-04)
def test_claims_shows_the_measured_column(capsys) -> None:
    assert main(["claims", "--json"]) == 0
    claims = json.loads(capsys.readouterr().out)
    assert claims and all(c["two_x"]["catcher"] in ("a", "b", "c", "d", "e", "n/a", "not measured") for c in claims)
    assert main(["claims", "--full"]) == 0  # the default is one line per claim; --full is the table with the 2x column
    out = capsys.readouterr().out
    assert any("2x" in line for line in out.splitlines()[:3])


@pytest.mark.parametrize("cid", ["fednmap.spep.constant_36", "fednmap.spep.constant_12100"])
def test_36_and_12100_are_not_caught_by_a_2x_error(cid: str) -> None:
    """Their rooms are ~x118 and ~x8000: neither a halved nor a doubled constant reads violated in their check."""
    row = two_x.load()["rows"].get(cid)
    if row is None or row["catcher"] in ("n/a", "not measured"):
        pytest.skip(f"{cid}: not a quantitative claim row")
    assert not any(p["a"] or p["b"] for p in row["perturbations"].values())
