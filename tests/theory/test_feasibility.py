"""The feasibility calculator for FedNMap (Theorem 5 conditions, Theorem 8 bound, Table 1).

Every decision of the calculator is checked by substituting its numbers back into the theory's sympy
relations with ``subs`` + high-precision ``evalf`` (a different code path from the calculator's
``lambdify(..., modules="math")``), never by recomputing the calculator's own formula.
"""

from __future__ import annotations

import json
import math

import pytest
import sympy as sp
from fedbounds.theory.core.symbols import C_0, EL_0, L, Q, T, eta_a, eta_hat, eta_s, gamma, m, mu, n, rho, sigma2
from fedbounds.theory.feasibility import THEOREMS, feasibility, resolve_theorem
from fedbounds.theory.fednmap import formulas as core
from hypothesis import assume, given, settings
from hypothesis import strategies as st

TOL = 1e-12  # the calculator's relative tolerance on "<=" (floating point)


def _values(res) -> dict[sp.Symbol, sp.Float]:
    c, p = res.constants, res.chosen
    vals = {L: c["L"], rho: c["rho"], n: c["n"], Q: c["Q"], sigma2: c["sigma2"]}
    if "mu" in c:
        vals[mu] = c["mu"]
    vals.update({gamma: p["gamma"], eta_a: p["eta_a"], eta_s: p["eta_s"], m: p["m"]})
    vals[eta_hat] = core.eta_hat_definition.subs({k: sp.Float(v, 40) for k, v in vals.items()})
    return {k: sp.Float(v, 40) for k, v in vals.items()}


def _sym_margin(sym: sp.Symbol, vals: dict[sp.Symbol, sp.Float]) -> tuple[sp.Float, sp.Float]:
    """(bound, value) of the Theorem 5 condition on ``sym``, by sympy substitution at 40 digits."""
    rhs = core.theorem5_conditions[sym].subs(vals).evalf(40)
    return rhs, vals[sym]


def _holds(sym: sp.Symbol, vals: dict[sp.Symbol, sp.Float]) -> bool:
    bound, value = _sym_margin(sym, vals)
    return bool(value <= bound * (1 + TOL))


constants_st = st.fixed_dictionaries(
    {
        "L": st.floats(0.05, 20),
        "rho": st.one_of(st.just(0.0), st.floats(0.0, 5.0)),
        "n": st.integers(1, 200),
        "Q": st.integers(1, 40),
        "sigma": st.floats(0.0, 5.0),
    }
)
factor_st = st.floats(0.05, 1.3)


@pytest.mark.slow  # 17 s at load 5-7 (pytest --durations, 2026-12-04)
@settings(max_examples=25)
@given(constants_st, factor_st, factor_st, factor_st, st.integers(1, 30))
def test_admissible_iff_every_condition_holds_when_substituted_back(consts, fg, fa, fh, mm) -> None:
    base = feasibility("fednmap.theorem5", consts, {"m": mm})
    sz = base.step_sizes
    g = fg * sz["gamma_max"]
    assume(consts["rho"] == 0 or g * consts["rho"] < 1)
    params = {"gamma": g, "m": mm, "eta_a": fa * sz["eta_a_max"], "eta_hat": fh * sz["eta_hat_max"]}
    res = feasibility("fednmap.theorem5", consts, params)
    vals = _values(res)
    held = {s: _holds(s, vals) for s in core.theorem5_conditions}
    if res.admissible:
        assert all(held.values()), held
    else:
        assert not all(held.values()), held
    for cond in res.conditions:
        sym = {"gamma": gamma, "eta_hat": eta_hat, "eta_a": eta_a}[cond.parameter]
        assert cond.meets == held[sym]


