"""The feasibility calculator for DS FedProxGrad (Theorem 5.3, Corollary (ii), the constant-step floor).

The calculator's numbers are substituted back into the theory's sympy expressions (``subs`` + ``evalf``),
and the Robbins-Monro decision is checked against sympy's series-convergence test, independently of the
interval the theory records.
"""

from __future__ import annotations

import functools
import math

import pytest
import sympy as sp
from fedbounds.theory.core.symbols import L_F, B, Delta_0, G, G_r, L_f, L_r, R, alpha, c, c_gamma, eta, gamma_r, lam, r, rho_f, sigma2
from fedbounds.theory.ds_fedproxgrad import formulas as core
from fedbounds.theory.feasibility import feasibility
from hypothesis import given, settings
from hypothesis import strategies as st

TOL = 1e-12

constants_st = st.fixed_dictionaries(
    {
        "L_f": st.floats(0.1, 10),
        "L_r": st.floats(0.0, 5),
        "lam": st.floats(0.0, 2),
        "G": st.floats(0.1, 5),
        "B": st.floats(0.1, 5),
        "G_r": st.floats(0.0, 3),
        "sigma": st.floats(0.0, 3),
    },
    optional={"rho": st.floats(0.0, 10)},
)


def _env(res) -> dict[sp.Symbol, sp.Float]:
    k = res.constants
    vals = {L_f: k["L_f"], L_r: k["L_r"], lam: k["lam"], G: k["G"], B: k["B"], G_r: k["G_r"], sigma2: k["sigma2"], rho_f: k["rho"]}
    vals = {s: sp.Float(v, 40) for s, v in vals.items()}
    vals[L_F] = core.L_F_definition.subs(vals).evalf(40)
    vals[c_gamma] = sp.Float(res.chosen["c_gamma"], 40)
    return vals


def _le(lhs: sp.Expr, rhs: sp.Expr, vals: dict) -> bool:
    lv, rv = lhs.subs(vals).evalf(40), rhs.subs(vals).evalf(40)
    if rv == sp.zoo or rv is sp.oo:
        return True
    return bool(lv <= rv * (1 + TOL))


@functools.lru_cache(maxsize=64)
def _robbins_monro(a: float) -> bool:
    """Independent: sum eta_r diverges and sum eta_r^2 converges (sympy's convergence tests)."""
    term = core.schedule_power.subs({c: 1, alpha: sp.Float(a)})
    return (not sp.Sum(term, (r, 0, sp.oo)).is_convergent()) and bool(sp.Sum(term**2, (r, 0, sp.oo)).is_convergent())


@pytest.mark.parametrize("a", [0.3, 0.5, 0.5000001, 0.75, 1.0, 1.0000001, 1.5])
def test_robbins_monro_decision_matches_series_convergence(a: float) -> None:
    res = feasibility("ds.theorem5_3", {"L_f": 1, "G": 1, "B": 1, "sigma": 1}, {"alpha": a})
    assert res.condition("A4(i)").meets == _robbins_monro(a)
    assert res.step_sizes["robbins_monro"] == _robbins_monro(a)


@pytest.mark.slow  # 12 s at load 5-7 (pytest --durations, 2026-12-04)
@settings(max_examples=25)
@given(constants_st, st.floats(0.05, 1.5), st.sampled_from([0.3, 0.5, 0.55, 0.75, 1.0, 1.25]), st.floats(0.0, 5.0))
def test_theorem5_3_admissible_iff_conditions_hold(consts, fc, a, cg) -> None:
    base = feasibility("ds.theorem5_3", consts, {"alpha": a, "c_gamma": cg})
    cc = fc * base.step_sizes["c_max"]
    res = feasibility("ds.theorem5_3", consts, {"alpha": a, "c_gamma": cg, "c": cc})
    vals = {**_env(res), c: sp.Float(cc, 40), alpha: sp.Float(a, 40)}
    eta0 = core.schedule_power.subs(r, 0)
    held = [_le(eta0, core.eta_max_smooth, vals)]
    if res.constants["rho"] > 0:
        held.append(_le(eta0, core.eta_max_weak, vals))
    held.append(_robbins_monro(a))
    assert res.admissible == all(held)
    # r_0: the first round from which gamma_r = c_gamma eta_r is absorbed, by substitution into the schedule
    r0 = res.step_sizes["r_0"]
    gam = core.gamma_r_max.subs(eta, core.schedule_power).subs(vals)
    thr = core.absorption_gamma_max.subs(vals)
    assert _le(gam.subs(r, r0), thr, vals)
    if r0 > 0:
        assert not _le(gam.subs(r, r0 - 1), thr, vals)


