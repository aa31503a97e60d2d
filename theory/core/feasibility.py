"""Shared pieces of the parameter feasibility calculator (:mod:`fedbounds.theory.feasibility`).

Result types, input validation (a ValueError naming the parameter and the allowed range, as in
``fedbounds.algorithms.base``, but written with :mod:`math` because ``theory/`` is sympy-only), and the numerical
helpers that evaluate the theory layer's sympy expressions. No formula of either paper is written here:
every condition and bound is taken from :mod:`fedbounds.theory.fednmap.formulas` or :mod:`fedbounds.theory.ds_fedproxgrad.formulas`
and evaluated through :func:`evaluate`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
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


def latex(expr: sp.Basic) -> str:
    """LaTeX of a theory expression, with the symbols' LaTeX names from :mod:`fedbounds.theory.core.symbols`."""
    return sp.latex(expr, symbol_names=getattr(_symbols, "LATEX_NAMES", {}))


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
    if ok:
        try:
            ok = float(value) == int(value) and math.isfinite(float(value))
        except (TypeError, ValueError, OverflowError):
            ok = False
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


# ---------------------------------------------------------------------------------------------------------
# one-dimensional feasible sets: the bound a condition places on a parameter, the others held fixed
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParamBound:
    """The values of one parameter that a condition admits, the other parameters held at the chosen point.

    ``lower``/``upper`` are ``None`` where the condition places no bound on that side (other than > 0).
    For integer parameters (``integer``), the bounds are the admissible integers (floor / ceil).
    """

    parameter: str
    lower: float | None
    upper: float | None
    value: float | None
    meets: bool | None
    integer: bool = False
    note: str = ""

    def describe(self) -> str:
        """``0.1 <= gamma <= 0.3``, ``m <= 12``, ``eta_s`` unconstrained."""
        fmt = (lambda x: f"{int(x)}") if self.integer else (lambda x: f"{x:.6g}")
        if self.lower is None and self.upper is None:
            what = self.note or ("no admissible value" if self.meets is False else "unconstrained")
            return f"{self.parameter}: {what}"
        parts = []
        if self.lower is not None:
            parts.append(f"{fmt(self.lower)} <=")
        parts.append(self.parameter)
        if self.upper is not None:
            parts.append(f"<= {fmt(self.upper)}")
        return " ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "parameter": self.parameter,
            "lower": self.lower,
            "upper": self.upper,
            "value": self.value,
            "meets": self.meets,
            "integer": self.integer,
            "note": self.note,
        }


def feasible_interval(
    margin: Callable[[float], float],
    value: float,
    *,
    cap: float | None = None,
    integer: bool = False,
    decades: int = 14,
    per_decade: int = 8,
) -> tuple[float | None, float | None, bool]:
    """The feasible interval of ``margin(p) >= 0`` around ``value`` on ``(0, cap)``.

    Scans a logarithmic grid of ``decades`` decades either side of ``value`` and refines every end point
    by bisection (to double precision). Returns ``(lower, upper, any_feasible)``: ``None`` for an end with
    no bound inside the scanned range. If ``value`` itself is infeasible, the feasible interval nearest to
    it is returned. Intended for the conditions of the two papers, which are monotone or unimodal in
    each parameter.
    """

    def ok(p: float) -> bool:
        try:
            g = margin(p)
        except (ValueError, ZeroDivisionError, OverflowError):
            return False
        return math.isfinite(g) and g >= 0

    v = max(value, 1e-300)
    grid = [v * 10 ** (k / per_decade) for k in range(-decades * per_decade, decades * per_decade + 1)]
    if cap is not None:
        grid = [p for p in grid if p < cap]
    if not grid:
        return None, None, False
    flags = [ok(p) for p in grid]
    if not any(flags):
        return None, None, False
    centre = min(range(len(grid)), key=lambda i: abs(math.log(grid[i] / v)))
    if not flags[centre]:
        feas = [i for i, f in enumerate(flags) if f]
        centre = min(feas, key=lambda i: abs(i - centre))
    lo_i = centre
    while lo_i > 0 and flags[lo_i - 1]:
        lo_i -= 1
    hi_i = centre
    while hi_i < len(grid) - 1 and flags[hi_i + 1]:
        hi_i += 1

    def refine(good: float, bad: float) -> float:
        for _ in range(200):
            mid = math.sqrt(good * bad)
            if mid in (good, bad):
                break
            if ok(mid):
                good = mid
            else:
                bad = mid
        return good

    lower = refine(grid[lo_i], grid[lo_i - 1]) if lo_i > 0 else None
    if hi_i < len(grid) - 1:
        upper: float | None = refine(grid[hi_i], grid[hi_i + 1])
    elif cap is not None:
        upper = refine(grid[hi_i], cap) if not ok(cap) else cap
    else:
        upper = None
    if integer:
        if lower is not None:
            lower = float(math.ceil(lower - 1e-9 * lower))
            while not ok(lower) and (upper is None or lower <= upper):
                lower += 1.0
        if upper is not None:
            upper = float(math.floor(upper + 1e-9 * upper))
            while upper >= 1 and not ok(upper):
                upper -= 1.0
        if upper is not None and (upper < 1 or (lower is not None and upper < lower)):
            return None, None, False
    return lower, upper, True