@pytest.mark.slow  # 26 s at load 5-7 (pytest --durations, 2026-12-04)
@settings(max_examples=20)
@given(constants_st, factor_st, factor_st, st.integers(1, 20))
def test_a_point_just_past_each_bound_is_rejected(consts, fa, fh, mm) -> None:
    g = 0.9 * feasibility("fednmap.theorem5", consts).step_sizes["gamma_max"]
    sz = feasibility("fednmap.theorem5", consts, {"m": mm, "gamma": g}).step_sizes
    point = {"gamma": g, "m": mm, "eta_a": min(fa, 1.0) * sz["eta_a_max"], "eta_hat": min(fh, 1.0) * sz["eta_hat_max"]}
    res = feasibility("fednmap.theorem5", consts, point)
    assert res.admissible
    for cond in res.conditions:
        past = dict(point, **{cond.parameter: cond.bound * (1 + 1e-6)})
        bad = feasibility("fednmap.theorem5", consts, past)
        assert not bad.admissible
        assert bad.condition(cond.name).meets is False
        sym = {"gamma": gamma, "eta_hat": eta_hat, "eta_a": eta_a}[cond.parameter]
        assert not _holds(sym, _values(bad))
    # the binding condition is the one with the least slack
    assert res.binding
    ratios = {c.name: c.ratio for c in res.conditions}
    assert min(ratios.values()) == pytest.approx(min(ratios[b] for b in res.binding), rel=1e-9)


@pytest.mark.slow  # 11 s at load 5-7 (pytest --durations, 2026-12-04)
@settings(max_examples=25)
@given(constants_st, st.integers(1, 50), st.one_of(st.none(), st.floats(0.01, 0.99)))
def test_largest_step_sizes_are_tight(consts, mm, fg) -> None:
    params: dict = {"m": mm}
    if fg is not None:
        params["gamma"] = fg * feasibility("fednmap.theorem5", consts).step_sizes["gamma_max"]
    res = feasibility("fednmap.theorem5", consts, params)
    sz = res.step_sizes
    vals = _values(res)
    for sym, key in ((gamma, "gamma_max"), (eta_hat, "eta_hat_max"), (eta_a, "eta_a_max")):
        at_max = {**vals, sym: sp.Float(sz[key], 40)}
        bound, value = _sym_margin(sym, at_max)
        assert value <= bound  # admissible
        assert abs(value / bound - 1) < 1e-9  # and tight
    # the default point (nothing but m given) is admissible and every condition binds
    if fg is None:
        assert res.admissible
        assert set(res.binding) == {c.name for c in res.conditions}


@pytest.mark.slow  # 12 s at load 5-7 (pytest --durations, 2026-12-04)
@settings(max_examples=20)
@given(constants_st, st.floats(1e-4, 1.0), st.floats(1e-3, 1.0))
def test_window_m_is_the_largest_admitted(consts, fh, fa) -> None:
    sz = feasibility("fednmap.theorem5", consts).step_sizes  # m = 1 maxima
    params = {"eta_hat": fh * sz["eta_hat_max"], "eta_a": fa * sz["eta_a_max"]}
    res = feasibility("fednmap.theorem5", consts, params)
    mm = res.step_sizes["m"]
    vals = _values(res)
    assert res.admissible
    assert all(_holds(s, {**vals, m: sp.Integer(mm)}) for s in (eta_hat, eta_a))
    nxt = {**vals, m: sp.Integer(mm + 1)}
    assert not (_holds(eta_hat, nxt) and _holds(eta_a, nxt))


def _bound_at(res, t: int) -> sp.Float:
    vals = _values(res)
    vals.update({C_0: sp.Float(res.constants["C_0"], 40), EL_0: sp.Float(res.constants["EL_0"], 40), T: sp.Integer(t)})
    return core.theorem8_bound.subs(vals).evalf(40)