@pytest.mark.slow  # 10 s at load 5-7 (pytest --durations, 2026-12-04)
@settings(max_examples=25)
@given(constants_st, st.floats(0.0, 5.0))
def test_largest_step_is_tight_and_one_past_it_is_rejected(consts, cg) -> None:
    res = feasibility("ds.theorem5_3", consts, {"alpha": 1.0, "c_gamma": cg})
    vals = _env(res)
    emax = res.step_sizes["eta_max"]
    bounds = {"A4(iv)": core.eta_max_smooth}
    if res.constants["rho"] > 0:
        bounds["A4(ii)"] = core.eta_max_weak
    binding = res.step_sizes["eta_max_binding"]
    for rhs in bounds.values():
        assert _le(sp.Float(emax, 40), rhs, vals)
    bound = bounds[binding].subs(vals).evalf(40)
    assert abs(sp.Float(emax, 40) / bound - 1) < 1e-9
    assert res.admissible and res.binding_by_parameter["c"] == binding
    past = feasibility("ds.theorem5_3", consts, {"alpha": 1.0, "c_gamma": cg, "c": res.condition(binding).bound * (1 + 1e-6)})
    assert not past.admissible and past.condition(binding).meets is False


@pytest.mark.slow  # 21 s at load 5-7 (pytest --durations, 2026-12-04)
@settings(max_examples=12)
@given(constants_st, st.floats(0.2, 3.0), st.floats(1e-3, 1.0), st.floats(0.0, 3.0), st.floats(0.05, 2.0))
def test_corollary_ii_conditions_and_rounds(consts, fc, delta0, cg, eps_frac) -> None:
    consts = {**consts, "Delta_0": delta0}
    base = feasibility("ds.corollary_ii", consts, {"c_gamma": cg})
    cc = fc * base.step_sizes["c"]
    res0 = feasibility("ds.corollary_ii", consts, {"c_gamma": cg, "c": cc, "R": 100})
    eps = eps_frac * res0.guarantee.total
    res = feasibility("ds.corollary_ii", consts, {"c_gamma": cg, "c": cc}, eps)
    vals = {**_env(res), c: sp.Float(cc, 40), Delta_0: sp.Float(delta0, 40)}
    step = core.schedule_sqrt_horizon

    def valid(rr: int) -> bool:
        v = {**vals, R: sp.Integer(rr)}
        ok = _le(step, core.eta_max_smooth, v) and _le(core.gamma_r_max.subs(eta, step), core.absorption_gamma_max, v)
        return ok and (res.constants["rho"] == 0 or _le(step, core.eta_max_weak, v))

    r_min = res.step_sizes["R_min"]
    assert valid(r_min) and (r_min == 1 or not valid(r_min - 1))
    bound = core.corollary_ii_bound(Delta_0)
    rn = res.rounds_needed
    assert rn.flag == "exact"
    k = rn.rounds
    assert valid(k)
    assert bound.subs({**vals, R: sp.Integer(k)}).evalf(40) <= eps * (1 + TOL)  # TOL: ties at a float boundary
    assert k == r_min or bound.subs({**vals, R: sp.Integer(k - 1)}).evalf(40) > eps * (1 - TOL)
    # with Delta_0 unknown: the same horizon, symbolic in Delta_0
    sym = feasibility(
        "ds.corollary_ii", {kk: v for kk, v in consts.items() if kk != "Delta_0"}, {"c_gamma": cg, "c": cc}, eps
    ).rounds_needed
    assert sym.flag == "symbolic" and {s.name for s in sym.expression.free_symbols} == {"Delta_0"}
    assert abs(int(sym.expression.subs(Delta_0, delta0)) - k) <= 1