def smallest_integer(pred: Callable[[int], bool], start: int = 0, limit: int = 10**18) -> int | None:
    """The smallest integer ``k >= start`` with ``pred(k)``, for a monotone ``pred`` (False ... False True ...).

    Exponential search then bisection; ``None`` if ``pred`` is False up to ``limit``.
    """
    if pred(start):
        return start
    lo, hi = start, max(start + 1, 1)
    while not pred(hi):
        lo = hi
        hi *= 2
        if hi > limit:
            return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if pred(mid):
            hi = mid
        else:
            lo = mid
    return hi


# ---------------------------------------------------------------------------------------------------------
# result types
# ---------------------------------------------------------------------------------------------------------


def _num(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


@dataclass(frozen=True)
class ConditionResult:
    """One hypothesis of a theorem, evaluated at the chosen point.

    ``relation`` is the theory's sympy relation (``parameter <= bound``), ``bound`` its right-hand side at
    the given constants and the other parameters, ``value`` the parameter's chosen value. ``margin`` is
    ``bound - value`` and ``ratio`` is ``bound / value`` (>= 1 iff met) for an upper bound. ``implied``
    lists the bound the same condition places on each other parameter, the rest held fixed.
    ``required`` is False for a condition that need only hold eventually (DS FedProxGrad's absorption
    threshold under a decaying schedule).
    """

    name: str
    label: str
    status: str
    parameter: str
    relation: sp.Basic
    bound: float
    value: float | None
    meets: bool | None
    margin: float | None
    ratio: float | None
    implied: tuple[ParamBound, ...] = ()
    required: bool = True
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": self.label,
            "status": self.status,
            "parameter": self.parameter,
            "relation": str(self.relation),
            "latex": latex(self.relation),
            "bound": _num(self.bound),
            "value": _num(self.value),
            "meets": self.meets,
            "margin": _num(self.margin),
            "ratio": _num(self.ratio),
            "required": self.required,
            "implied": [b.to_dict() for b in self.implied],
            "note": self.note,
        }


def upper_condition(
    name: str,
    label: str,
    status: str,
    parameter: str,
    symbol: sp.Symbol,
    rhs: sp.Basic,
    values: Mapping[sp.Symbol, float],
    value: float | None,
    *,
    implied: tuple[ParamBound, ...] = (),
    required: bool = True,
    note: str = "",
) -> ConditionResult:
    """Evaluate ``symbol <= rhs`` (a theory expression) at ``values``; ``value`` is the parameter's value."""
    bound = evaluate(rhs, values)
    if value is None:
        meets = margin = ratio = None
    else:
        meets = meets_upper(value, bound)
        margin = bound - value
        ratio = bound / value if value > 0 else math.inf
    return ConditionResult(
        name=name,
        label=label,
        status=status,
        parameter=parameter,
        relation=sp.Le(symbol, rhs, evaluate=False),
        bound=bound,
        value=value,
        meets=meets,
        margin=margin,
        ratio=ratio,
        implied=implied,
        required=required,
        note=note,
    )


