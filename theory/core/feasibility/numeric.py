"""Evaluating the theory layer's sympy expressions, and validating the calculator's inputs."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any

import sympy as sp
from fedbounds.theory.core import symbols as _symbols

try:  # the theory stream's single evaluation entry point (theory/evaluate.py), when it exists
    from fedbounds.theory.core.evaluate import to_function as _to_function
except ImportError:  # pragma: no cover - fallback while theory/evaluate.py is being written
    _to_function = None


#: relative tolerance of every "meets the condition" decision: value <= bound * (1 + REL_TOL)
REL_TOL = 1e-12
#: the largest admissible values are reported rounded inward by this relative amount, so that they are
#: admissible in floating point and still tight to 1e-9 relative
INWARD = 1e-12

# ---------------------------------------------------------------------------------------------------------
# evaluation of the theory's expressions
# ---------------------------------------------------------------------------------------------------------


@lru_cache(maxsize=512)
def _compiled(expr: sp.Basic, symbols: tuple[sp.Symbol, ...]) -> Callable[..., float]:
    if _to_function is not None:
        return _to_function(expr, list(symbols))
    return sp.lambdify(symbols, expr, modules="math")


@lru_cache(maxsize=1024)
def _symbols_of(expr: sp.Basic) -> tuple[sp.Symbol, ...]:
    return tuple(sorted(expr.free_symbols, key=lambda s: s.name))


#: the largest integer input accepted (beyond it no double can hold it)
MAX_INTEGER = 10**300


def _short(value: Any) -> str:
    try:
        return f"{float(getattr(value, 'value', value)):.6g}"
    except (TypeError, ValueError, OverflowError):
        text = repr(value)
        return text if len(text) <= 24 else text[:21] + "..."


def evaluate(expr: sp.Basic, values: Mapping[sp.Symbol, float]) -> float:
    """Evaluate a theory expression numerically (``lambdify(..., modules="math")``).

    Every free symbol of ``expr`` must have a value; a missing one is a programming error (KeyError).
    Returns ``math.nan`` where the expression is undefined (a square root of a negative number, say).
    """
    expr = sp.sympify(expr)
    syms = _symbols_of(expr)
    missing = [s for s in syms if s not in values]
    if missing:
        raise KeyError(f"no value for {', '.join(str(s) for s in missing)}")
    fn = _compiled(expr, syms)
    try:
        return float(fn(*(float(values[s]) for s in syms)))
    except (ValueError, ZeroDivisionError, OverflowError, TypeError):
        return math.nan


def function_of(expr: sp.Basic, symbol: sp.Symbol, values: Mapping[sp.Symbol, float]) -> Callable[[float], float]:
    """``x -> expr`` at ``values`` with ``symbol = x``: a fast one-variable function (NaN where undefined)."""
    expr = sp.sympify(expr)
    syms = _symbols_of(expr)
    fn = _compiled(expr, syms)
    args = [None if s == symbol else float(values[s]) for s in syms]
    idx = [i for i, s in enumerate(syms) if s == symbol]

    def f(x: float) -> float:
        for i in idx:
            args[i] = x
        try:
            return float(fn(*args))
        except (ValueError, ZeroDivisionError, OverflowError, TypeError):
            return math.nan

    return f


def text(expr: Any) -> str:
    """A formula as terminal text: the theory layer's one printer (:func:`fedbounds.theory.core.printing.text`)."""
    from fedbounds.theory.core.printing import text as _text

    return _text(expr)


def latex(expr: sp.Basic) -> str:
    """LaTeX of a theory expression, with the symbols' LaTeX names from :mod:`fedbounds.theory.core.symbols`."""
    from fedbounds.theory.core.printing import latex as _latex

    return _latex(expr, getattr(_symbols, "LATEX_NAMES", {}))


def substitute(expr: sp.Basic, values: Mapping[sp.Symbol, float]) -> sp.Basic:
    """``expr`` with the known values substituted (as Floats), the unknown symbols left free."""
    expr = sp.sympify(expr)
    subs = {s: sp.Float(values[s], 15) for s in expr.free_symbols if s in values}
    return expr.xreplace(subs)


