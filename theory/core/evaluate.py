"""Evaluating the theory's sympy expressions: the one place where a formula becomes a Python function.

Everything that turns a formula of :mod:`theory` into numbers (the checks, the feasibility calculator, the
notebooks) goes through :func:`to_function` (a thin wrapper over ``sympy.lambdify(..., modules="math")``)
or :func:`substitute` / :func:`evaluate`, so that a formula is never retyped (design.md, principle 1).

Symbols may be given as sympy symbols or by name; a name is either the symbol's sympy name
(``"sigma^2"``) or its Python name in :mod:`fedbounds.theory.core.symbols` (``"sigma2"``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping

import sympy as sp
from fedbounds.theory.core.symbols import BY_NAME

__all__ = ["evaluate", "evaluate_compiled", "resolve", "substitute", "to_function"]


def _lookup(name: str, expr: sp.Basic | None) -> sp.Symbol:
    if expr is not None:
        for s in expr.free_symbols:
            if isinstance(s, sp.Symbol) and s.name == name:
                return s
    if name in BY_NAME:
        return BY_NAME[name]
    raise ValueError(f"unknown symbol name {name!r}; known names: {', '.join(sorted(BY_NAME))}")


def resolve(symbol: sp.Symbol | str, expr: sp.Basic | None = None) -> sp.Symbol:
    """The symbol meant by ``symbol``: itself, or the symbol of ``expr`` / :mod:`fedbounds.theory.core.symbols` with that name."""
    if isinstance(symbol, sp.Symbol):
        return symbol
    if isinstance(symbol, str):
        return _lookup(symbol, expr)
    raise ValueError(f"symbol must be a sympy Symbol or a name, got {type(symbol).__name__}")


def to_function(expr: sp.Basic, symbols: Iterable[sp.Symbol | str]) -> Callable[..., float]:
    """``sympy.lambdify(symbols, expr, modules="math")``: a plain-Python function of the given symbols, in order.

    ``expr`` may also be a relational or a boolean (a step-size condition); the function then returns a bool.
    """
    syms = [resolve(s, expr) for s in symbols]
    return sp.lambdify(syms, expr, modules="math")


def substitute(expr: sp.Basic, values: Mapping[str | sp.Symbol, float], *, strict: bool = False) -> sp.Basic:
    """``expr`` with the symbols named in ``values`` replaced by those numbers.

    Names that are not free symbols of ``expr`` are ignored (so one dictionary of constants serves every
    formula) unless ``strict`` is true, in which case they raise ValueError.
    """
    free = {s.name: s for s in expr.free_symbols if isinstance(s, sp.Symbol)}
    mapping: dict[sp.Symbol, sp.Basic] = {}
    for key, value in values.items():
        if isinstance(key, sp.Symbol):
            sym = key
        elif key in free:
            sym = free[key]
        elif key in BY_NAME:
            sym = BY_NAME[key]
        elif strict:
            raise ValueError(f"unknown symbol name {key!r}; the expression's symbols are {sorted(free)}")
        else:
            continue
        if strict and sym not in expr.free_symbols:
            raise ValueError(f"{key!r} is not a symbol of the expression; its symbols are {sorted(free)}")
        mapping[sym] = sp.sympify(value)
    return expr.subs(mapping)


def evaluate(expr: sp.Basic, values: Mapping[str | sp.Symbol, float]) -> float:
    """The number ``expr`` takes at ``values``; ValueError naming the symbols that are still missing."""
    out = substitute(expr, values)
    missing = sorted(s.name for s in out.free_symbols if isinstance(s, sp.Symbol))
    if missing:
        raise ValueError(f"missing values for {', '.join(missing)}")
    return float(sp.N(out))


@functools.lru_cache(maxsize=256)
def _compiled(expr: sp.Basic) -> tuple[tuple[sp.Symbol, ...], Callable[..., float]]:
    syms = tuple(sorted((s for s in expr.free_symbols if isinstance(s, sp.Symbol)), key=lambda s: s.name))
    return syms, sp.lambdify(syms, expr, modules="math")


def evaluate_compiled(expr: sp.Basic, values: Mapping[str | sp.Symbol, float]) -> float:
    """:func:`evaluate` through :func:`to_function`, compiled once per expression (for formulas evaluated many times:
    a substitution costs tens of milliseconds, a compiled call microseconds). The same numbers up to rounding."""
    syms, fn = _compiled(expr)
    by_name = {(k.name if isinstance(k, sp.Symbol) else str(k)): v for k, v in values.items()}
    args = []
    for s in syms:
        if s in values:
            args.append(values[s])  # type: ignore[index]
        elif s.name in by_name:
            args.append(by_name[s.name])
        else:
            py = next((k for k, v in BY_NAME.items() if v == s and k in by_name), None)
            if py is None:
                raise ValueError(f"missing values for {s.name}")
            args.append(by_name[py])
    return float(fn(*args))
