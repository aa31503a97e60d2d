"""FedNMap formulas against independent computations: prox operators written out here, brute force, exact recursions."""

from __future__ import annotations

import math
import random

import pytest
import sympy as sp
from fedbounds.theory.core.evaluate import evaluate, substitute, to_function
from fedbounds.theory.core.symbols import L, epsilon, mu, rho, sigma2
from fedbounds.theory.fednmap import formulas as fn
from fedbounds.theory.fednmap import table1
from fedbounds.theory.registry import get_claim
from hypothesis import given, settings
from hypothesis import strategies as st

# ---- natural residual vs normal map, with two regularisers written out here ----


def prox_l1(z: list[float], g: float) -> list[float]:
    """prox of g ||.||_1: soft thresholding (rho = 0)."""
    return [math.copysign(max(abs(v) - g, 0.0), v) for v in z]


def prox_wcvx(z: list[float], g: float, rho: float) -> list[float]:
    """prox of g phi, phi(y) = sum |y_k| - (rho/2) y_k^2 (rho-weakly convex), for g rho < 1:
    minimise |y| - rho y^2/2 + (y - z)^2/(2g): y = (z - g sign z)/(1 - g rho) if |z| > g, else 0."""
    return [math.copysign((abs(v) - g) / (1 - g * rho), v) if abs(v) > g else 0.0 for v in z]


def grad_f(x: list[float]) -> list[float]:
    """f(x) = (1/2) x^T A x - b^T x with A = [[2, 1], [1, 3]], b = [1, -1] (L = max eigenvalue)."""
    return [2 * x[0] + x[1] - 1, x[0] + 3 * x[1] + 1]


L_A = (5 + math.sqrt(5)) / 2


@pytest.mark.parametrize("rho", [0.0, 0.5, 2.0])
def test_nat_nor_relation_on_random_points(rho: float) -> None:
    rng = random.Random(1)
    gamma = 1 / (5 * (rho + L_A))
    bound = to_function(fn.nat_nor_sq_bound, ["gamma", "rho", "||F_nor||^2"])
    ratios = []
    for _ in range(2000):
        z = [rng.uniform(-2, 2), rng.uniform(-2, 2)]
        prox = (lambda w: prox_wcvx(w, gamma, rho)) if rho > 0 else (lambda w: prox_l1(w, gamma))
        x = prox(z)
        gx = grad_f(x)
        f_nor = [gx[k] + (z[k] - x[k]) / gamma for k in range(2)]
        f_nat = [x[k] - v for k, v in enumerate(prox([x[k] - gamma * gx[k] for k in range(2)]))]
        nat2, nor2 = sum(v * v for v in f_nat), sum(v * v for v in f_nor)
        assert nat2 <= bound(gamma, rho, nor2) * (1 + 1e-9) + 1e-15
        if nor2 > 1e-12:
            ratios.append(nat2 / bound(gamma, rho, nor2))
    assert max(ratios) > 0.99  # tight: equality when z and x - gamma grad f(x) share the active set


def test_normal_map_in_subdifferential_l1() -> None:
    """v = (z - prox(z))/gamma lies in d|.|(prox(z)) componentwise (sign, or [-1, 1] at 0)."""
    rng = random.Random(2)
    gamma = 0.3
    for _ in range(500):
        z = [rng.uniform(-1, 1) for _ in range(3)]
        x = prox_l1(z, gamma)
        for zk, xk in zip(z, x):
            v = (zk - xk) / gamma
            assert (abs(v - math.copysign(1.0, xk)) < 1e-12) if xk != 0 else (abs(v) <= 1 + 1e-12)


# ---- Theorem 5: window and conditions ----


def test_m_max_by_brute_force() -> None:
    """L = 1, rho = 0, gamma = 1/5: S = sqrt(26); the largest m with eta_hat <= 1/(100 m S) for eta_hat = 1e-4 is 19."""
    vals = {"L": 1.0, "rho": 0.0, "gamma": 0.2, "etahat": 1e-4}
    cond = to_function(fn.theorem5_eta_hat_max, ["m", "L", "rho", "gamma"])
    brute = max(m for m in range(1, 1000) if 1e-4 <= cond(m, 1.0, 0.0, 0.2))
    assert brute == 19
    assert evaluate(fn.m_max, vals) == 19


@settings(max_examples=40)
@given(L=st.floats(0.1, 10), rho=st.floats(0, 10), t=st.floats(0.01, 1), u=st.floats(1e-4, 1), es=st.floats(0.01, 100))
def test_eta_s_free_construction(L, rho, t, u, es) -> None:
    """Any eta_s: eta_a = min(eta_a_max, eta_hat_max/(eta_s Q)) and eta_hat = eta_s eta_a Q meet both conditions."""
    gamma = t / (5 * (rho + L))
    m, Q = 7, 4
    vals = {"L": L, "rho": rho, "gamma": gamma, "m": m, "Q": Q}
    ea_max, eh_max = evaluate(fn.theorem5_eta_a_max, vals), evaluate(fn.theorem5_eta_hat_max, vals)
    eta_a = min(ea_max, eh_max / (es * Q)) * u
    assert eta_a <= ea_max and es * eta_a * Q <= eh_max * (1 + 1e-12)
    assert evaluate(fn.eta_s_at_maxima, vals) == pytest.approx(1 / math.sqrt(m))


_ARGS = ["L", "rho", "gamma", "etahat", "Q", "n", "mu", "sigma2", "eta_a"]
_FLOOR_AT_M_MAX = to_function(fn.theorem8_floor_coupled, _ARGS)
_FLOOR_UPPER = to_function(fn.theorem8_floor_coupled_upper, _ARGS)
_M_MAX = to_function(fn.m_max, _ARGS[:4])
_ETA_HAT_W1 = to_function(fn.eta_hat_max_window1, ["L", "rho", "gamma"])