def test_corollary_ii_terms_at_a_horizon() -> None:
    consts = {"L_f": 1, "L_r": 0.5, "lam": 0.2, "G": 1, "B": 1, "G_r": 1, "sigma": 1, "Delta_0": 2}
    res = feasibility("ds-fedproxgrad", consts, {"c": 0.1, "c_gamma": 1.0, "R": 400})
    assert res.theorem == "ds.corollary_ii"
    L_F_ = 1 + 0.2 * 0.5
    by_hand = 4 * 2 / (0.1 * 20) + 6 * L_F_ * 1 * 0.1 / 20 + 5 * (1 + 2 * 1 * 0.04 * 1) * 1.0 * 0.01 / 400
    assert res.guarantee.total == pytest.approx(by_hand, rel=1e-12)
    assert res.guarantee.flag == "exact" and len(res.guarantee.terms) == 3


def test_constant_step_floor_and_unreachable_message() -> None:
    consts = {"L_f": 1, "L_r": 0.5, "lam": 0.2, "G": 1, "B": 1, "G_r": 1, "sigma": 1}
    res = feasibility("ds.corollary_ii", consts, {"eta": 0.1, "gamma_r": 0.2, "c_gamma": 2.0}, 0.01)
    floor = res.step_sizes["constant_floor"]
    by_hand = 6 * 1.1 * 1 * 0.1 + 5 * (1 + 2 * 0.04) * 0.2**2  # 6 L_F sigma^2 eta + 5 C_e K_e^2 gamma^2
    assert floor == pytest.approx(by_hand, rel=1e-12)
    assert any(n.endswith(f"unreachable: floor {floor:.6g} > epsilon 0.01") for n in res.notes)
    assert res.condition("constant.(10)").meets is True  # 0.2 <= 2.0 * 0.1
    assert res.condition("constant.absorption").meets is True  # 0.2 <= 1/sqrt(10)
    bad = feasibility("ds.corollary_ii", consts, {"eta": 0.1, "gamma_r": 0.4, "c_gamma": 2.0})
    assert bad.condition("constant.absorption").meets is False and bad.condition("constant.(10)").meets is False


def test_theorem5_3_guarantee_is_asymptotic() -> None:
    res = feasibility(
        "ds-fedproxgrad", {"L_f": 1, "G": 1, "B": 2, "sigma": 1, "Delta_0": 1}, {"alpha": 0.75, "c_gamma": 3.0, "R": 200}, 0.1
    )
    assert res.theorem == "ds.theorem5_3"
    assert res.guarantee.relation == "->" and res.guarantee.total == 0.0
    # no rate: the rounds solve the decaying-schedule bound at a stated reference Delta_r0 + Xi_sum (a number)
    assert res.rounds_needed.flag == "symbolic" and res.rounds_needed.rounds == res.rounds_needed.reference_rounds > 200
    assert "no rate" in res.rounds_needed.message and "no rate" in res.footing_line()


def test_default_c_gamma_is_the_exact_prox_ratio() -> None:
    res = feasibility("ds.corollary_ii", {"L_f": 2, "G": 1, "B": 1, "sigma": 1})
    emax = res.step_sizes["eta_max_smooth"]  # rho = L_f by default, so A4(iv) binds
    assert res.step_sizes["c_gamma"] == pytest.approx(2 / (1 - 2 * emax), rel=1e-12)  # L_f/(1 - L_f eta): notes 1.5(4)
    assert math.isclose(res.step_sizes["eta_max"], emax, rel_tol=1e-9)


