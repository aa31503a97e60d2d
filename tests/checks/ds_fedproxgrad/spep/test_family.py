"""The stochastic Lemma 5.2 (checks/ds_fedproxgrad/spep/encoding.py, spep_checks.py): expected-Gram PEP of the noise and G^2 terms."""

from __future__ import annotations

import dataclasses

import pytest
from fedbounds.checks.ds_fedproxgrad.spep import family as spep_checks
from fedbounds.checks.ds_fedproxgrad.spep.encoding import SPoint, printed_coefficients, scenario_pep, stochastic_pep
from fedbounds.checks.ds_fedproxgrad.spep.family import grid_point
from fedbounds.checks.verdicts.verdict import Verdict
from fedbounds.theory.ds_fedproxgrad.claims import SPEP_MEASURED

CORNER = grid_point(1.0, 1.0, 2)
REL = 1e-3


def _per_LFeta2(p: SPoint, value: float) -> float:
    return value / (printed_coefficients(p)["L_F"] * p.eta**2)


def test_printed_coefficients_from_the_theory_layer():
    pc = printed_coefficients(CORNER)
    L_F, eta, g = 1.5, 1 / 9, 1 / 10**0.5  # L_f + lambda L_r, 1/(6 L_F), 1/(sqrt(10) B)
    assert pc["L_F"] == pytest.approx(L_F) and CORNER.eta == pytest.approx(eta) and CORNER.gamma_r == pytest.approx(g)
    assert pc["K_sigma"] == pytest.approx(1.5 * L_F * eta**2)
    assert pc["K_G"] == pytest.approx(eta * (1 + 1.5 * L_F * eta) * g**2)


def test_gradient_step_noise_is_the_descent_lemma():
    # gamma_r = 0 (no local error): E F(x - eta g + eta e) - F(x) has the noise term L_F eta^2 sigma^2 / 2 exactly,
    # attained by a quadratic with curvature L_F along e; the two-scenario instance meets it
    p = dataclasses.replace(CORNER, gamma_r=0.0)
    up, low = stochastic_pep(p, "sigma2", "independent"), scenario_pep(p, "independent")
    assert up.certified and low.certified
    assert _per_LFeta2(p, up.value) == pytest.approx(0.5, rel=REL)
    assert _per_LFeta2(p, low.value) == pytest.approx(0.5, rel=REL)


def test_corner_matches_the_claims_figures():
    m = SPEP_MEASURED["corner"]
    pc = printed_coefficients(CORNER)
    cor = stochastic_pep(CORNER, "sigma2", "correlated")
    joint = stochastic_pep(CORNER, "sigma2", "correlated", a_G=pc["K_G"])
    ind = stochastic_pep(CORNER, "sigma2", "independent")
    low = scenario_pep(CORNER, "correlated")
    kg = stochastic_pep(CORNER, "G2")
    for cert in (cor, joint, ind, low, kg):
        assert cert.certified
    assert _per_LFeta2(CORNER, cor.value) == pytest.approx(m["K_sigma_correlated"], rel=REL)
    assert _per_LFeta2(CORNER, joint.value) == pytest.approx(m["K_sigma_joint"], rel=REL)
    assert _per_LFeta2(CORNER, ind.value) == pytest.approx(m["K_sigma_independent"], rel=REL)
    assert _per_LFeta2(CORNER, low.value) == pytest.approx(m["K_sigma_correlated_scenario"], rel=REL)
    assert kg.value / pc["K_G"] == pytest.approx(m["K_G_over_printed"], rel=REL)
    # correlation with the local errors costs something; the relaxation is tight (scenario = upper bound)
    assert cor.value > ind.value * 1.02
    assert low.value == pytest.approx(cor.value, rel=REL)


def test_dropping_orthogonality_grows_the_coefficient():
    free = stochastic_pep(CORNER, "sigma2", "free")
    cor = stochastic_pep(CORNER, "sigma2", "correlated")
    assert free.certified and free.value > 5 * cor.value
    assert free.value > printed_coefficients(CORNER)["K_sigma"]


def test_bad_arguments():
    with pytest.raises(ValueError, match="noise"):
        stochastic_pep(CORNER, "sigma2", "gaussian")
    with pytest.raises(ValueError, match="measure"):
        stochastic_pep(CORNER, "sigma")
    with pytest.raises(ValueError, match="N must be"):
        SPoint(1.0, 1.0, 0.5, 1.0, 0.1, 0.1, 0)