@settings(max_examples=40)
@given(L=st.floats(0.1, 10), rho=st.floats(0, 10), t=st.floats(0.01, 1), k=st.floats(1e-5, 1e-2),
       Q=st.integers(1, 50), n=st.integers(1, 50))
def test_floor_coupled_upper_bounds_the_floor_at_m_max(L, rho, t, k, Q, n) -> None:
    gamma = t / (5 * (rho + L))
    eh = k * _ETA_HAT_W1(L, rho, gamma)
    args = (L, rho, gamma, eh, Q, n, 0.3, 2.0, 1e-3)
    assert _M_MAX(*args[:4]) >= 1
    assert _FLOOR_AT_M_MAX(*args) <= _FLOOR_UPPER(*args) * (1 + 1e-12)


# ---- Lyapunov reconstruction: the window recursion reproduces Theorem 8 ----


_FIXED = {"gamma": 0.1, "n": 3, "Q": 2, "sigma2": 1.0, "eta_a": 1e-3, "L": 1.0, "rho": 0.5}
_LY_ARGS = ["etahat", "mu", "C_0", "m", "E[L_0]"]
_WINDOW_FACTOR = to_function(substitute(fn.lyapunov_window_factor, _FIXED), _LY_ARGS)
_WINDOW_NOISE = to_function(substitute(fn.lyapunov_window_noise, _FIXED), _LY_ARGS)
_THEOREM8 = to_function(substitute(fn.theorem8_bound, _FIXED), [*_LY_ARGS, "T"])


@settings(max_examples=40)
@given(L0=st.floats(0, 100), eh=st.floats(1e-4, 0.05), mu=st.floats(0.01, 2), C0=st.floats(0, 10), m=st.integers(1, 20),
       K=st.integers(1, 200))
def test_window_recursion_stays_below_theorem8(L0, eh, mu, C0, m, K) -> None:
    args = (eh, mu, C0, m, L0)
    factor = _WINDOW_FACTOR(*args)
    if factor < 0:  # the reconstruction needs m (1 - q) <= 1
        return
    noise = _WINDOW_NOISE(*args)
    value = L0
    for _ in range(K):
        value = factor * value + noise  # equality: the worst case the reconstruction allows
    bound = _THEOREM8(*args, K * m)
    assert value <= bound * (1 + 1e-9) + 1e-12


def test_lyapunov_claim_is_lambdifiable() -> None:
    claim = get_claim("fednmap.lyapunov")
    f = to_function(claim.extra["L_t"], ["psi_gap", "||F_nor||^2", "corr_err", "gamma", "C_0", "C_c"])
    assert f(1.0, 2.0, 3.0, 0.5, 4.0, 5.0) == pytest.approx(1 + 0.5 * 4 / 2 * 2 + 5 * 3)
    g = to_function(claim.conclusion, sorted(s.name for s in claim.conclusion.free_symbols))
    assert callable(g)


# ---- Theorem 8 and its complexity ----


def test_theorem8_limit_numbers() -> None:
    vals = {"etahat": 0.01, "mu": 1.0, "T": 10**6, "gamma": 0.1, "C_0": 1.0, "E[L_0]": 5.0, "sigma2": 1.0, "m": 4, "n": 3, "Q": 3,
            "eta_a": 0.0, "L": 1.0, "rho": 0.0}
    assert evaluate(fn.theorem8_bound, vals) == pytest.approx(36 / (4 * 3 * 3))


def test_pl_complexity_derived_scaling() -> None:
    """Doubling n Q halves the derived complexity's variance branch (linear speedup), and the printed second term
    does not move with Q while the eta_s = 1 drift term does."""
    base = {"L": 1.0, "rho": 0.5, "gamma": 0.1, "mu": 0.1, "C_0": 1.0, "E[L_0]": 10.0, "epsilon": 1e-4, "sigma2": 1.0, "n": 4, "Q": 4}
    t1 = evaluate(fn.theorem8_complexity_derived, base)
    t2 = evaluate(fn.theorem8_complexity_derived, {**base, "Q": 8})
    assert t2 == pytest.approx(t1 / 2)
    second = sp.sqrt(L**2 * sigma2 / (epsilon * mu * (L + rho + mu) ** 2))
    assert evaluate(second, base) == evaluate(second, {**base, "Q": 64})
    d1 = evaluate(fn.theorem8_complexity_drift_term_eta_s1, base)
    d2 = evaluate(fn.theorem8_complexity_drift_term_eta_s1, {**base, "Q": 16})
    assert d2 == pytest.approx(d1 / 2)


# ---- Table 1 ----


def test_table1_rows() -> None:
    rows = table1.TABLE1
    assert len(rows) == 8
    assert [r.key for r in rows if not r.established] == ["zhang2026", "fedcanon"]
    assert table1.get_row("fednmap_ncvx").rate == fn.theorem5_rate
    assert table1.get_row("fednmap_pl").rate == fn.theorem8_rate
    assert table1.get_row("econtrolda").requires == ("f_convex", "phi_convex", "single_local_step")
    assert all(get_claim(f"fednmap.table1.{r.key}").conclusion == r.rate for r in rows)
    assert "Not established" in table1.get_row("fedcanon").rate_text
    with pytest.raises(ValueError, match="fedda"):
        table1.get_row("fedavg")
    vocab = {"f_convex", "f_strongly_convex", "f_nonconvex", "pl", "phi_convex", "phi_weakly_convex", "bounded_heterogeneity",
             "quadratic", "single_local_step", "bounded_iterates", "bounded_subgradients"}
    assert all(set(r.requires) <= vocab for r in rows)
    for r in rows:
        assert r.rate_latex()
