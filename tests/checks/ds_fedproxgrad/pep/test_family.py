"""The PEP family of DS FedProxGrad in ``fedbounds check`` (ds.pep.lemma5_2, ds.pep.absorption): verdicts, controls
that fire because of the one thing they change, certificate details, and planted errors that must bite."""

from __future__ import annotations

from dataclasses import replace

import pytest

pytest.importorskip("PEPit")

import fedbounds.checks.pep.solve as core_pep
from fedbounds.checks.ds_fedproxgrad.pep import family as pep_checks
from fedbounds.checks.pep.solve import SolverRun
from fedbounds.checks.registry import CheckContext, get_check
from fedbounds.checks.runtime.profiles import QUICK
from fedbounds.checks.verdicts.controls import fires_for_its_reason, why_not

IDS = ("ds.pep.lemma5_2", "ds.pep.absorption")


class _Lazy(dict):
    """Each claim's quick result on first use (ds.pep.absorption is a heavy claim: only its slow tests ask for it)."""

    def __init__(self, get) -> None:
        super().__init__()
        self.get_result = get

    def __missing__(self, cid: str):
        self[cid] = self.get_result(cid)  # get_check(cid).func(CheckContext(profile=QUICK)), once per session
        return self[cid]


@pytest.fixture(scope="module")
def results(quick_result):
    return _Lazy(quick_result)


def _ratio_form(res):
    return [v for v in res.verdicts if "Phi_PEP" in v.details and v.details["Phi_PEP"] is not None
            and not v.instance.startswith("margin")]


@pytest.mark.parametrize("cid", IDS)
def test_check_holds_with_teeth(results, cid: str) -> None:
    spec, res = get_check(cid), results[cid]
    assert spec.family == "ds.pep" and spec.provenance()[1] == "remark"
    assert res.error is None and res.verdict == "holds" and spec.accepts(res)
    assert all(v.status == "holds" and v.claim_id == cid for v in res.verdicts)
    assert res.negatives and all(v.violated for v in res.negatives)
    assert all(fires_for_its_reason(v) for v in res.negatives), [why_not(v) for v in res.negatives]


@pytest.mark.parametrize("cid", IDS)
def test_details_carry_solver_statuses_and_gaps(results, cid: str) -> None:
    for v in [*results[cid].verdicts, *results[cid].negatives]:
        pep = v.details["pep"]
        assert pep["pep_status"] in ("certified", "proved") and pep["gram_dim"] >= 6
        assert set(pep["solvers"]) == {"CLARABEL", "SCS"}
        for run in pep["solvers"].values():
            assert run["status"] == "optimal"
            assert run["gap"] is not None and abs(run["gap"]) < 1e-5
        assert "ratio" in v.details and "solver_options" in v.details


def test_gamma_zero_is_the_descent_lemma(results) -> None:
    # gamma_r = 0: x+ = x - eta grad F(x) on an L_F-smooth F (L_F = L_f + lambda L_r = 1.5): Phi = 1 - L_F eta/2, tight
    zero = [v for v in _ratio_form(results["ds.pep.lemma5_2"]) if v.details["gamma_r"] == 0.0]
    assert len(zero) == 2
    for v in zero:
        assert v.details["Phi_PEP"] == pytest.approx(1 - 1.5 * v.details["eta"] / 2, rel=1e-4)


def test_slack_is_phi_pep_over_the_paper_phi(results) -> None:
    res = results["ds.pep.lemma5_2"]
    for v in _ratio_form(res):
        assert v.slack == pytest.approx(v.details["Phi_PEP"] / 0.25) and v.slack > 2  # measured: >= 2.25
        assert v.details["ratio"] == pytest.approx(v.slack)  # worst / bound: both negative
    assert res.tightness["worst_Phi_PEP"] == pytest.approx(0.5636, abs=2e-3)  # measured at the corner