class _Ctx:
    class profile:
        name = "quick"

    def tick(self, _msg: str) -> None:
        pass


@pytest.mark.slow
def test_checks_hold_and_controls_fire():
    res = spep_checks.check_sigma2(_Ctx())
    assert res.verdicts and all(v.status == "holds" for v in res.verdicts)
    assert [v.status for v in res.negatives] == ["violated", "violated"]
    res = spep_checks.check_G2(_Ctx())
    assert all(v.status == "holds" for v in res.verdicts) and [v.status for v in res.negatives] == ["violated"]


def test_a_printed_constant_too_small_is_caught(monkeypatch):
    # mutate the theory's sigma^2 coefficient to (3/2)/4 L_F eta^2 (below the certified 0.5253): the verdicts flip
    real = printed_coefficients

    def shrunk(p):
        return {**real(p), "K_sigma": real(p)["K_sigma"] / 4}

    monkeypatch.setattr(spep_checks, "printed_coefficients", shrunk)
    verdicts = spep_checks.sigma2_verdicts(CORNER, "mutant")
    assert all(v.status == "violated" for v in verdicts)


def _pep_row(status: str, value: float, lower: float | None, bound: float = 1.0) -> Verdict:
    return Verdict(claim_id="ds.spep.sigma2", instance="x", observed=value, bound=bound, ci_low=value,
                               ci_high=value, status="holds", slack=bound / value, exact=True,
                               details={"pep": {"pep_status": status}, "lower": lower})


def test_halved_room_control_is_decided_by_the_admissible_lower_bound():
    # a proved point (an exact certificate of value + delta) flips the calibrated control through its lower bound;
    # the old rule (status "certified" and value > bound) read it inconclusive once the certificate was committed
    for status in ("certified", "proved"):
        v = spep_checks._halved_room_control("ds.spep.sigma2", _pep_row(status, 0.4, lower=0.39), "K")
        assert v.status == "violated" and v.bound == pytest.approx(0.2) and v.ci_low == 0.39 and v.ci_high == 0.4
    # the upper bound alone cannot show a violation: no admissible instance, no flip (the old rule said violated)
    assert spep_checks._halved_room_control("ds.spep.sigma2", _pep_row("certified", 0.4, lower=None), "K").status == "inconclusive"
    # an instance below the halved bound (relaxation slack over 2x) shows nothing either
    assert spep_checks._halved_room_control("ds.spep.sigma2", _pep_row("proved", 0.4, lower=0.19), "K").status == "inconclusive"


@pytest.mark.slow
def test_committed_certificates_prove_the_quick_points_and_the_controls_fire():
    # the committed stochastic certificates (checks/pep/certificates) make every quick point proved; the calibrated
    # controls still flip (they read the scenario instance / the exact PEP's primal, not the proof)
    res = spep_checks.check_G2(_Ctx())
    assert [v.details["pep"]["pep_status"] for v in res.verdicts] == ["proved", "proved"]
    assert all(v.status == "holds" for v in res.verdicts) and [v.status for v in res.negatives] == ["violated"]
    assert all(v.details["pep"]["proof"]["bound"] >= v.observed for v in res.verdicts)


def _quick_builders():
    from fedbounds.checks.ds_fedproxgrad.spep.encoding import build_scenario_pep, build_stochastic_pep

    for point in spep_checks.GRIDS["quick"]:
        p = grid_point(*point)
        yield build_stochastic_pep(p, "G2")
        for noise, joint in spep_checks.SIGMA2_MODELS:
            yield build_stochastic_pep(p, "sigma2", noise, a_G=printed_coefficients(p)["K_G"] if joint else None)
        for noise in ("correlated", "independent"):
            yield build_scenario_pep(p, noise)
    yield build_stochastic_pep(grid_point(*spep_checks.GRIDS["quick"][0]), "sigma2", "free")


def test_every_quick_stochastic_pep_has_a_committed_certificate_of_its_own_rows():
    # no solver: the rows of each PEP the quick profile builds, hashed, name a committed file that verifies exactly and
    # uses only rows of that PEP (missing or stale certificates fail here, not silently as "certified")
    from fedbounds.checks.pep import certificate as C

    for build in _quick_builders():
        pb = C.problem_of(build)
        path = C.stored(pb.digest)
        assert path.exists(), f"no committed certificate {path.name}"
        s = C.check_stored(pb, C.load(path))
        assert s["bound"] > 0 and s["value"] <= s["bound"]