DS = {"L_f": 1.0, "L_r": 0.5, "lam": 0.2, "G": 1.0, "B": 1.0, "G_r": 1.0, "sigma": 1.0}


@pytest.mark.parametrize(
    ("theorem", "constants", "params", "target", "match"),
    [
        ("ds-fedproxgrad", {**DS, "G_r": -1.0}, {}, None, r"G_r must be >= 0"),
        ("ds-fedproxgrad", {**DS, "B": 0.0}, {}, None, r"B must be > 0"),
        ("ds-fedproxgrad", {**DS, "L_f": -2.0}, {}, None, r"L_f must be > 0"),
        ("ds-fedproxgrad", {k: v for k, v in DS.items() if k != "G"}, {}, None, r"G is required"),
        ("ds-fedproxgrad", DS, {"R": 0}, None, r"R must be an integer >= 1"),
        ("ds-fedproxgrad", DS, {"R": 10.5}, None, r"R must be an integer >= 1"),
        ("ds-fedproxgrad", DS, {"alpha": -0.5}, None, r"alpha must be > 0"),
        ("ds-fedproxgrad", DS, {"c_gamma": -1}, None, r"c_gamma must be >= 0"),
        ("ds-fedproxgrad", DS, {"c": 0}, None, r"c must be > 0"),
        ("ds-fedproxgrad", DS, {}, 0.0, r"epsilon must be > 0"),
        ("ds-fedproxgrad", {**DS, "sigma": 1.0, "sigma2": 4.0}, {}, None, r"sigma2 must equal sigma\*\*2"),
        ("ds-fedproxgrad", DS, {"m": 2}, None, r"unknown parameter 'm'"),
    ],
)
def test_invalid_input(theorem, constants, params, target, match) -> None:
    with pytest.raises(ValueError, match=match):
        feasibility(theorem, constants, params, target)


def test_region_margins_are_the_theory_expressions() -> None:
    res = feasibility("ds.corollary_ii", DS, {"c_gamma": 2.0})
    point = {eta: 0.1, gamma_r: 0.25, c_gamma: 2.0}
    for name, expr in res.region.items():
        assert set(expr.free_symbols) <= {eta, gamma_r, c_gamma}, name
    assert float(res.region["(10)"].subs(point)) == pytest.approx(2.0 * 0.1 - 0.25)
    assert float(res.region["absorption"].subs(point)) == pytest.approx(1 / math.sqrt(10) - 0.25)


@pytest.mark.parametrize("params", [{"c": 0.1, "c_gamma": 1.0, "R": 400}, {"c_gamma": 1.0}], ids=["R given", "R_min"])
def test_corollary_ii_reports_the_step_it_runs_with(params: dict) -> None:
    """Corollary (ii), eq. (26), runs with eta = c/sqrt(R) and gamma = c_gamma eta: the point (the answer line's eta
    and gamma_r) is the theory's schedule at the chosen c and R, not the largest constant step."""
    consts = {"L_f": 1, "L_r": 0.5, "lam": 0.2, "G": 1, "B": 1, "G_r": 1, "sigma": 1}
    res = feasibility("ds.corollary_ii", consts, params)
    at = {c: sp.Float(res.chosen["c"], 40), R: res.chosen["R"], c_gamma: sp.Float(res.chosen["c_gamma"], 40)}
    step = core.schedule_sqrt_horizon.subs(at).evalf(40)
    assert res.chosen["eta"] == pytest.approx(float(step), rel=1e-12)
    assert res.chosen["gamma_r"] == pytest.approx(float(core.gamma_r_max.subs(at).subs(eta, step).evalf(40)), rel=1e-12)
    assert res.step_sizes["eta_R"] == res.chosen["eta"]