@settings(max_examples=12)
@given(
    st.floats(0.5, 5),
    st.floats(0.01, 0.5),
    st.floats(0.05, 1.0),
    st.floats(0.0, 20.0),
    st.floats(0.01, 100.0),
    st.floats(1e-3, 1.0),
)
@pytest.mark.slow  # 25 s at load 5-7 (pytest --durations, 2026-12-04)
def test_rounds_needed_theorem8_exact(L_, mu_frac, sigma_, C0, EL0, fh) -> None:
    consts = {"L": L_, "rho": 0.1, "n": 20, "Q": 4, "sigma": sigma_, "mu": mu_frac * L_, "C_0": C0, "EL_0": EL0}
    sz = feasibility("fednmap.theorem8", consts).step_sizes
    params = {"eta_hat": fh * sz["eta_hat_max"], "eta_a": 0.01 * sz["eta_a_max"]}
    res0 = feasibility("fednmap.theorem8", consts, params)
    eps = 1.5 * res0.guarantee.floor + 1e-3
    res = feasibility("fednmap.theorem8", consts, params, eps)
    rn = res.rounds_needed
    assert rn.flag == "exact" and rn.rounds is not None
    assert _bound_at(res, rn.rounds) <= eps * (1 + TOL)  # TOL: ties at a float boundary
    if rn.rounds > 0:
        assert _bound_at(res, rn.rounds - 1) > eps * (1 - TOL)
    # without C_0 and E[L_0] the answer is the same, but symbolic in them
    sym = feasibility("fednmap.theorem8", {k: v for k, v in consts.items() if k not in ("C_0", "EL_0")}, params, eps).rounds_needed
    # ``rounds`` holds the number at the reference constants the footing line names; the exact answer is symbolic
    assert sym.flag == "symbolic" and sym.rounds == sym.reference_rounds and isinstance(sym.rounds, int)
    names = {s.name for s in sym.expression.free_symbols}
    assert names == {"C_0", "E[L_0]"}
    t_real = float(sym.expression.subs({s: (C0 if s.name == "C_0" else EL0) for s in sym.expression.free_symbols}))
    assert rn.rounds - 1 - 1e-9 * rn.rounds <= max(t_real, 0.0) <= rn.rounds + 1e-9 * rn.rounds


def test_theorem8_unreachable_floor_and_hint() -> None:
    consts = {"L": 1, "rho": 0.1, "n": 10, "Q": 5, "sigma": 1, "mu": 0.1}
    res = feasibility("fednmap", consts, {"T": 1000, "m": 1}, 0.1)  # a fixed window m = 1 (else m is chosen)
    assert res.theorem == "fednmap.theorem8"
    rn = res.rounds_needed
    floor = res.guarantee.floor
    # the floor, by sympy substitution of the theory's expression
    vals = _values(res)
    assert floor == pytest.approx(float(core.theorem8_floor.subs(vals).evalf(30)), rel=1e-12)
    assert rn.flag == "unreachable" and rn.message.startswith(f"unreachable: floor {floor:.6g} > epsilon 0.1")
    # the transient term stays symbolic, flagged with its unknowns; the other two are numbers
    transient, variance, drift = res.guarantee.terms
    assert transient.flag == "unknown" and set(transient.unknowns) == {"C_0", "E[L_0]"}
    assert variance.value == pytest.approx(36 / (1 * 10 * 0.1 * 5))  # 36 sigma^2/(m n mu Q), by hand
    assert drift.flag == "exact" and res.guarantee.total is None


def test_theorem5_guarantee_is_an_O_expression() -> None:
    res = feasibility("fednmap", {"L": 1, "rho": 0.1, "n": 10, "Q": 5, "sigma": 1}, {"T": 100}, 0.1)
    assert res.theorem == "fednmap.theorem5"
    g = res.guarantee
    assert g.relation == "O" and g.flag == "O" and all(t.flag == "O" for t in g.terms)
    assert g.total == pytest.approx(math.sqrt(1 / (10 * 5 * 100)) + 1 / 100)  # Table 1 rate at T = 100, by hand
    rn = res.rounds_needed
    assert rn.flag == "O" and rn.rounds is None
    assert {s.name for s in rn.expression.free_symbols} == {"Delta_f", "G_0^2"}


def test_eta_s_range_and_derived_steps() -> None:
    consts = {"L": 2, "rho": 0.5, "n": 4, "Q": 8, "sigma": 1}
    res = feasibility("fednmap.theorem5", consts, {"eta_a": 1e-5, "eta_s": 3.0, "m": 2})
    assert res.chosen["eta_hat"] == pytest.approx(3.0 * 1e-5 * 8)
    sz = res.step_sizes
    assert sz["eta_s_max"] == pytest.approx(sz["eta_hat_max"] / (1e-5 * 8), rel=1e-9)
    assert sz["eta_s_at_maxima"] == pytest.approx(1 / math.sqrt(2), rel=1e-9)  # 1/sqrt(m), from the two conditions
    eta_s_bound = next(b for b in res.condition("theorem5.eta_hat").implied if b.parameter == "eta_s")
    assert eta_s_bound.upper == pytest.approx(sz["eta_s_max"], rel=1e-9)