def test_eta_control_changes_only_the_step(results) -> None:
    res = results["ds.pep.lemma5_2"]
    corner = next(v for v in _ratio_form(res) if v.details["eta_frac"] == 1.0 and v.details["gamma_frac"] == 1.0)
    ctrl = res.negatives[0]
    assert ctrl.details["control_record"]["changed"] == "eta"
    assert ctrl.details["eta"] == pytest.approx(pep_checks.ETA_CONTROL * corner.details["eta"])
    assert ctrl.details["gamma_r"] == corner.details["gamma_r"] and ctrl.details["N"] == corner.details["N"]
    assert corner.holds and ctrl.violated and ctrl.details["Phi_PEP"] < 0.25 < corner.details["Phi_PEP"]


@pytest.mark.slow  # the quick run of ds.pep.absorption (conftest.HEAVY_CLAIMS)
def test_absorption_threshold_and_its_control(results) -> None:
    res = results["ds.pep.absorption"]
    (v,) = res.verdicts
    thr, found = v.details["gamma_paper"], v.details["gamma_certified"]
    assert v.observed == thr and v.bound == found and 1.9 * thr <= found <= 2.2 * thr  # measured: 2.05
    assert v.details["Phi_PEP_at_certified"] >= 0.25 and v.details["uncertified_probes"] == []
    (ctrl,) = res.negatives
    assert ctrl.details["control_record"]["changed"] == "gamma_r"
    assert ctrl.details["gamma_r"] == pytest.approx(pep_checks.GAMMA_CONTROL * found)
    assert ctrl.details["eta"] == v.details["eta"] and ctrl.details["N"] == v.details["N"]
    assert ctrl.details["Phi_PEP"] < 0.25


@pytest.mark.slow  # 12 CPU-s (the 20 PEPs solved again); the check's own control, counted by test_families, stays in the default run
def test_a_claimed_phi_twice_the_certified_one_is_violated(results, monkeypatch) -> None:
    phi_max = max(v.details["Phi_PEP"] for v in _ratio_form(results["ds.pep.lemma5_2"]))
    real = pep_checks.theory_values

    def planted(*args, **kwargs):
        return {**real(*args, **kwargs), "Phi": 2 * phi_max}

    monkeypatch.setattr(pep_checks, "theory_values", planted)
    spec = get_check("ds.pep.lemma5_2")
    res = spec.func(CheckContext(profile=QUICK))
    assert res.verdict == "violated" and not spec.accepts(res)
    assert all(v.violated for v in res.verdicts)  # every grid point, and the margin form at the corner


def test_uncertified_solvers_never_hold(monkeypatch) -> None:
    # every solver answers optimal_inaccurate with a value that would pass comfortably if it were trusted
    def inaccurate(build, solver, solver_options=None):
        return SolverRun(solver=solver.upper(), status="optimal_inaccurate", dual=-1.0, primal=-1.0, seconds=0.0), 8

    monkeypatch.setattr(core_pep, "solve_once", inaccurate)
    for cid in IDS:
        spec = get_check(cid)
        res = spec.func(CheckContext(profile=QUICK))
        assert res.verdicts and all(v.status == "inconclusive" for v in res.verdicts)
        assert res.verdict == "inconclusive" and not spec.accepts(res)
        for v in res.verdicts:
            assert {r["status"] for r in v.details["pep"]["solvers"].values()} == {"optimal_inaccurate"}


def test_grid_is_chosen_by_profile_name() -> None:
    assert set(pep_checks.GRIDS) == {"quick", "full"}
    assert pep_checks._grid(CheckContext(profile=replace(QUICK, name="full"))) is pep_checks.GRIDS["full"]
    assert pep_checks._grid(CheckContext(profile=replace(QUICK, name="custom"))) is pep_checks.GRIDS["quick"]
    quick, full = pep_checks.GRIDS["quick"], pep_checks.GRIDS["full"]
    assert len(full["N"]) * len(full["eta_frac"]) * len(full["gamma_frac"]) > len(quick["eta_frac"]) * len(quick["gamma_frac"])
