"""fedbounds.theory.core.evaluate: lambdify in one place, substitution by name."""

from __future__ import annotations

import math

import pytest
import sympy as sp
from fedbounds.theory.core.evaluate import evaluate, resolve, substitute, to_function
from fedbounds.theory.core.symbols import EL_0, L, gamma, rho, sigma2
from fedbounds.theory.ds_fedproxgrad import formulas as ds
from fedbounds.theory.fednmap import formulas as fn


def test_to_function_by_symbol_and_by_name() -> None:
    f = to_function(fn.theorem5_gamma_max, [L, rho])
    g = to_function(fn.theorem5_gamma_max, ["L", "rho"])
    assert f(1.0, 0.0) == pytest.approx(0.2)  # 1/(5 (0 + 1))
    assert g(2.0, 2.0) == pytest.approx(1 / 20)


def test_to_function_odd_names() -> None:
    f = to_function(fn.theorem8_transient, ["etahat", "mu", "T", "gamma", "C_0", "E[L_0]"])
    assert f(0.1, 1.0, 90, 1.0, 0.0, 2.0) == pytest.approx(2.0 * math.exp(-0.2 * 90 / 9))
    h = to_function(fn.theorem8_variance, ["sigma2", "m", "n", "mu", "Q"])  # python alias of sigma^2
    assert h(1.0, 1, 2, 3.0, 6) == pytest.approx(36 / 36)


def test_to_function_relational() -> None:
    cond = sp.Le(gamma, fn.theorem5_gamma_max)
    f = to_function(cond, ["gamma", "L", "rho"])
    assert f(0.1, 1.0, 0.0) is True or f(0.1, 1.0, 0.0) == True  # noqa: E712
    assert not f(0.3, 1.0, 0.0)


def test_substitute_and_evaluate() -> None:
    values = {"L": 1.0, "rho": 0.0, "unrelated": 3.0}
    assert substitute(fn.theorem5_gamma_max, values) == sp.Rational(1, 5) or float(substitute(fn.theorem5_gamma_max, values)) == 0.2
    assert evaluate(fn.theorem5_gamma_max, values) == pytest.approx(0.2)
    assert evaluate(ds.K_e2, {"G": 2.0, "B": 1.0, "lam": 1.0, "G_r": 1.0}) == pytest.approx(2 + 1)
    with pytest.raises(ValueError, match=r"missing values for .*rho"):
        evaluate(fn.theorem5_gamma_max, {"L": 1.0})
    with pytest.raises(ValueError, match="unrelated"):
        substitute(fn.theorem5_gamma_max, values, strict=True)
    assert substitute(sigma2 + EL_0, {sigma2: 1, "E[L_0]": 2}) == 3


def test_resolve() -> None:
    assert resolve("sigma2") is sigma2 and resolve("sigma^2") is sigma2 and resolve(L) is L
    with pytest.raises(ValueError, match="unknown symbol name"):
        resolve("nope")
    with pytest.raises(ValueError, match="Symbol or a name"):
        resolve(3)  # type: ignore[arg-type]


def test_evaluate_compiled_is_evaluate_and_says_what_is_missing() -> None:
    """The compiled path gives :func:`evaluate`'s numbers (by symbol, by sympy name, by Python name; a Max too) and
    names a missing symbol, as evaluate does."""
    from fedbounds.theory.core.evaluate import evaluate, evaluate_compiled
    from fedbounds.theory.fednmap import formulas as fm

    v = {"L": 1.0, "rho": 0.1, "Q": 2, "m": 1, "gamma": 0.18, "eta_a": 1e-3, "n": 4, "mu": 0.1, "sigma2": 1.0}
    for expr in (fm.theorem5_eta_hat_max, fm.theorem8_floor, sp.Max(0, fm.theorem8_floor - 3)):
        assert evaluate_compiled(expr, v) == pytest.approx(evaluate(expr, v), rel=1e-12)
    with pytest.raises(ValueError, match="missing values for"):
        evaluate_compiled(fm.theorem8_floor, {"L": 1.0})