def test_table1_rows_follow_the_problem_class() -> None:
    consts = {"L": 1, "rho": 0.0, "n": 10, "Q": 1, "sigma": 1, "mu": 0.5}
    res = feasibility("fednmap", consts, {"T": 100}, problem={"convex": True, "bounded_subgradients": False})
    rows = {(r.method, r.reference): r for r in res.table1}
    assert rows[("EControlDA", "Gao et al., 2025")].applies is True  # f CVX, phi CVX (rho = 0), Q = 1
    assert rows[("Zhang", "Zhang et al., 2024a")].applies is False  # needs B_psi
    assert rows[("FedDA", "Yuan et al., 2021")].applies is None  # quadratic, zeta unknown
    assert all(r.applies for r in res.table1 if r.method == "FedNMap")
    assert rows[("FedNMap", "This work (Theorem 8)")].rate_value == pytest.approx(1 / (10 * 1 * 100) + 1 / 100**2)
    weak = feasibility("fednmap", {**consts, "rho": 0.3}, {"T": 100}, problem={"convex": True})
    assert {r.method: r.applies for r in weak.table1}["EControlDA"] is False  # phi only weakly convex


def test_result_serialises_and_renders_latex() -> None:
    res = feasibility("fednmap.theorem8", {"L": 1, "rho": 0.1, "n": 10, "Q": 5, "sigma": 1, "mu": 0.1}, {"T": 10}, 0.5)
    d = json.loads(json.dumps(res.to_dict()))
    assert {"conditions", "binding", "step_sizes", "guarantee", "rounds_needed", "table1"} <= set(d)
    tex = res.to_latex()
    assert r"\le" in tex and r"\begin{align*}" in tex


def test_constant_objects_are_accepted() -> None:
    class Const:
        def __init__(self, value: float) -> None:
            self.value = value

    a = feasibility("fednmap.theorem5", {"L": Const(1.0), "rho": Const(0.0), "n": 3, "Q": 2, "sigma": Const(0.5)})
    b = feasibility("fednmap.theorem5", {"L": 1.0, "rho": 0.0, "n": 3, "Q": 2, "sigma": 0.5})
    assert a.step_sizes["eta_a_max"] == b.step_sizes["eta_a_max"]


BASE = {"L": 1.0, "rho": 0.1, "n": 10, "Q": 5, "sigma": 1.0}


@pytest.mark.parametrize(
    ("theorem", "constants", "params", "target", "match"),
    [
        ("fednmap", {**BASE, "L": -1.0}, {}, None, r"L must be > 0"),
        ("fednmap", {**BASE, "rho": -0.1}, {}, None, r"rho must be >= 0"),
        ("fednmap", {**BASE, "sigma": -1.0}, {}, None, r"sigma must be >= 0"),
        ("fednmap", BASE, {"gamma": 10.0}, None, r"gamma must lie in \(0, 1/rho\)"),
        ("fednmap", BASE, {"gamma": 25.0}, None, r"gamma must lie in \(0, 1/rho\)"),
        ("fednmap", {**BASE, "mu": 2.0}, {}, None, r"mu must lie in \(0, L\]"),
        ("fednmap", {**BASE, "Q": 0}, {}, None, r"Q must be an integer >= 1"),
        ("fednmap", {**BASE, "n": 0}, {}, None, r"n must be an integer >= 1"),
        ("fednmap", {**BASE, "n": 2.5}, {}, None, r"n must be an integer >= 1"),
        ("fednmap", BASE, {"m": 2.5}, None, r"m must be an integer >= 1"),
        ("fednmap", BASE, {"m": 0}, None, r"m must be an integer >= 1"),
        ("fednmap", BASE, {"eta_a": -1e-3}, None, r"eta_a must be > 0"),
        ("fednmap", BASE, {"eta_a": 1e-4, "eta_s": 1.0, "eta_hat": 1.0}, None, r"eta_hat must equal eta_s\*eta_a\*Q"),
        ("fednmap", BASE, {}, 0.0, r"epsilon must be > 0"),
        ("fednmap", BASE, {}, -1.0, r"epsilon must be > 0"),
        ("fednmap", BASE, {"T": 0}, None, r"T must be an integer >= 1"),
        ("fednmap.theorem8", BASE, {}, None, r"mu is required .* \(0, L\]"),
        ("fednmap", {k: v for k, v in BASE.items() if k != "L"}, {}, None, r"L is required"),
        ("fednmap", {**BASE, "Lipschitz": 1}, {}, None, r"unknown constant 'Lipschitz'; allowed: L, rho"),
        ("fednmap", BASE, {"eta": 1}, None, r"unknown parameter 'eta'; allowed: gamma"),
        ("fednmap", {**BASE, "L": float("nan")}, {}, None, r"L must be finite"),
        ("fednmap.theorem9", BASE, {}, None, r"theorem must be one of fednmap.theorem5, fednmap.theorem8, ds.theorem5_3"),
    ],
)
def test_invalid_input_names_the_parameter_and_range(theorem, constants, params, target, match) -> None:
    with pytest.raises(ValueError, match=match):
        feasibility(theorem, constants, params, target)


