"""DS FedProxGrad formulas against independent computations: brute force, closed forms, exact simulations."""

from __future__ import annotations

import math

import pytest
import sympy as sp
from fedbounds.theory.core.evaluate import evaluate, substitute, to_function
from fedbounds.theory.core.symbols import Delta_0, r
from fedbounds.theory.ds_fedproxgrad import formulas as ds
from fedbounds.theory.ds_fedproxgrad.claims import is_robbins_monro
from hypothesis import given, settings
from hypothesis import strategies as st

pos = st.floats(0.05, 20.0)
unit = st.floats(1e-3, 1.0)


# ---- Robbins-Monro ----

@pytest.mark.parametrize(("alpha", "expected"), [(0.4, False), (0.5, False), (0.6, True), (0.75, True), (1.0, True), (1.2, False)])
def test_robbins_monro_power_family(alpha: float, expected: bool) -> None:
    assert bool(is_robbins_monro({"kind": "power", "c": 0.1, "alpha": alpha})) is expected


@pytest.mark.parametrize("alpha", [sp.Rational(1, 2), sp.Rational(3, 5), sp.Rational(3, 4), 1, sp.Rational(5, 4)])
def test_robbins_monro_agrees_with_sympy_convergence(alpha: sp.Expr) -> None:
    """The p-series rule against sympy's own convergence test (a different code path)."""
    diverges = not sp.Sum(1 / (r + 1) ** alpha, (r, 0, sp.oo)).is_convergent()
    sq = bool(sp.Sum(1 / (r + 1) ** (2 * alpha), (r, 0, sp.oo)).is_convergent())
    res = is_robbins_monro(sp.Rational(1, 7) / (r + 1) ** alpha)
    assert (res.sum_diverges, res.sum_sq_converges) == (diverges, sq)


def test_robbins_monro_other_schedules() -> None:
    assert bool(is_robbins_monro(1 / ((r + 1) * sp.log(r + 2))))
    assert not bool(is_robbins_monro(sp.exp(-r)))
    assert not bool(is_robbins_monro({"kind": "constant", "eta": 0.1}))
    assert not bool(is_robbins_monro({"kind": "sqrt_horizon", "c": 0.1, "R": 100}))
    alpha = sp.Symbol("alpha", positive=True)
    cond = is_robbins_monro(sp.Symbol("c", positive=True) / (r + 1) ** alpha).holds
    assert [bool(cond.subs(alpha, a)) for a in (0.5, 0.7, 1, 1.1)] == [False, True, True, False]
    with pytest.raises(TypeError):
        bool(is_robbins_monro({"kind": "power", "c": 1, "alpha": alpha}))


@pytest.mark.parametrize(("spec", "name"), [({"kind": "power", "c": -1, "alpha": 0.7}, "c"),
                                            ({"kind": "power", "c": 1, "alpha": 0}, "alpha"),
                                            ({"kind": "constant", "eta": 0}, "eta"),
                                            ({"kind": "cosine"}, "kind")])