@dataclass(frozen=True)
class Term:
    """One term of a guarantee: its expression (known constants substituted), and its value if known.

    ``flag`` is ``"exact"`` (every constant known), ``"unknown"`` (the paper leaves a constant unknown;
    ``unknowns`` names it) or ``"O"`` (an O-expression: its constants are lost, the value is indicative).
    """

    name: str
    expression: sp.Basic
    value: float | None
    flag: str = "exact"
    unknowns: tuple[str, ...] = ()
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "expression": str(self.expression),
            "latex": latex(self.expression),
            "value": _num(self.value),
            "flag": self.flag,
            "unknowns": list(self.unknowns),
            "note": self.note,
        }


@dataclass(frozen=True)
class Guarantee:
    """What the theorem promises at the chosen parameters: ``quantity relation sum(terms)``."""

    claim: str
    quantity: str
    relation: str
    horizon_name: str
    horizon: int | None
    terms: tuple[Term, ...]
    total: float | None
    floor: float | None = None
    flag: str = "exact"
    note: str = ""
    extra_terms: tuple[Term, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "claim": self.claim,
            "quantity": self.quantity,
            "relation": self.relation,
            "horizon_name": self.horizon_name,
            "horizon": self.horizon,
            "terms": [t.to_dict() for t in self.terms],
            "total": _num(self.total),
            "floor": _num(self.floor),
            "flag": self.flag,
            "note": self.note,
            "extra_terms": [t.to_dict() for t in self.extra_terms],
        }


@dataclass(frozen=True)
class RoundsNeeded:
    """Rounds needed to reach ``epsilon``.

    ``flag``: ``"exact"`` (``rounds`` is the smallest horizon whose bound is <= epsilon), ``"symbolic"``
    (exact but in terms of constants the paper leaves unknown: ``expression``), ``"O"`` (an O-expression,
    its constants lost) or ``"unreachable"`` (the bound's floor exceeds epsilon).
    """

    epsilon: float
    horizon_name: str
    rounds: int | None
    flag: str
    expression: sp.Basic | None = None
    message: str = ""
    o_expression: sp.Basic | None = None
    #: where ``flag == "unreachable"``: step sizes (and window) at which the bound's floor is below epsilon
    suggestion: dict[str, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "suggestion": self.suggestion,
            "epsilon": self.epsilon,
            "horizon_name": self.horizon_name,
            "rounds": self.rounds,
            "flag": self.flag,
            "expression": None if self.expression is None else str(self.expression),
            "o_expression": None if self.o_expression is None else str(self.o_expression),
            "message": self.message,
        }


@dataclass(frozen=True)
class Table1Row:
    """A Table 1 method and whether the problem meets its assumptions (``applies``: True/False/None)."""

    method: str
    reference: str
    objective: str
    regularizer: str
    assumptions: str
    rate: str
    applies: bool | None
    reasons: tuple[str, ...] = ()
    rate_value: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "reference": self.reference,
            "objective": self.objective,
            "regularizer": self.regularizer,
            "assumptions": self.assumptions,
            "rate": self.rate,
            "applies": self.applies,
            "reasons": list(self.reasons),
            "rate_value": _num(self.rate_value),
        }


