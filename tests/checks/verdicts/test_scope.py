"""Every verdict states its scope (fedbounds.checks.verdicts.scope): computed from the claim's hypotheses (theory
registry) at the parameters the check recorded, never typed by hand."""

from __future__ import annotations

import json

import numpy as np
import pytest
from fedbounds.checks.fednmap.common import theorem5_parameters
from fedbounds.checks.registry import CheckResult, get_check
from fedbounds.checks.verdicts.scope import CERTIFIED, INSIDE, OUTSIDE, UNSTATED, hypothesis_ratios, scope_of, scoped_verdict
from fedbounds.checks.verdicts.verdict import compare
from fedbounds.theory.core import symbols as S


def _fednmap_at(frac: float, eta_a_frac: float, *, L: float = 2.0, rho: float = 0.25, Q: int = 2, n: int = 4) -> dict:
    su = theorem5_parameters(L, rho, Q=Q, m=1, frac=frac, eta_a_frac=eta_a_frac)
    return {"L": L, "rho": rho, "Q": Q, "m": 1, "n": n, "gamma": su.gamma, "eta_hat": su.eta_hat, "eta_a": su.eta_a}


def _verdict(check_id: str, at) -> object:
    return compare(check_id, "inst", np.array([1.0]), np.array([2.0]), exact=True, details={"at": at})


def test_the_factors_are_the_multiples_the_check_ran_at() -> None:
    sc = scope_of("fednmap.theorem8", [_verdict("fednmap.theorem8", _fednmap_at(4.0, 222.0))])
    assert sc.kind == OUTSIDE
    assert sc.factors["eta_hat"] == pytest.approx((4.0, 4.0)) and sc.factors["eta_a"] == pytest.approx((222.0, 222.0))
    assert "gamma" not in sc.factors
    assert sc.text.startswith("outside: eta_hat 4x, eta_a 222x past the conditions of Theorem 5")
    assert "Theorem 8's own conditions are lost" in sc.text  # reconstructed hypotheses say whose stand in


def test_at_the_printed_maximum_the_scope_is_inside() -> None:
    sc = scope_of("fednmap.theorem8", [_verdict("fednmap.theorem8", _fednmap_at(1.0, 1.0))])
    assert sc.kind == INSIDE and sc.factors == {} and sc.points == sc.inside_points == 1
    # one step past it (nothing else changed) and it is not
    assert scope_of("fednmap.theorem8", [_verdict("fednmap.theorem8", _fednmap_at(1.01, 1.0))]).kind != INSIDE


def test_a_claim_without_hypotheses_inherits_its_theorem_s_and_a_sweep_reports_a_range() -> None:
    at = [_fednmap_at(f, 222.0) for f in (4.0, 8.0, 16.0)]
    sc = scope_of("fednmap.theorem8.complexity", [_verdict("fednmap.theorem8.complexity", at)])
    assert sc.kind == OUTSIDE and sc.points == 3
    assert "eta_hat 4-16x" in sc.text and "eta_a 222x" in sc.text and "the conditions of Theorem 5" in sc.text


def test_ds_step_past_a4iv() -> None:
    L_F = 3.0
    at = {"eta": 2.0 / (6 * L_F), "L_F": L_F, "gamma_r": 0.01, "c_gamma": 0.01 / (2.0 / (6 * L_F))}
    sc = scope_of("ds.lemma5_2", [_verdict("ds.lemma5_2", at)])
    assert sc.kind == OUTSIDE and sc.factors["eta"] == pytest.approx((2.0, 2.0)) and "c_gamma" not in sc.text
    eta = 1.0 / (6 * L_F)
    inside = scope_of("ds.lemma5_2", [_verdict("ds.lemma5_2", {**at, "eta": eta, "c_gamma": 0.01 / eta})])
    assert inside.kind == INSIDE
    # the inexactness hypothesis gamma_r <= c_gamma eta is evaluated too: c_gamma halved breaks it by 2x
    sc = scope_of("ds.lemma5_2", [_verdict("ds.lemma5_2", {**at, "eta": eta, "c_gamma": 0.005 / eta})])
    assert sc.kind == OUTSIDE and sc.factors["gamma_r"] == pytest.approx((2.0, 2.0))


def test_no_recorded_parameters_is_unstated_not_inside() -> None:
    v = compare("ds.theorem5_3", "inst", np.array([1.0]), np.array([2.0]), exact=True)
    sc = scope_of("ds.theorem5_3", [v])
    assert sc.kind == UNSTATED and "Theorem 5.3" in sc.text


def test_a_point_certified_by_its_own_pep_certificate() -> None:
    v = _verdict("fednmap.pep.lyapunov_constants", _fednmap_at(16.0, 16.0)).with_details(pep={"pep_status": "certified"})
    sc = scope_of("fednmap.pep.lyapunov_constants", [v])
    assert sc.kind == CERTIFIED and "PEP certificate" in sc.text
    v2 = v.with_details(pep={"pep_status": "inconclusive"})
    assert scope_of("fednmap.pep.lyapunov_constants", [v2]).kind == OUTSIDE
    # a proved point (exact certificate, the rung above certified) is covered too: the old rule read it as outside
    v3 = v.with_details(pep={"pep_status": "proved"})
    assert scope_of("fednmap.pep.lyapunov_constants", [v3]).kind == CERTIFIED


