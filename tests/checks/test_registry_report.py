"""fedbounds.checks.registry, fedbounds.checks.report.suite, fedbounds.checks.runtime.profiles
and fedbounds.checks.verdicts.formulas: lookup, provenance, table, JSON, plots."""

from __future__ import annotations

import json

import numpy as np
import pytest
import sympy as sp
from fedbounds.checks.registry import CheckResult, Curve, Plot, all_checks, get_check, select_checks
from fedbounds.checks.report.suite import format_slack, format_table, write_report
from fedbounds.checks.runtime.profiles import FULL, QUICK, get_profile
from fedbounds.checks.verdicts.formulas import evaluate, function_of
from fedbounds.checks.verdicts.verdict import compare


def test_check_ids_are_theory_claims() -> None:
    from fedbounds.theory.registry import get_claim

    for spec in all_checks():
        claim = get_claim(spec.check_id)  # every check tests a claim the theory layer holds
        label, status = spec.provenance()
        assert label == claim.provenance.label and status == str(claim.status)
        # an erratum check, or one demonstrating a remark (true but notable), declares the verdict it expects
        assert spec.erratum == (status in ("erratum", "remark"))


def test_lookup_and_selection() -> None:
    assert get_check("ds.lemma5_2").check_id == "ds.lemma5_2"
    with pytest.raises(ValueError, match="known ids"):
        get_check("nope")
    ds = select_checks(["ds"])
    assert ds and all(s.check_id.startswith("ds.") for s in ds)
    assert [s.check_id for s in select_checks(["fednmap.theorem8"])] == ["fednmap.theorem8"]
    with pytest.raises(ValueError, match="unknown claim"):
        select_checks(["fednmap.theorem9"])


def test_profiles() -> None:
    assert get_profile("quick") is QUICK and FULL.replicas > QUICK.replicas
    assert QUICK.get("x", "replicas") == QUICK.replicas and QUICK.get("x", "missing", 3) == 3
    with pytest.raises(ValueError, match="known"):
        get_profile("medium")


def test_formulas_evaluate_theory_expressions() -> None:
    x, y = sp.symbols("x y", positive=True)
    assert evaluate(x**2 + y, {x: 3.0, y: 1.0}) == 10.0
    assert function_of(x * y, (x, y))(2.0, 5.0) == 10.0
    with pytest.raises(ValueError, match="no value"):
        evaluate(x + y, {x: 1.0})


def test_table_json_and_plot(tmp_path) -> None:
    spec = get_check("fednmap.nat_nor_relation")
    res = CheckResult(spec.check_id)
    res.verdicts.append(compare(spec.check_id, "inst", np.array([1.0, 2.0]), np.array([2.0, 8.0]), exact=True))
    res.negatives.append(compare(spec.check_id, "ctrl", np.array([1.0]), np.array([0.1]), exact=True).with_details(control="bound / 10"))
    res.plots.append(Plot("p", "title", "t", "v", [Curve("obs", [0, 1], [1.0, 2.0]), Curve("bound", [0, 1], [2.0, 8.0], role="bound")]))
    table = format_table([(spec, res)], width=400)
    assert "fednmap.nat_nor_relation" in table and "holds" in table and "bound / 10" in table and "ok" in table
    path, pngs = write_report(tmp_path, [(spec, res)], {"profile": "test"})
    data = json.loads(path.read_text())
    assert data["claims"][0]["worst_slack"] == 2.0 and data["claims"][0]["negatives_ok"] is True
    assert pngs[0].read_bytes()[:4] == b"\x89PNG"
    assert format_slack(float("inf")) == "inf" and format_slack(float("nan")) == "-" and format_slack(1234.5) == "1.23e+03"


def test_tightness_column_and_control_location(tmp_path) -> None:
    from fedbounds.checks.report.suite import format_tightness
    from fedbounds.checks.verdicts.controls import control

    spec = get_check("fednmap.theorem8")
    res = CheckResult(spec.check_id)
    res.verdicts.append(compare(spec.check_id, "inst", np.array([1.0]), np.array([400.0]), exact=True))
    res.tightness = {"search": {"worst_ratio": 0.004, "loose_by": 250.0, "instance": {"n": 3}, "seed": 0, "evaluations": 9}}
    ctrl = compare(spec.check_id, "c", np.array([1.0, 3.0]), np.array([2.0, 2.0]), exact=True)
    res.negatives.append(control(ctrl, changed="bound", what="bound x 0.002", violated_at=123))
    res.negatives.append(control(ctrl, changed="bound", what="bound x 0.5 at round 0", violated_at=0))
    table = format_table([(spec, res)], width=400)
    assert "tightness" in table and "0.004 (loose x250)" in table
    assert "123" in table and "not its reason: violated only at round 0" in table
    assert format_tightness({}) == "-" and format_tightness({"not_applicable": "O-rate"}) == "n/a"
    assert format_tightness({"search": {"worst_ratio": 1.5, "loose_by": 0.67}}) == "1.5 (VIOLATED)"
    path, _ = write_report(tmp_path, [(spec, res)], {"profile": "quick"})
    claim = json.loads(path.read_text())["claims"][0]
    assert claim["tightness"]["search"]["worst_ratio"] == 0.004
    assert claim["negatives"][0]["details"]["control_record"]["violated_at"] == 123
