"""The two-solver PEP certificate machinery, on textbook PEPs with known exact values."""

from __future__ import annotations

import dataclasses
import math

import pytest

pytest.importorskip("PEPit")

from fedbounds.checks.pep.solve import Certificate, certify, verdict


def gd_convex(L: float, h: float):
    """One gradient step on an L-smooth convex f: worst f(x1) - f* with ||x0 - x*|| <= 1.
    For h = 1/L the exact value is L/(4N + 2) = L/6 (Drori and Teboulle 2014)."""

    def build():
        from PEPit import PEP
        from PEPit.functions import SmoothConvexFunction

        p = PEP()
        f = p.declare_function(SmoothConvexFunction, L=L)
        xs = f.stationary_point()
        x0 = p.set_initial_point()
        p.set_initial_condition((x0 - xs) ** 2 <= 1)
        x1 = x0 - h * f.gradient(x0)
        p.set_performance_metric(f(x1) - f(xs))
        return p

    return build


def gd_nonconvex(L: float, h: float):
    """One gradient step on an L-smooth (nonconvex) f: worst ||grad f(x0)||^2 with f(x0) - f(x1) <= 1.
    Exact value 2/(h (2 - L h)) for 0 < h < 2/L (the descent lemma is tight); unbounded for h >= 2/L."""

    def build():
        from PEPit import PEP
        from PEPit.functions import SmoothFunction

        p = PEP()
        f = p.declare_function(SmoothFunction, L=L)
        x0 = p.set_initial_point()
        g0, f0 = f.oracle(x0)
        x1 = x0 - h * g0
        p.set_initial_condition(f0 - f(x1) <= 1)
        p.set_performance_metric(g0**2)
        return p

    return build


def test_gd_convex_exact_value_certified():
    cert = certify(gd_convex(1.0, 1.0))
    assert cert.certified and cert.status == "certified"
    assert cert.value == pytest.approx(1 / 6, rel=1e-5)
    assert set(cert.statuses) == {"CLARABEL", "SCS"} and all(s == "optimal" for s in cert.statuses.values())
    assert cert.gram_dim == 4  # x0, x*, grad f(x0), grad f(x1)
    assert all(abs(g) < 1e-4 for g in cert.gaps.values())
    assert verdict(cert, 1 / 6) == "holds"
    # negative control: a bound just below the exact worst case is violated
    assert verdict(cert, 0.99 / 6) == "violated"


def test_a_violation_rests_on_an_admissible_instance_never_on_the_dual_value():
    cert = certify(gd_convex(1.0, 1.0))
    # the same dual values (upper bounds, above the bound), but no solver's primal point is feasible: nothing shows an
    # instance above the bound, so the old rule ("every value above the bound") was wrong to say violated
    runs = tuple(dataclasses.replace(r, primal_violation=1e-3) for r in cert.runs)
    assert verdict(dataclasses.replace(cert, runs=runs), 0.99 / 6) == "inconclusive"
    # a relaxed PEP's primal points are not instances: its violation is read from the values, of the relaxed class
    assert verdict(dataclasses.replace(cert, runs=runs), 0.99 / 6, relaxed=True) == "violated"
    # the admissible instance alone decides: one feasible primal point above the bound is enough
    one = tuple(r if r.solver == "CLARABEL" else dataclasses.replace(r, primal_violation=1e-3) for r in cert.runs)
    assert verdict(dataclasses.replace(cert, runs=one), 0.99 / 6) == "violated"


def test_the_violation_rules_keep_their_tolerance_and_feasibility_threshold():
    from fedbounds.checks.pep.lower import primal_lower

    cert = certify(gd_convex(1.0, 1.0))
    v = cert.value
    # within the absolute tolerance above the bound: holds (tol = abs_tol here, rel_tol = 0)
    assert verdict(cert, v - 0.5e-6, rel_tol=0.0, abs_tol=1e-6) == "holds"
    # an admissible instance within the tolerance above the bound does not show a violation (SCS not optimal, so
    # the certificate cannot say holds either)
    runs = tuple(r if r.solver == "CLARABEL" else dataclasses.replace(r, status="optimal_inaccurate") for r in cert.runs)
    weak = dataclasses.replace(cert, runs=runs, certified=False, value=None)
    low = primal_lower(weak)
    assert verdict(weak, low - 0.5e-6, rel_tol=0.0, abs_tol=1e-6) == "inconclusive"
    assert verdict(weak, low - 2e-6, rel_tol=0.0, abs_tol=1e-6) == "violated"
    # a relaxed PEP is violated only when every value exceeds bound + tol
    split = dataclasses.replace(cert, values={"CLARABEL": v, "SCS": v + 1.5e-6}, value=v + 1.5e-6)
    assert verdict(split, v - 0.5e-6, rel_tol=0.0, abs_tol=1e-6, relaxed=True) == "inconclusive"
    assert verdict(split, v - 1.5e-6, rel_tol=0.0, abs_tol=1e-6, relaxed=True) == "violated"
    # a primal point counts as an instance only when feasible to 1e-7
    assert primal_lower(dataclasses.replace(weak, runs=tuple(dataclasses.replace(r, primal_violation=1.5e-7)
                                                             for r in runs))) is None
    assert primal_lower(dataclasses.replace(weak, runs=tuple(dataclasses.replace(r, primal_violation=0.8e-7)
                                                             for r in runs))) == low