def test_robbins_monro_bad_input(spec: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        is_robbins_monro(spec)


# ---- r_0 ----

@pytest.mark.parametrize(("c", "cg", "B", "alpha"), [(0.1, 1.0, 1.0, 0.75), (0.1, 30.0, 2.0, 0.6), (0.05, 100.0, 3.0, 1.0),
                                                     (0.2, 5.0, 0.5, 0.9), (0.01, 0.0, 1.0, 0.7)])
def test_r0_closed_form_matches_brute_force(c: float, cg: float, B: float, alpha: float) -> None:
    threshold = 1 / (math.sqrt(10) * B)
    brute = next(k for k in range(10**6) if all(cg * c / (s + 1) ** alpha <= threshold * (1 + 1e-12) for s in range(k, k + 200)))
    f = to_function(ds.r0_power, ["c", "c_gamma", "B", "alpha"])
    assert f(c, cg, B, alpha) == brute


# ---- inequalities of Lemma 5.2 at random admissible points ----

@settings(max_examples=60)
@given(L_F=pos, B=pos, G=pos, G_r=pos, lam=pos, sigma2=pos, cg=pos, t=unit, v=st.floats(0.0, 1.0))
def test_xi_explicit_bounds_xi(L_F, B, G, G_r, lam, sigma2, cg, t, v) -> None:
    eta = t / (6 * L_F)
    vals = {"L_F": L_F, "B": B, "G": G, "G_r": G_r, "lambda": lam, "sigma^2": sigma2, "c_gamma": cg, "eta": eta, "gamma_r": v * cg * eta}
    assert evaluate(ds.Xi, vals) <= evaluate(ds.Xi_explicit, vals) * (1 + 1e-12)


@settings(max_examples=60)
@given(L_F=pos, B=pos, t=unit, v=st.floats(0.0, 1.0))
def test_absorbed_coefficient(L_F, B, t, v) -> None:
    eta = t / (6 * L_F)
    gamma = v / (math.sqrt(10) * B)
    coef = to_function(ds.coefficient20, ["eta", "L_F", "B", "gamma_r"])(eta, L_F, B, gamma)
    assert coef <= -eta / 4 * (1 - 1e-12)
    phi = to_function(ds.Phi_r, ["eta", "L_F", "B", "gamma_r"])(eta, L_F, B, gamma)
    assert phi >= 0.25 - 1e-12


def test_phi_prefix_numbers() -> None:
    """L_F = B = 1, eta = 1/6, gamma = 1/2: -1/6 + 1/24 + 1/24 + (1/6)(5/4)(2)(1/4) = 1/48, by hand."""
    coef = substitute(ds.coefficient20, {"L_F": 1, "B": 1, "eta": sp.Rational(1, 6), "gamma_r": sp.Rational(1, 2)})
    assert coef == sp.Rational(1, 48)


@settings(max_examples=40)
@given(a=st.floats(-1.0, 1.0), L=pos, t=unit, x=st.floats(0.1, 5.0))
def test_exact_prox_inexactness_on_quadratics(a, L, t, x) -> None:
    """f(w) = (a L/2) w^2 with |a| <= 1 is L-smooth; its exact prox y = x/(1 + a L eta) (closed form) has
    gamma = |(y - x)/eta + f'(x)|/|f'(x)| <= L eta/(1 - L eta)."""
    if abs(a) < 1e-6:
        return
    eta = t / (6 * L)
    y = x / (1 + a * L * eta)
    measured = abs((y - x) / eta + a * L * x) / abs(a * L * x)
    assert measured <= to_function(ds.exact_prox_gamma, ["L_f", "eta"])(L, eta) * (1 + 1e-9)


@settings(max_examples=40)
@given(L_F=pos, B=st.floats(0.3, 3.0), G=pos, sigma2=pos, t=unit, v=st.floats(0.0, 1.0), x=st.floats(-5.0, 5.0))
def test_descent_bound_on_a_quadratic(L_F, B, G, sigma2, t, v, x) -> None:
    """F(x) = (L_F/2) x^2 (one client, lambda = 0), e_f = gamma F'(x) (uphill, the largest (10) allows),
    e_stoch = +-sqrt(sigma^2): E F(x+) - F(x) computed exactly is below (20) ||g||^2 + (22)."""
    eta = t / (6 * L_F)
    gamma = v / (math.sqrt(10) * B)
    g = L_F * x
    def F(z: float) -> float:
        return L_F / 2 * z * z
    outcomes = [x - eta * g + eta * gamma * g + s * eta * math.sqrt(sigma2) for s in (-1, 1)]
    change = sum(F(z) for z in outcomes) / 2 - F(x)
    vals = {"L_F": L_F, "B": B, "G": G, "G_r": 0, "lambda": 0, "sigma^2": sigma2, "eta": eta, "gamma_r": gamma, "||g||^2": g * g}
    bound = evaluate(ds.descent_unabsorbed_bound, vals)
    assert change <= bound + 1e-12 * (1 + abs(bound))
    assert change <= evaluate(ds.lemma5_2_bound, vals) + 1e-12 * (1 + abs(bound))  # absorbed: gamma below the threshold


@pytest.mark.parametrize(("eta_c", "v", "R"), [(1.0, 0.0, 200), (0.5, 1.0, 500), (1.0, 1.0, 50), (0.1, 0.5, 1000)])
def test_constant_step_bound_on_an_exact_recursion(eta_c: float, v: float, R: int) -> None:
    """Scalar F = (L/2) x^2, e_f = gamma F'(x) uphill, noise variance sigma^2: E[x_r^2] follows exactly
    m_{r+1} = (1 - eta L (1 - gamma))^2 m_r + eta^2 sigma^2; the average of E F'(x_r)^2 is below the bound."""
    L, B, G, sigma2, x0 = 2.0, 1.0, 0.5, 0.3, 3.0
    eta = eta_c / (6 * L)
    gamma = v / (math.sqrt(10) * B)
    m, total = x0 * x0, 0.0
    for _ in range(R):
        total += L * L * m
        m = (1 - eta * L * (1 - gamma)) ** 2 * m + eta * eta * sigma2
    vals = {"L_F": L, "B": B, "G": G, "G_r": 0, "lambda": 0, "sigma^2": sigma2, "Delta_0": L / 2 * x0 * x0}
    bound = evaluate(ds.constant_step_bound(Delta_0, eta, gamma, R), vals)
    assert total / R <= bound


def test_corollary_ii_numbers_and_horizon() -> None:
    """By hand: Delta_0 = c = L_F = sigma^2 = G = B = c_gamma = 1, lambda = 0, R = 100:
    4/10 + 6/10 + 5 * 2 * (1/2) / 100 = 1.05; horizon max(36, 10) = 36."""
    vals = {"Delta_0": 1, "c": 1, "L_F": 1, "sigma^2": 1, "G": 1, "B": 1, "c_gamma": 1, "lambda": 0, "G_r": 0, "R": 100}
    assert evaluate(ds.corollary_ii_bound(Delta_0), vals) == pytest.approx(1.05)
    assert evaluate(ds.corollary_ii_horizon_min, vals) == 36


def test_schedule_printed_is_undefined_at_zero() -> None:
    assert substitute(ds.schedule_power_printed, {"r": 0, "alpha": sp.Rational(3, 4)}) == sp.zoo