@dataclass(frozen=True)
class FeasibilityResult:
    """The calculator's answer for one theorem (see :func:`fedbounds.theory.feasibility.feasibility`).

    ``chosen`` is the point evaluated: the given parameters, the missing ones set to their largest
    admissible values. ``binding`` names the condition(s) with the least slack (smallest ratio) there;
    ``binding_by_parameter`` the condition giving each parameter its smallest upper bound. ``region``
    maps each condition name to its margin (bound - value, >= 0 iff met) as a sympy expression in the
    parameter symbols ``region_symbols``, the constants substituted (for plots of the feasible region);
    ``region_links`` says which symbol a derived parameter replaces when it is an axis of such a plot
    (FedNMap: plotting ``eta_s`` replaces etahat by eta_s eta_a Q).
    """

    theorem: str
    title: str
    constants: dict[str, float]
    chosen: dict[str, float]
    given: tuple[str, ...]
    conditions: tuple[ConditionResult, ...]
    admissible: bool
    binding: tuple[str, ...]
    binding_by_parameter: dict[str, str]
    step_sizes: dict[str, Any]
    guarantee: Guarantee
    rounds_needed: RoundsNeeded | None
    table1: tuple[Table1Row, ...] = ()
    problem_class: dict[str, bool | None] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    region: dict[str, sp.Basic] = field(default_factory=dict, compare=False)
    region_symbols: dict[str, sp.Symbol] = field(default_factory=dict, compare=False)
    region_links: dict[str, tuple[sp.Symbol, sp.Basic]] = field(default_factory=dict, compare=False)

    def condition(self, name: str) -> ConditionResult:
        """The condition called ``name`` (ValueError listing the names otherwise)."""
        for c in self.conditions:
            if c.name == name:
                return c
        raise ValueError(f"no condition {name!r}; conditions: {', '.join(c.name for c in self.conditions)}")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (sympy expressions as strings, with LaTeX beside them)."""
        return {
            "theorem": self.theorem,
            "title": self.title,
            "constants": {k: _num(v) for k, v in self.constants.items()},
            "chosen": {k: _num(v) for k, v in self.chosen.items()},
            "given": list(self.given),
            "admissible": self.admissible,
            "conditions": [c.to_dict() for c in self.conditions],
            "binding": list(self.binding),
            "binding_by_parameter": dict(self.binding_by_parameter),
            "step_sizes": {k: _num(v) for k, v in self.step_sizes.items()},
            "guarantee": self.guarantee.to_dict(),
            "rounds_needed": None if self.rounds_needed is None else self.rounds_needed.to_dict(),
            "table1": [r.to_dict() for r in self.table1],
            "problem_class": dict(self.problem_class),
            "notes": list(self.notes),
        }

    def to_latex(self) -> str:
        """The conditions (with their values here) and the guarantee's terms, as a LaTeX ``align*``."""
        lines = [r"\begin{align*}"]
        for c in self.conditions:
            mark = r"\checkmark" if c.meets else (r"\times" if c.meets is False else "?")
            val = "" if c.value is None else rf"\quad {_tex_text(c.parameter)} = {c.value:.6g}"
            bound = f" = {c.bound:.6g}" if isinstance(c.relation, sp.Rel) else ""
            lines.append(rf"&{latex(c.relation)}{bound} && {mark}{val} \\  % {c.name}")
        g = self.guarantee
        rel = {"<=": r"\le", "O": r"= \mathcal{O}", "->": r"\to"}.get(g.relation, g.relation)
        body = " + ".join(latex(t.expression) for t in g.terms) if g.terms else "0"
        if g.relation == "O":
            body = r"\left(" + body + r"\right)"
        lines.append(rf"&{_tex_text(g.quantity)} {rel} {body} \\  % {g.claim}")
        if g.floor is not None:
            lines.append(rf"&\text{{floor}} \le {g.floor:.6g} \\")
        if self.rounds_needed is not None:
            rn = self.rounds_needed
            if rn.rounds is not None:
                lines.append(rf"&{rn.horizon_name} \ge {rn.rounds} \quad (\varepsilon = {rn.epsilon:g}) \\")
            elif isinstance(rn.expression, sp.Rel):
                lines.append(rf"&{latex(rn.expression)} \quad (\varepsilon = {rn.epsilon:g}) \\")
            elif rn.expression is not None:
                op = r"= \mathcal{O}" if rn.flag == "O" else r"\ge"
                lines.append(rf"&{rn.horizon_name} {op}\left({latex(rn.expression)}\right) \quad (\varepsilon = {rn.epsilon:g}) \\")
            else:
                lines.append(rf"&{_tex_text(rn.message)} \\")
        lines.append(r"\end{align*}")
        return "\n".join(lines)


_TEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "_": r"\_",
    "^": r"\^{}",
    "{": r"\{",
    "}": r"\}",
    "%": r"\%",
    "&": r"\&",
    "#": r"\#",
    "~": r"\~{}",
    "$": r"\$",
}


def _tex_text(text: str) -> str:
    """``\\text{...}`` with LaTeX's text-mode specials escaped."""
    return r"\text{" + "".join(_TEX_SPECIALS.get(ch, ch) for ch in text) + "}"


def binding_of(conditions: Iterable[ConditionResult], tol: float = 1e-9) -> tuple[str, ...]:
    """The required condition(s) with the smallest ratio bound / value (least slack), ties within ``tol``."""
    rated = [c for c in conditions if c.required and c.ratio is not None and math.isfinite(c.ratio)]
    if not rated:
        return ()
    best = min(c.ratio for c in rated)  # type: ignore[type-var]
    return tuple(c.name for c in rated if c.ratio <= best * (1 + tol))  # type: ignore[operator]