def test_contradictory_problem_class() -> None:
    with pytest.raises(ValueError, match="pl=False contradicts mu"):
        feasibility("fednmap", {**BASE, "mu": 0.1}, problem={"pl": False})
    with pytest.raises(ValueError, match="phi_convex=True needs rho = 0"):
        feasibility("fednmap", BASE, problem={"phi_convex": True})
    with pytest.raises(ValueError, match="unknown problem-class flag"):
        feasibility("fednmap", BASE, problem={"convexx": True})


def test_aliases() -> None:
    assert resolve_theorem("fednmap", {"mu": 0.1}) == "fednmap.theorem8"
    assert resolve_theorem("fednmap", {}) == "fednmap.theorem5"
    assert resolve_theorem("ds-fedproxgrad", {}, {"alpha": 0.7}) == "ds.theorem5_3"
    assert resolve_theorem("ds-fedproxgrad", {}, {}) == "ds.corollary_ii"
    assert set(THEOREMS) == {"fednmap.theorem5", "fednmap.theorem8", "ds.theorem5_3", "ds.corollary_ii"}


def test_unreachable_suggestion_is_admissible_and_reaches_epsilon() -> None:
    """When Theorem 8's floor exceeds epsilon, the suggested (eta_hat, m, eta_a) must satisfy Theorem 5's
    conditions and put the floor below epsilon, both checked by substitution into the theory's expressions."""
    import sympy as sp
    from fedbounds.theory.core import symbols as S
    from fedbounds.theory.feasibility import feasibility
    from fedbounds.theory.fednmap import formulas as core

    consts = {"L": 1.0, "rho": 0.1, "n": 10, "Q": 5, "sigma": 1.0, "mu": 0.1}
    res = feasibility("fednmap.theorem8", consts, {"m": 1}, target={"epsilon": 0.1})  # m fixed: else it is chosen
    rn = res.rounds_needed
    assert rn.flag == "unreachable" and rn.suggestion is not None
    sug = rn.suggestion
    gamma_v = res.chosen["gamma"]
    subs = {S.L: 1, S.rho: sp.Rational(1, 10), S.n: 10, S.Q: 5, S.sigma2: 1, S.mu: sp.Rational(1, 10),
            S.gamma: gamma_v, S.m: int(sug["m"]), S.eta_hat: sug["eta_hat"], S.eta_a: sug["eta_a"]}
    assert float(core.theorem5_eta_hat_max.subs(subs)) >= sug["eta_hat"] * (1 - 1e-12)
    assert float(core.theorem5_eta_a_max.subs(subs)) >= sug["eta_a"] * (1 - 1e-12)
    assert float(core.theorem8_floor.subs(subs)) <= 0.1 * (1 + 1e-9)


# ---------------------------------------------------------------------------------------------------------
# issue 13: no hang on huge integers or tiny reals
# ---------------------------------------------------------------------------------------------------------

DS = {"L_f": 1.0, "L_r": 0.5, "lam": 0.2, "G": 1.0, "B": 1.0, "G_r": 1.0, "sigma": 1.0}