@pytest.mark.parametrize("h", [0.5, 1.0, 1.5])
def test_gd_nonconvex_descent_lemma_is_the_pep_value(h):
    cert = certify(gd_nonconvex(1.0, h))
    assert cert.certified
    assert cert.value == pytest.approx(2 / (h * (2 - h)), rel=1e-4)


def test_step_past_its_condition_is_unbounded():
    cert = certify(gd_nonconvex(1.0, 2.5))
    assert cert.unbounded and not cert.certified and cert.status == "unbounded"
    assert cert.value == math.inf
    assert verdict(cert, 1e6) == "violated"


def test_a_solver_that_is_not_optimal_makes_it_inconclusive():
    # SCS stopped after 2 iterations cannot report optimal: the certificate must not be trusted
    cert = certify(gd_convex(1.0, 1.0), solver_options={"SCS": {"max_iters": 2}})
    assert cert.statuses["CLARABEL"] == "optimal"
    assert cert.statuses["SCS"] != "optimal"
    assert not cert.certified and cert.value is None
    assert verdict(cert, 1.0) == "inconclusive"  # never 'holds', however generous the bound


def test_disagreeing_solvers_are_inconclusive():
    cert = certify(gd_convex(1.0, 1.0))
    # the same answers, tampered so that the two values disagree by 1%
    runs = tuple(dataclasses.replace(r, dual=r.dual * (1.01 if r.solver == "SCS" else 1.0)) for r in cert.runs)
    values = {r.solver: r.dual for r in runs}
    bad = dataclasses.replace(cert, runs=runs, values=values, certified=False, value=None, agree=False)
    assert verdict(bad, 1.0) == "inconclusive"
    # and certify's own agreement rule rejects a 1% gap at the default tolerance
    assert abs(values["SCS"] - values["CLARABEL"]) > cert.rel_tol * max(values.values()) + cert.abs_tol


def test_arguments_are_validated():
    with pytest.raises(ValueError, match="rel_tol"):
        certify(gd_convex(1.0, 1.0), rel_tol=0.0)
    with pytest.raises(ValueError, match="solvers"):
        certify(gd_convex(1.0, 1.0), solvers=())
    cert = certify(gd_convex(1.0, 1.0), solvers=("CLARABEL",))
    assert isinstance(cert, Certificate) and cert.certified
    with pytest.raises(ValueError, match="bound"):
        verdict(cert, math.inf)


def test_a_false_bound_within_the_solvers_tolerance_is_neither_holds_nor_proved(tmp_path, monkeypatch):
    """One gradient step (exact worst case 1/6): the false claim 1/6 - 1e-4 lies within the two-solver tolerance
    (1e-3 relative) of the certified value, and a verified exact certificate of 1/6 + delta is attached. Neither may
    make it hold: the admissible instance (about 1/6) exceeds the claim, so it is violated, and the certificate's
    bound is above the claim's, so ``pep_status`` is not ``proved``. The true claim 1/6 + 1e-5 is proved."""
    from fedbounds.checks.pep import certificate as C
    from fedbounds.checks.pep.solve import pep_verdict

    monkeypatch.setattr(C, "STORE", tmp_path)
    monkeypatch.setenv("FEDBOUNDS_PROVE", "1")
    cert = certify(gd_convex(1.0, 1.0))
    assert cert.proved and float(cert.proof["bound"]) > 1 / 6  # a verified certificate of 1/6 + delta
    false = pep_verdict("gd", "h = 1", cert, 1 / 6 - 1e-4)
    assert false.status == "violated" and false.details["pep"]["pep_status"] == "certified"
    assert false.details["pep"]["proof"]["decides_claim"] is False
    true = pep_verdict("gd", "h = 1", cert, 1 / 6 + 1e-5)
    assert true.status == "holds" and true.details["pep"]["pep_status"] == "proved"
    # the proof alone decides a claim between the solvers' value and the certificate's bound only if it covers it
    assert verdict(cert, float(cert.proof["bound"])) == "holds"