def test_hypothesis_ratios_read_both_directions() -> None:
    r = hypothesis_ratios([S.R >= 100 * S.c], {"R": 50, "c": 1.0})
    assert r == {"R": pytest.approx(2.0)}  # R is half what it must be: 2x past
    assert hypothesis_ratios([S.eta <= 1 / (6 * S.L_F)], {"eta": 0.1}) == {"eta": None}


def test_outside_never_reads_a_bare_holds(tmp_path) -> None:
    from fedbounds.checks.report.suite import format_table, write_report

    spec = get_check("fednmap.theorem8")
    res = CheckResult(spec.check_id, verdicts=[_verdict(spec.check_id, _fednmap_at(4.0, 222.0))],
                      notes=["first note " * 30, "second note"])
    assert res.verdict == "holds" and res.verdict_shown == "holds*"
    assert scoped_verdict("holds", {"kind": INSIDE}) == "holds" and scoped_verdict("violated", {"kind": OUTSIDE}) == "violated*"
    table = format_table([(spec, res)], width=100)
    lines = table.splitlines()
    assert lines[0].split()[:5] == ["claim", "paper", "label", "[status]", "verdict"] and "scope" in lines[0]
    assert any("holds*" in line for line in lines) and not any(" holds " in f" {line} " for line in lines[2:4])
    assert "eta_hat 4x" in table and max(len(x) for x in lines) <= 100
    notes = [x for x in lines if x.startswith("fednmap.theorem8: ")]
    assert len(notes) == 3 and notes[0].startswith("fednmap.theorem8: scope: outside: eta_hat 4x, eta_a 222x")
    assert notes[1].endswith("...") and notes[2] == "fednmap.theorem8: second note"  # one line each
    path, _ = write_report(tmp_path, [(spec, res)], {})
    claim = json.loads(path.read_text())["claims"][0]
    assert claim["verdict"] == "holds" and claim["verdict_shown"] == "holds*"
    assert claim["scope"]["kind"] == OUTSIDE and claim["scope"]["factors"]["eta_a"][0] == pytest.approx(222.0)


def test_the_checks_record_their_parameters() -> None:
    """The checks named in issue 20 record details['at'] (a source-level guard: the quick run is too long for a unit test)."""
    import inspect

    from fedbounds.checks.ds_fedproxgrad import checks as ds
    from fedbounds.checks.fednmap import checks as fn
    from fedbounds.checks.fednmap import speedup

    assert '"at": at_values(values)' in inspect.getsource(fn._theorem8_instance)
    assert "with_details(at=" in inspect.getsource(speedup)
    assert "at=_ds_at(" in inspect.getsource(ds.check_theorem5_3) and "scope_caveat" in inspect.getsource(ds.check_theorem5_3)


def test_a_new_paper_s_own_symbols_are_found_by_name() -> None:
    import sympy as sp

    eta, L = sp.Symbol("eta_new", positive=True), sp.Symbol("L_new", positive=True)
    assert hypothesis_ratios([eta <= 1 / L], {"eta_new": 0.5, "L_new": 4.0}) == {"eta_new": pytest.approx(2.0)}
    assert hypothesis_ratios([eta <= 1 / L], {"eta_new": 0.25, "L_new": 4.0}) == {"eta_new": pytest.approx(1.0)}


@pytest.mark.parametrize(("check_id", "kind"), [("ds.spep.sigma2", INSIDE), ("ds.spep.G2", INSIDE),
                                                ("fednmap.spep.lyapunov_windows", CERTIFIED)])
def test_the_stochastic_families_state_their_scope(quick_result, check_id: str, kind: str) -> None:
    """The DS stochastic verdicts record (eta, gamma_r) (they read "unstated" before); the FedNMap windows run at 16x
    Theorem 5's printed steps and say so (they read "inside" before, against C_0, C_c > 0 alone)."""
    res = quick_result(check_id)
    scope = scope_of(check_id, [*res.verdicts])
    assert scope.kind == kind, scope.text
    if kind == CERTIFIED:
        assert scope.factors["eta_hat"] == pytest.approx([16.0, 16.0])


@pytest.mark.slow  # the quick run of fednmap.spep.lyapunov_windows (conftest.HEAVY_CLAIMS)
def test_certified_evidence_outside_the_printed_steps_reads_starred(quick_result) -> None:
    """A PEP certificate at 16x the printed steps is a different point, not the theorem's: the verdict is starred
    (it printed a bare ``holds`` before), and the verdict line names the constants we chose."""
    assert scoped_verdict("holds", {"kind": CERTIFIED}) == "holds*"
    res = quick_result("fednmap.spep.lyapunov_windows")
    assert res.verdict_shown == "holds*", res.scope_info().text
    assert "C_0=1" in res.scope_info().short and "mu=0.1" in res.scope_info().short and "16x" in res.scope_info().short
    # a study of our shape at chosen constants: outside, whatever the PEP-certified steps reach (it read "certified")
    assert res.scope_info().kind == OUTSIDE and "chosen" in res.scope_info().text
