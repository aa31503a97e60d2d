"""Evaluate the theory layer's sympy expressions numerically (design.md, principle 1: each formula is
written once, in ``theory/``; checks only evaluate it).

Evaluation goes through :func:`fedbounds.theory.core.evaluate.to_function` (a thin wrapper over ``sympy.lambdify``); until
that module exists, through ``sympy.lambdify(..., modules="math")`` directly, which is the same thing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import lru_cache

import sympy as sp

__all__ = ["evaluate", "function_of"]


def _to_function(expr: sp.Basic, symbols: tuple[sp.Symbol, ...]) -> Callable[..., float]:
    try:
        from fedbounds.theory.core.evaluate import to_function
    except ModuleNotFoundError as err:
        if err.name != "fedbounds.theory.core.evaluate":
            raise
        return sp.lambdify(symbols, expr, modules="math")
    return to_function(expr, symbols)


@lru_cache(maxsize=512)
def _cached(expr: sp.Basic, symbols: tuple[sp.Symbol, ...]) -> Callable[..., float]:
    return _to_function(expr, symbols)


def function_of(expr: sp.Basic, symbols: tuple[sp.Symbol, ...]) -> Callable[..., float]:
    """``expr`` as a numeric function of ``symbols`` (positional), cached per (expr, symbols)."""
    missing = sp.sympify(expr).free_symbols - set(symbols)
    if missing:
        raise ValueError(f"expression {expr} has free symbols {sorted(map(str, missing))} not given")
    return _cached(sp.sympify(expr), tuple(symbols))


def evaluate(expr: sp.Basic, values: Mapping[sp.Symbol, float]) -> float:
    """The float value of ``expr`` at ``values`` (every free symbol must be given; extras are ignored)."""
    e = sp.sympify(expr)
    syms = tuple(sorted(e.free_symbols, key=lambda s: s.name))
    missing = [s for s in syms if s not in values]
    if missing:
        raise ValueError(f"no value for {', '.join(s.name for s in missing)} in {e}")
    f = _cached(e, syms)
    v = f(*(float(values[s]) for s in syms))
    return float(v) if not isinstance(v, complex) else math.nan