@pytest.mark.timeout(30)
@pytest.mark.parametrize("value", [2**53 + 1, 10**17, 2**80, 1e17])
def test_integer_interval_beyond_2_53_terminates(value) -> None:
    """feasible_interval(integer=True) stepped a float by 1.0: beyond 2^53 that never moves (issue 13)."""
    from fedbounds.theory.core.feasibility import feasible_interval

    lo, hi, ok = feasible_interval(lambda p: float(value) * 4 - p, float(value), integer=True)
    assert ok and hi is not None and lo is None
    assert abs(hi - 4 * float(value)) <= 1e-6 * 4 * float(value)


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("theorem", "constants", "params", "name"),
    [
        ("fednmap.theorem5", BASE, {"m": 10**17}, "m"),
        ("fednmap.theorem5", BASE, {"m": 2**80}, "m"),
        ("fednmap.theorem5", BASE, {"m": 1e17}, "m"),
        ("fednmap.theorem5", BASE, {"eta_hat": 1e-30}, "eta_hat"),
        ("fednmap.theorem5", BASE, {"eta_a": 1e-320}, "eta_a"),
        ("fednmap.theorem5", BASE, {"T": 10**30}, "T"),
        ("ds.corollary_ii", DS, {"R": 10**17}, "R"),
        ("ds.corollary_ii", DS, {"c": 1e-300}, "c"),
        ("ds.theorem5_3", DS, {"alpha": 1e-3, "c": 1.0, "c_gamma": 100.0}, "alpha"),
    ],
)
def test_extreme_values_work_or_are_rejected_at_once(theorem, constants, params, name) -> None:
    try:
        res = feasibility(theorem, constants, params)
    except ValueError as exc:
        assert name in str(exc), str(exc)
        assert "nan" not in str(exc).lower().split(name)[0]
        return
    _assert_finite(res)


def _assert_finite(res) -> None:
    """No NaN anywhere in an answer, no infinite point, bound or guarantee."""
    for k, v in res.chosen.items():
        assert math.isfinite(v), (k, v)
    for c in res.conditions:
        assert not math.isnan(c.bound) and (c.value is None or math.isfinite(c.value)), c
    for k, v in res.step_sizes.items():
        assert not (isinstance(v, float) and math.isnan(v)), (k, v)
    for t in res.guarantee.terms + res.guarantee.extra_terms:
        assert t.value is None or math.isfinite(t.value), t
    for r in res.table1:
        assert r.rate_value is None or math.isfinite(r.rate_value), r


# ---------------------------------------------------------------------------------------------------------
# issue 13: overflowing constants are rejected, naming the parameter (no nan/inf as an answer)
# ---------------------------------------------------------------------------------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("theorem", "constants", "params", "target", "name"),
    [
        ("fednmap.theorem5", {**BASE, "L": 1e308}, {}, None, "L"),
        ("fednmap.theorem8", {**BASE, "L": 1e308, "mu": 1.0}, {}, None, "L"),
        ("fednmap.theorem8", {**BASE, "sigma": 1e200, "mu": 0.1}, {}, 0.1, "sigma"),
        ("fednmap.theorem5", {**BASE, "Q": 1e300}, {}, None, "Q"),
        ("fednmap.theorem5", BASE, {"T": 1e300}, None, "T"),
        ("ds.corollary_ii", {**DS, "L_f": 1e-320}, {}, None, "L_f"),
        ("ds.corollary_ii", {**DS, "G": 1e300}, {}, None, "G"),
        ("ds.theorem5_3", {**DS, "B": 1e-310}, {"alpha": 0.75}, None, "B"),
    ],
)
def test_overflow_is_rejected_naming_the_parameter(theorem, constants, params, target, name) -> None:
    try:
        res = feasibility(theorem, constants, params, target)
    except ValueError as exc:
        msg = str(exc)
        assert msg.startswith(f"{name} ") or f" {name} " in msg or f"{name} =" in msg, msg
        assert "cannot convert" not in msg
        return
    _assert_finite(res)  # the answer is a number after all: then it must be a finite one


def test_huge_python_integer_is_rejected_naming_it() -> None:
    with pytest.raises(ValueError, match=r"^n must be"):
        feasibility("fednmap.theorem5", {**BASE, "n": 10**400})