def value_of(expr: sp.Basic, values: Mapping[sp.Symbol, float]) -> float | None:
    """The number ``expr`` takes at ``values``, or None if a symbol without a value remains.

    A term whose unknown factor is multiplied by a known zero (E[L_0] = 0, sigma = 0) is a number.
    """
    expr = sp.sympify(expr)
    if expr.free_symbols <= set(values):
        return evaluate(expr, values)
    sub = substitute(expr, values)
    return None if sub.free_symbols else float(sub)


def round_inward(x: float, upper: bool = True) -> float:
    """A largest (``upper``) or smallest admissible value, moved inward by :data:`INWARD` relative."""
    return x * (1.0 - INWARD) if upper else x * (1.0 + INWARD)


def meets_upper(value: float, bound: float) -> bool:
    """``value <= bound`` up to :data:`REL_TOL` relative (a NaN bound is never met, an infinite one always)."""
    if math.isnan(bound):
        return False
    return bound == math.inf or value <= bound + REL_TOL * abs(bound)



# ---------------------------------------------------------------------------------------------------------
# input validation
# ---------------------------------------------------------------------------------------------------------


def _as_float(name: str, value: Any) -> float:
    if hasattr(value, "value") and not isinstance(value, int | float):
        value = value.value  # an fedbounds.algorithms.base.Constant, or anything shaped like it
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return v


def check_positive(name: str, value: Any, *, strict: bool = True) -> float:
    """``float(value)``, or a ValueError naming ``name`` and the allowed range (> 0, or >= 0)."""
    v = _as_float(name, value)
    if v <= 0 if strict else v < 0:
        raise ValueError(f"{name} must be {'> 0' if strict else '>= 0'}, got {value!r}")
    return v


def check_int(name: str, value: Any, minimum: int = 1) -> int:
    """``int(value)`` if it is an integer >= ``minimum``, else a ValueError naming it."""
    if hasattr(value, "value") and not isinstance(value, int | float):
        value = value.value
    ok = not isinstance(value, bool)
    too_large = False
    if ok:
        try:
            ok = math.isfinite(float(value)) and (isinstance(value, int) or float(value) == int(value))
        except OverflowError:  # an int beyond every float
            ok, too_large = False, isinstance(value, int)
        except (TypeError, ValueError):
            ok = False
    if too_large or (ok and int(value) > MAX_INTEGER):
        raise ValueError(f"{name} must be an integer from {minimum} to 1e300 (double precision), got {_short(value)}")
    if not ok or int(value) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_keys(what: str, given: Iterable[str], allowed: Iterable[str]) -> None:
    """Unknown keys (a typo, usually) are a ValueError listing the allowed ones."""
    allowed = list(allowed)
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        raise ValueError(f"unknown {what} {', '.join(map(repr, unknown))}; allowed: {', '.join(allowed)}")


def sigma2_from(constants: Mapping[str, Any]) -> float:
    """sigma^2 from ``sigma2`` or ``sigma`` (both given: they must agree)."""
    s2 = check_positive("sigma2", constants["sigma2"], strict=False) if constants.get("sigma2") is not None else None
    s = check_positive("sigma", constants["sigma"], strict=False) if constants.get("sigma") is not None else None
    if s2 is None and s is None:
        raise ValueError("sigma (or sigma2) is required (>= 0): the gradient-noise level")
    if s2 is not None and s is not None and not math.isclose(s * s, s2, rel_tol=1e-9, abs_tol=1e-300):
        raise ValueError(f"sigma2 must equal sigma**2 = {s * s:g}, got {s2:g}")
    return s2 if s2 is not None else s * s  # type: ignore[operator]


def epsilon_from(target: Any) -> float | None:
    """The target accuracy from ``target`` (a number or ``{"epsilon": ...}``); must be > 0."""
    if target is None:
        return None
    if isinstance(target, Mapping):
        check_keys("target key", target.keys(), ["epsilon"])
        target = target.get("epsilon")
        if target is None:
            return None
    return check_positive("epsilon", target)
