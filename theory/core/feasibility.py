"""The parameter feasibility calculator's machinery (front door: :mod:`fedbounds.theory.feasibility`).

* **Declarations**: a theorem is data, a :class:`TheoremSpec` listing its inputs (:class:`Param`: range,
  integer or not, default), its hypotheses (:class:`Condition`: ``value <= bound`` or membership of a set,
  as the formulas modules' sympy expressions), its guarantee (:class:`GuaranteeSpec` of :class:`TermSpec`),
  its unknown constants (:class:`Unknown`) and aliases. Per-theorem special cases are small named hooks
  on the declaration. :func:`register_theorem` adds one at run time.
* **One generic solver**, :func:`solve`: validates the inputs against the declaration, chooses the point
  (missing parameters at their largest admissible values), evaluates every condition and the bounds it
  implies on the other parameters, the binding condition, the guarantee, the rounds needed, the region.
  Answers that double precision cannot hold (L = 1e308) are rejected naming the input, never printed as
  nan or inf (:func:`check_finite`).
* Result types, input validation (a ValueError naming the parameter and the allowed range, written with
  :mod:`math` because ``theory/`` is sympy-only), and the numerical helpers that evaluate the theory
  layer's sympy expressions; integer searches run in integer arithmetic (any size).

No formula of either paper is written here: every condition and bound is taken from
:mod:`fedbounds.theory.fednmap.formulas` or :mod:`fedbounds.theory.ds_fedproxgrad.formulas` through the
papers' declarations, and evaluated through :func:`evaluate`.
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


def _search_ok(margin: Callable[[float], float]) -> Callable[[float], bool]:
    def ok(p: float) -> bool:
        try:
            g = margin(p)
        except (ValueError, ZeroDivisionError, OverflowError):
            return False
        return math.isfinite(g) and g >= 0

    return ok


def _int_ok(ok: Callable[[float], bool]) -> Callable[[int], bool]:
    """``ok`` on an integer of any size (False where it has no float value)."""

    def at(k: int) -> bool:
        try:
            x = float(k)
        except OverflowError:
            return False
        return ok(x)

    return at


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
    each parameter. ``integer``: the ends are the admissible integers, found in integer arithmetic (any
    size: beyond 2^53 a float cannot be stepped by 1).
    """
    ok = _search_ok(margin)
    v = max(value, 1e-300)
    grid = [v * 10 ** (k / per_decade) for k in range(-decades * per_decade, decades * per_decade + 1)]
    grid = [p for p in grid if math.isfinite(p) and (cap is None or p < cap)]
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
    lower = _refine(ok, grid[lo_i], grid[lo_i - 1]) if lo_i > 0 else None
    if hi_i < len(grid) - 1:
        upper: float | None = _refine(ok, grid[hi_i], grid[hi_i + 1])
    elif cap is not None:
        upper = _refine(ok, grid[hi_i], cap) if not ok(cap) else cap
    else:
        upper = None
    if integer:
        return _integer_ends(ok, lower, upper)
    return lower, upper, True


def _refine(ok: Callable[[float], bool], good: float, bad: float) -> float:
    """Bisection (geometric) between a feasible and an infeasible point, to double precision."""
    for _ in range(200):
        mid = math.sqrt(good * bad)
        if mid in (good, bad) or not mid > 0:
            break
        if ok(mid):
            good = mid
        else:
            bad = mid
    return good


def _integer_ends(ok: Callable[[float], bool], lower: float | None, upper: float | None) -> tuple[float | None, float | None, bool]:
    """The admissible integers' ends of a real feasible interval (integer arithmetic, any size)."""
    at = _int_ok(ok)
    hi_int = None if upper is None else math.floor(upper + 1e-9 * upper)
    lo_int = None
    if lower is not None:
        lo_int = first_true(at, math.ceil(lower - 1e-9 * lower), limit=hi_int)
        if lo_int is None:
            return None, None, False
    if hi_int is not None:
        if hi_int >= 1 and not at(hi_int):  # walk down (galloping) to the largest admissible integer
            top = hi_int
            back = first_true(lambda j: top - j < 1 or at(top - j), 1, floor=1, limit=top)
            hi_int = 0 if back is None else top - back
        if hi_int < 1 or (lo_int is not None and hi_int < lo_int):
            return None, None, False
    return (None if lo_int is None else float(lo_int)), (None if hi_int is None else float(hi_int)), True


def first_true(pred: Callable[[int], bool], hint: int, *, floor: int | None = None, limit: int | None = None) -> int | None:
    """The smallest integer ``k >= floor`` with ``pred(k)``, for a monotone ``pred`` (False ... False True ...).

    ``hint`` is a guess (a rounded real solution); the answer is found from it by galloping and bisection in
    integer arithmetic, so it terminates for integers of any size. ``None`` if ``pred`` is False up to ``limit``
    (default: about 2^1100, beyond every float).
    """
    cap = limit if limit is not None else 2**1100
    k = hint if floor is None else max(hint, floor)
    if k > cap:
        return None
    if pred(k):
        lo = (floor - 1) if floor is not None else k - 1
        step = 1
        while k - step > lo and pred(k - step):  # gallop down while still True
            k -= step
            step *= 2
        bad = max(lo, k - step)
        return _bisect_first(pred, bad, k)
    step = 1
    good = k + step
    while good <= cap and not pred(good):
        k = good
        step *= 2
        good = k + step
    if good > cap:
        if cap > k and pred(cap):
            good = cap
        else:
            return None
    return _bisect_first(pred, k, good)


def last_true(pred: Callable[[int], bool], hint: int, *, limit: int | None = None) -> int:
    """The largest integer ``k >= hint`` with ``pred`` True on ``hint..k``, for ``pred`` True ... True False ...

    ``pred(hint)`` must hold (it is not evaluated). Galloping then bisection: terminates for any size.
    """
    cap = limit if limit is not None else 2**1100
    k, step = hint, 1
    while k + step <= cap and pred(k + step):
        k += step
        step *= 2
    hi = min(k + step, cap + 1)
    while hi - k > 1:
        mid = (k + hi) // 2
        if pred(mid):
            k = mid
        else:
            hi = mid
    return k


def _bisect_first(pred: Callable[[int], bool], bad: int, good: int) -> int:
    while good - bad > 1:
        mid = (bad + good) // 2
        if pred(mid):
            good = mid
        else:
            bad = mid
    return good


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
    #: where ``flag == "symbolic"``: the rounds at stated reference values of the unknown constants
    #: (``reference``, each named with where it comes from in ``reference_note``)
    reference_rounds: int | None = None
    reference: dict[str, float] | None = None
    reference_note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "reference_rounds": self.reference_rounds,
            "reference": self.reference,
            "reference_note": self.reference_note,
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


# ---------------------------------------------------------------------------------------------------------
# declarations: a theorem's parameters, conditions, guarantee and unknown constants, as data
# ---------------------------------------------------------------------------------------------------------

_DOMAINS = {"positive": "> 0", "nonnegative": ">= 0", "integer": "an integer >= {minimum}", "sigma2": ">= 0"}
#: the largest integer input accepted (beyond it no double can hold it)
MAX_INTEGER = 10**300


@dataclass(frozen=True)
class Param:
    """One input of a theorem: a problem constant or a parameter (step size, window, horizon).

    ``domain``: ``"positive"`` (> 0), ``"nonnegative"`` (>= 0), ``"integer"`` (>= ``minimum``) or ``"sigma2"``
    (the noise variance, given as ``sigma2`` or ``sigma``). ``default``: a number, or the name of another
    constant (DS FedProxGrad: rho defaults to L_f), used when the input is missing; ``default_note`` then
    goes to the result's notes. ``horizon``: this parameter is the guarantee's horizon (T, R). ``cap``: an
    expression in the constants that the parameter must stay below (FedNMap: gamma < 1/rho), used as the
    end of its implied feasible interval.
    """

    name: str
    symbol: sp.Symbol | None
    domain: str = "positive"
    required: bool = False
    minimum: int = 1
    default: float | str | None = None
    default_note: str = ""
    horizon: bool = False
    cap: sp.Expr | None = None
    required_message: str = ""
    help: str = ""
    #: the command-line flag (default ``--`` + the name with ``_`` as ``-``: ``eta_a`` -> ``--eta-a``)
    flag: str = ""

    def allowed(self) -> str:
        """The allowed range in words: ``> 0``, ``>= 0``, ``an integer >= 1``."""
        return _DOMAINS[self.domain].format(minimum=self.minimum)

    def keys(self) -> tuple[str, ...]:
        """The input names that set this parameter (``sigma`` and ``sigma2`` for the noise variance)."""
        return ("sigma", "sigma2") if self.domain == "sigma2" else (self.name,)

    def flags(self) -> tuple[tuple[str, str], ...]:
        """``(flag, input name)`` pairs for the command line (``fedbounds feasible`` builds its options from them)."""
        if self.domain == "sigma2":
            return (("--sigma", "sigma"), ("--sigma2", "sigma2"))
        return ((self.flag or "--" + self.name.replace("_", "-"), self.name),)

    def check(self, values: Mapping[str, Any]) -> float:
        """The validated value from ``values`` (ValueError naming the parameter and its range)."""
        if self.domain == "sigma2":
            return sigma2_from(values)
        value = values[self.name]
        if self.domain == "integer":
            return check_int(self.name, value, self.minimum)
        return check_positive(self.name, value, strict=self.domain == "positive")


@dataclass(frozen=True)
class Condition:
    """One hypothesis of a theorem: ``value <= bound``, or (``region``) ``parameter`` in a set.

    ``value`` is the expression compared (default: the parameter's symbol), ``lhs`` the same value written in
    the free parameters for the bounds the condition implies on each of ``implied`` (FedNMap: etahat =
    eta_s eta_a Q). ``unless_zero`` names a constant whose value 0 removes the condition (rho = 0: no
    weak-convexity bound); ``if_given`` lists parameters of which one must be given for the condition to be
    shown; ``given_by`` the parameters whose being given means the value was given (else
    ``note_if_not_given``). ``note`` may use ``{key}`` fields of the result's step sizes.
    """

    name: str
    label: str
    status: str
    parameter: str
    bound: sp.Expr | None = None
    value: sp.Expr | None = None
    lhs: sp.Expr | None = None
    implied: tuple[sp.Symbol, ...] = ()
    region: sp.Basic | None = None
    required: bool = True
    unless_zero: str | None = None
    if_given: tuple[str, ...] = ()
    given_by: tuple[str, ...] = ()
    note_if_not_given: str = ""
    note: str = ""


@dataclass(frozen=True)
class TermSpec:
    """One term of a guarantee. ``flag``: ``"exact"`` (exact once its constants are known) or ``"O"`` (an
    O-term: constants lost). ``note`` is always shown; ``note_if_unknown`` while a declared unknown remains."""

    name: str
    expression: sp.Expr
    flag: str = "exact"
    note: str = ""
    note_if_unknown: str = ""


@dataclass(frozen=True)
class Unknown:
    """A constant the paper leaves unknown: where it may be given (``key``) and how it is reported."""

    symbol: sp.Symbol
    key: str
    description: str


@dataclass(frozen=True)
class GuaranteeSpec:
    """What the theorem promises: ``quantity relation sum(terms)`` at the horizon ``horizon``.

    ``floor``: the bound as the horizon grows (an expression, a number, or None). ``complexity``: the paper's
    O-complexity in epsilon, reported beside the rounds. ``rounds_start``: the smallest horizon (a number,
    or a step-size key such as ``"R_min"``). ``note`` may use ``{key}`` fields of the step sizes.

    The hooks handle what is genuinely special: ``build`` (the whole guarantee), ``symbolic_rounds`` (the
    rounds in the unknown constants), ``unreachable_hint`` (what would reach epsilon), ``rounds`` (the
    whole rounds answer). Without hooks the generic solver evaluates the terms, finds the exact rounds by
    search, and solves the bound for the horizon with sympy when an unknown remains.
    """

    claim: str
    quantity: str
    relation: str = "<="
    horizon: sp.Symbol | None = None
    terms: tuple[TermSpec, ...] = ()
    floor: sp.Expr | float | None = None
    complexity: sp.Expr | None = None
    rounds_start: int | str = 0
    note: str = ""
    note_if_unknown: str = ""
    build: Callable[[Point], Guarantee] | None = None
    symbolic_rounds: Callable[[Point, float], RoundsNeeded] | None = None
    unreachable_hint: Callable[[Point, float], tuple[str, dict[str, float] | None]] | None = None
    rounds: Callable[[Point, float], RoundsNeeded] | None = None

    @property
    def bound(self) -> sp.Expr:
        """The bound: the sum of the terms."""
        return sp.Add(*(t.expression for t in self.terms))


@dataclass(frozen=True)
class TheoremSpec:
    """A theorem of the feasibility calculator, as data; :func:`solve` is the one solver that reads it.

    ``constants`` / ``params``: the inputs in report order (see :class:`Param`); ``key_aliases``: other
    spellings of constant names. ``derived``: constants computed from others, ``(name, symbol, expr)``
    (DS FedProxGrad's L_F). ``conditions``, ``guarantee`` and ``unknowns`` are the theorem's content.
    ``aliases``: other names of the theorem; where several theorems share an alias, the one whose
    ``alias_when`` input is given is chosen, else the one without ``alias_when``.

    Hooks (small, named, per theorem): ``checks`` validate combinations of inputs; ``choose`` sets the point
    (default: every missing parameter at its largest admissible value, :func:`choose_largest`); ``finish``
    adds what only this theorem reports (FedNMap's Table 1, DS FedProxGrad's constant-step floor).
    ``region``: ``(name, margin)`` pairs, margins >= 0 iff met, for plots in the plane of two of
    ``region_symbols``; ``region_links``: ``(axis, replaced symbol, expression)``.
    """

    name: str
    title: str
    constants: tuple[Param, ...]
    params: tuple[Param, ...]
    conditions: tuple[Condition, ...]
    guarantee: GuaranteeSpec
    unknowns: tuple[Unknown, ...] = ()
    aliases: tuple[str, ...] = ()
    alias_when: str | None = None
    key_aliases: tuple[tuple[str, str], ...] = ()
    required_for: str = ""
    derived: tuple[tuple[str, sp.Symbol, sp.Expr], ...] = ()
    notes: tuple[str, ...] = ()
    checks: tuple[Callable[[Point], None], ...] = ()
    choose: Callable[[Point], None] | None = None
    finish: tuple[Callable[[Point], None], ...] = ()
    region: tuple[tuple[str, sp.Expr, str | None], ...] = ()
    region_symbols: tuple[tuple[str, sp.Symbol], ...] = ()
    region_links: tuple[tuple[str, sp.Symbol, sp.Expr], ...] = ()
    accepts_problem: bool = False
    implied_rel_tol: float = 0.0
    binding_ties: str = "first"
    #: yes/no facts about the problem (``(name, help)``), passed as ``problem`` (FedNMap's Table 1 class)
    problem_flags: tuple[tuple[str, str], ...] = ()
    #: the plot's default plane (two of ``region_symbols``)
    default_axes: tuple[str, str] | None = None
    #: one line for ``fedbounds feasible --help``: what the theorem says and where it is documented
    summary: str = ""

    def param(self, name: str) -> Param | None:
        """The constant or parameter called ``name``."""
        return next((p for p in self.constants + self.params if p.name == name), None)

    def name_of(self, symbol: sp.Symbol) -> str:
        """The input name of a parameter symbol (its sympy name if it has none)."""
        return next((p.name for p in self.params if p.symbol == symbol), str(symbol))

    @property
    def horizon(self) -> Param | None:
        """The horizon parameter (T, R), if any."""
        return next((p for p in self.params if p.horizon), None)


@dataclass
class Point:
    """The solver's working state for one query: the validated inputs and what the hooks add.

    ``consts`` / ``params``: the validated inputs by name; ``env``: symbol -> value (constants, derived
    constants and the chosen parameters); ``chosen``, ``step_sizes``, ``notes``, ``info`` (scratch for the
    hooks), and the pieces of the answer once they exist.
    """

    spec: TheoremSpec
    consts: dict[str, float]
    params: dict[str, float]
    given: tuple[str, ...]
    env: dict[sp.Symbol, float]
    eps: float | None
    horizon: int | None
    problem: Any = None
    raw: dict[str, float] = field(default_factory=dict)
    chosen: dict[str, float] = field(default_factory=dict)
    step_sizes: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    derived: dict[str, float] = field(default_factory=dict)
    conditions: tuple[ConditionResult, ...] = ()
    binding_by_parameter: dict[str, str] = field(default_factory=dict)
    guarantee: Guarantee | None = None
    rounds: RoundsNeeded | None = None
    table1: tuple[Table1Row, ...] = ()
    problem_class: dict[str, bool | None] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------------------
# the registry of declared theorems
# ---------------------------------------------------------------------------------------------------------

_REGISTRY: dict[str, TheoremSpec] = {}


def register_theorem(spec: TheoremSpec, *, replace: bool = False) -> TheoremSpec:
    """Make ``spec`` answerable by :func:`fedbounds.theory.feasibility.feasibility` (and ``fedbounds feasible``'s solver).

    A new theorem costs only this declaration: its parameters with their ranges, its conditions and
    guarantee as sympy expressions from a formulas module, its unknown constants and aliases. ValueError if
    the name is taken (unless ``replace``) or the declaration is inconsistent. Returns ``spec``.
    """
    if not isinstance(spec, TheoremSpec):
        raise ValueError(f"register_theorem needs a TheoremSpec, got {type(spec).__name__}")
    if spec.name in _REGISTRY and not replace:
        raise ValueError(f"theorem {spec.name!r} is already registered")
    names = [p.name for p in spec.constants + spec.params]
    if len(set(names)) != len(names):
        raise ValueError(f"{spec.name}: duplicate input names in {names}")
    for c in spec.conditions:
        if c.region is None and c.bound is None:
            raise ValueError(f"{spec.name}: condition {c.name!r} has neither a bound nor a region")
        if c.value is None and c.region is None and (spec.param(c.parameter) is None or spec.param(c.parameter).symbol is None):
            raise ValueError(f"{spec.name}: condition {c.name!r} compares {c.parameter!r}, which is no declared parameter")
    _REGISTRY[spec.name] = spec
    return spec


def unregister_theorem(name: str) -> None:
    """Remove a registered theorem (no error if it is not registered)."""
    _REGISTRY.pop(name, None)


def registered() -> tuple[TheoremSpec, ...]:
    """The registered declarations, in registration order."""
    return tuple(_REGISTRY.values())


def resolve_alias(name: str, given: Iterable[str]) -> str | None:
    """The theorem called ``name`` or aliased by it (chosen by which inputs are ``given``); None if unknown."""
    if name in _REGISTRY:
        return name
    given = set(given)
    candidates = [s for s in _REGISTRY.values() if name in s.aliases]
    for s in candidates:
        if s.alias_when is not None and s.alias_when in given:
            return s.name
    return next((s.name for s in candidates if s.alias_when is None), candidates[0].name if candidates else None)


# ---------------------------------------------------------------------------------------------------------
# the generic solver
# ---------------------------------------------------------------------------------------------------------


def solve(
    spec: TheoremSpec, constants: Mapping[str, Any], params: Mapping[str, Any], eps: float | None, problem: Any = None
) -> FeasibilityResult:
    """Answer one feasibility query from a declaration (see :func:`fedbounds.theory.feasibility.feasibility`)."""
    if problem is not None and not spec.accepts_problem:
        raise ValueError("problem (the Table 1 problem class) applies to FedNMap only")
    pt = validate_inputs(spec, constants, params, eps, problem)
    for check in spec.checks:
        check(pt)
    try:
        (spec.choose or choose_largest)(pt)
        pt.conditions = evaluate_conditions(pt)
        pt.binding_by_parameter = binding_by_parameter(pt.conditions, spec)
        pt.guarantee = spec.guarantee.build(pt) if spec.guarantee.build else build_guarantee(pt)
        pt.rounds = rounds_needed(pt) if eps is not None else None
        for hook in spec.finish:
            hook(pt)
    except (OverflowError, ZeroDivisionError) as exc:
        raise ValueError(_out_of_range(pt, f"{type(exc).__name__}: {exc}")) from None
    except ValueError as exc:
        if not str(exc).startswith("cannot convert") and "math domain" not in str(exc):
            raise
        raise ValueError(_out_of_range(pt, str(exc))) from None
    result = _result(pt)
    check_finite(result, pt)
    return result


def validate_inputs(spec: TheoremSpec, constants: Mapping[str, Any], params: Mapping[str, Any], eps: float | None, problem: Any) -> Point:
    """Check the inputs against the declaration: names, required ones, ranges, defaults (ValueError naming one)."""
    aliases = dict(spec.key_aliases)
    constants = {aliases.get(k, k): v for k, v in constants.items()}
    check_keys("constant", constants.keys(), [k for p in spec.constants for k in p.keys()])
    consts: dict[str, float] = {}
    notes: list[str] = []
    for p in spec.constants:
        present = any(constants.get(k) is not None for k in p.keys())
        if not present and p.required:
            raise ValueError(p.required_message or f"{p.name} is required for {spec.required_for or spec.name} ({p.allowed()})")
        if present:
            consts[p.name] = float(p.check(constants))
        elif isinstance(p.default, str):
            consts[p.name] = consts[p.default]
        elif p.default is not None:
            consts[p.name] = float(p.default)
        if p.default is not None and not present and p.default_note:
            notes.append(p.default_note)
    for name, value in consts.items():
        if not math.isfinite(value):
            raise ValueError(_out_of_range_named(name, constants, f"{name} = {value}"))
    check_keys("parameter", params.keys(), [p.name for p in spec.params])
    values = {p.name: p.check(params) for p in spec.params if params.get(p.name) is not None}
    horizon = spec.horizon
    env = {spec.param(k).symbol: v for k, v in consts.items() if spec.param(k).symbol is not None}  # type: ignore[union-attr]
    pt = Point(
        spec=spec,
        consts=consts,
        params={k: float(v) for k, v in values.items()},
        given=tuple(p.name for p in spec.params if params.get(p.name) is not None),
        env=env,
        eps=eps,
        horizon=None if horizon is None or horizon.name not in values else int(values[horizon.name]),
        problem=problem,
        raw={k: v for k, v in constants.items() if v is not None} | {k: v for k, v in params.items() if v is not None},
        notes=notes,
    )
    for name, sym, expr in spec.derived:
        pt.env[sym] = evaluate(expr, pt.env)
        pt.derived[name] = pt.env[sym]
    return pt


def choose_largest(pt: Point) -> None:
    """The default point: each given parameter as given, each missing one at its largest admissible value.

    A parameter's largest admissible value is the smallest bound of the conditions that compare it
    (``<name>_max`` in the step sizes), rounded inward.
    """
    spec = pt.spec
    for p in spec.params:
        if p.horizon or p.symbol is None:
            continue
        bounds = [evaluate(c.bound, pt.env) for c in spec.conditions if c.parameter == p.name and c.value is None and c.bound is not None]
        if bounds:
            pt.step_sizes[f"{p.name}_max"] = round_inward(min(bounds))
        value = pt.params.get(p.name, pt.step_sizes.get(f"{p.name}_max"))
        if value is not None:
            pt.chosen[p.name] = value
            pt.env[p.symbol] = value
    pt.step_sizes.update(pt.chosen)


def _active(c: Condition, pt: Point) -> bool:
    if c.unless_zero is not None and pt.consts.get(c.unless_zero) == 0:
        return False
    return not c.if_given or any(k in pt.given for k in c.if_given)


def evaluate_conditions(pt: Point) -> tuple[ConditionResult, ...]:
    """Every active condition of the declaration, evaluated at the chosen point."""
    return tuple(_region_condition(c, pt) if c.region is not None else _upper(c, pt) for c in pt.spec.conditions if _active(c, pt))


def _upper(c: Condition, pt: Point) -> ConditionResult:
    spec = pt.spec
    value_expr = c.value if c.value is not None else spec.param(c.parameter).symbol  # type: ignore[union-attr]
    lhs = c.lhs if c.lhs is not None else value_expr
    given = not c.given_by or any(k in pt.given for k in c.given_by)
    cond = upper_condition(
        c.name,
        c.label,
        c.status,
        c.parameter,
        value_expr,
        c.bound,
        pt.env,
        evaluate(value_expr, pt.env),
        implied=implied_bounds(c.bound - lhs, tuple(p for p in c.implied if c.value is not None or p != value_expr), pt, c.bound),
        required=c.required,
        note=c.note.format(**pt.step_sizes) if c.note else ("" if given else c.note_if_not_given),
    )
    return cond


def implied_bounds(expr: sp.Expr, params: tuple[sp.Symbol, ...], pt: Point, bound: sp.Expr) -> tuple[ParamBound, ...]:
    """The bound ``expr >= 0`` places on each of ``params``, the others held at the point."""
    spec, env = pt.spec, pt.env
    out = []
    for p in params:
        if p not in expr.free_symbols or p not in env:
            continue
        decl = next(q for q in spec.params if q.symbol == p)
        margin = function_of(expr, p, env)
        cap = evaluate(decl.cap, env) if decl.cap is not None else None
        cap = cap if cap is not None and math.isfinite(cap) and cap > 0 else None
        integer = decl.domain == "integer"
        lo, hi, feasible = feasible_interval(margin, env[p], cap=cap, integer=integer)
        if cap is not None and hi is not None and hi >= cap:
            hi = None
        tol = spec.implied_rel_tol * abs(evaluate(bound, env)) if spec.implied_rel_tol else 0.0
        out.append(
            ParamBound(
                parameter=decl.name,
                lower=lo,
                upper=hi,
                value=env[p],
                meets=margin(env[p]) >= -tol,
                integer=integer,
                note="" if feasible else "no admissible value with the other parameters fixed",
            )
        )
    return tuple(out)


@lru_cache(maxsize=32)
def _as_set(region: sp.Basic) -> sp.Set:
    return region.as_set()


def _region_condition(c: Condition, pt: Point) -> ConditionResult:
    """``parameter`` in the set ``region`` (DS FedProxGrad's Robbins-Monro exponents)."""
    sym = pt.spec.param(c.parameter).symbol  # type: ignore[union-attr]
    interval = _as_set(c.region)
    a = pt.env[sym]
    return ConditionResult(
        name=c.name,
        label=c.label.format(set=interval),
        status=c.status,
        parameter=c.parameter,
        relation=c.region,
        bound=float(interval.sup),
        value=a,
        meets=bool(c.region.subs(sym, sp.Float(a))),
        margin=min(a - float(interval.inf), float(interval.sup) - a),
        ratio=None,
        required=c.required,
    )


def binding_by_parameter(conds: Iterable[ConditionResult], spec: TheoremSpec) -> dict[str, str]:
    """The required condition giving each parameter its smallest upper bound (own bound or implied).

    Ties within 1e-12: the first such condition (``binding_ties="first"``) or the smallest (bound, name).
    """
    names = {p.name for p in spec.params}
    best: dict[str, tuple[float, str]] = {}
    for c in conds:
        if not c.required:
            continue
        cands = [(c.parameter, c.bound)] if c.parameter in names and isinstance(c.relation, sp.Rel) else []
        cands += [(b.parameter, b.upper) for b in c.implied if b.upper is not None]
        for p, ub in cands:
            if ub is None or not math.isfinite(ub):
                continue
            if spec.binding_ties == "first":
                better = p not in best or ub < best[p][0] * (1 - 1e-12)
            else:
                better = p not in best or (ub, c.name) < best[p]
            if better:
                best[p] = (ub, c.name)
    return {p: name for p, (_, name) in best.items()}


def guarantee_env(pt: Point) -> dict[sp.Symbol, float]:
    """The point with the horizon set to the given one (or left free when none is given)."""
    h = pt.spec.horizon
    env = {k: v for k, v in pt.env.items() if h is None or k != h.symbol}
    if h is not None and pt.horizon is not None:
        env[h.symbol] = pt.horizon  # type: ignore[index]
    return env


def _unknown_free(expr: sp.Basic, pt: Point) -> bool:
    return any(u.symbol in expr.free_symbols and u.symbol not in pt.env for u in pt.spec.unknowns)


def make_term(spec: TermSpec, env: Mapping[sp.Symbol, float], pt: Point) -> Term:
    """A declared term evaluated at ``env``: a number, or an expression in what is still unknown."""
    sub = substitute(spec.expression, env)
    free = sorted(s.name for s in sub.free_symbols)
    flag = spec.flag if spec.flag == "O" else ("exact" if not free else "unknown")
    note = spec.note or (spec.note_if_unknown if _unknown_free(spec.expression, pt) else "")
    return Term(name=spec.name, expression=sub, value=value_of(spec.expression, env), flag=flag, unknowns=tuple(free), note=note)


def build_guarantee(pt: Point) -> Guarantee:
    """The declared guarantee at the point: its terms, their total where every one is known, the floor."""
    g = pt.spec.guarantee
    tenv = guarantee_env(pt)
    terms = tuple(make_term(t, tenv, pt) for t in g.terms)
    known = all(t.value is not None for t in terms)
    floor = g.floor if g.floor is None or isinstance(g.floor, float) else value_of(g.floor, pt.env)
    o = g.relation == "O"
    note = g.note.format(**pt.step_sizes) if g.note else ("" if known else g.note_if_unknown)
    h = pt.spec.horizon
    return Guarantee(
        claim=g.claim,
        quantity=g.quantity,
        relation=g.relation,
        horizon_name=h.name if h is not None else "",
        horizon=pt.horizon,
        terms=terms,
        total=sum(t.value for t in terms) if known else None,  # type: ignore[misc]
        floor=floor,
        flag="O" if o else ("exact" if known else "unknown"),
        note=note,
    )


def value_or_expr(expr: sp.Basic) -> str:
    """A number (4 significant digits) if ``expr`` has no free symbol, else the expression."""
    return f"{float(expr):.4g}" if not expr.free_symbols else str(expr)


def rounds_needed(pt: Point) -> RoundsNeeded:
    """The rounds needed to reach epsilon: exact (by search), symbolic in the unknowns, an O-expression, or
    unreachable (the floor exceeds epsilon)."""
    g, eps, h = pt.spec.guarantee, float(pt.eps), pt.spec.horizon  # type: ignore[arg-type]
    if g.rounds is not None:
        return g.rounds(pt, eps)
    name = h.name if h is not None else ""
    o_expr = substitute(g.complexity, {**pt.env, _symbols.epsilon: eps}) if g.complexity is not None else None
    if g.relation == "O":
        msg = f"O-expression (constants lost; epsilon-solution as in the paper): {name} = O({value_or_expr(o_expr)})"
        return RoundsNeeded(eps, name, None, "O", expression=o_expr, message=msg, o_expression=o_expr)
    floor = pt.guarantee.floor if pt.guarantee is not None else None
    if floor is not None and floor >= eps:
        hint_text, hint = g.unreachable_hint(pt, eps) if g.unreachable_hint else ("", None)
        msg = f"unreachable: floor {floor:.6g} > epsilon {eps:g}" + hint_text
        return RoundsNeeded(eps, name, None, "unreachable", message=msg, o_expression=o_expr, suggestion=hint)
    if all(u.symbol in pt.env for u in pt.spec.unknowns):
        start = pt.step_sizes[g.rounds_start] if isinstance(g.rounds_start, str) else g.rounds_start
        bound, sym = g.bound, h.symbol  # type: ignore[union-attr]
        k = smallest_integer(lambda t: evaluate(bound, {**pt.env, sym: t}) <= eps, start=start)
        msg = "" if k is not None else "no horizon below 1e18 reaches epsilon"
        return RoundsNeeded(eps, name, k, "exact" if k is not None else "unreachable", message=msg, o_expression=o_expr)
    if g.symbolic_rounds is not None:
        return g.symbolic_rounds(pt, eps)
    return _solved_rounds(pt, eps, name, o_expr)


def _solved_rounds(pt: Point, eps: float, name: str, o_expr: sp.Basic | None) -> RoundsNeeded:
    """The horizon at which the bound equals epsilon, solved by sympy, in the unknown constants."""
    h = pt.spec.horizon.symbol  # type: ignore[union-attr]
    env = {k: v for k, v in pt.env.items() if k != h}
    hd = sp.Dummy(name, positive=True)
    sols = sp.solve(sp.Eq(substitute(pt.spec.guarantee.bound, env).subs(h, hd), sp.Float(eps)), hd)
    unknown = ", ".join(u.key for u in pt.spec.unknowns if u.symbol not in pt.env)
    if len(sols) != 1:
        msg = f"no closed form for the horizon in the unknown {unknown}"
        return RoundsNeeded(eps, name, None, "symbolic", message=msg, o_expression=o_expr)
    expr = sp.N(sols[0], 12)
    msg = f"exact in the unknown {unknown}: {name} >= {expr}"
    return RoundsNeeded(eps, name, None, "symbolic", expression=expr, message=msg, o_expression=o_expr)


def _result(pt: Point) -> FeasibilityResult:
    spec = pt.spec
    params = {p.symbol for p in spec.params if p.symbol is not None}
    fixed = {s: v for s, v in pt.env.items() if s not in params}
    region = {}
    for name, expr, unless_zero in spec.region:
        if unless_zero is None or pt.consts.get(unless_zero) != 0:
            region[name] = substitute(expr, fixed)
    return FeasibilityResult(
        theorem=spec.name,
        title=spec.title,
        constants={**pt.consts, **pt.derived},
        chosen=pt.chosen,
        given=pt.given,
        conditions=pt.conditions,
        admissible=all(c.meets for c in pt.conditions if c.required),
        binding=binding_of(pt.conditions),
        binding_by_parameter=pt.binding_by_parameter,
        step_sizes=pt.step_sizes,
        guarantee=pt.guarantee,  # type: ignore[arg-type]
        rounds_needed=pt.rounds,
        table1=pt.table1,
        problem_class=pt.problem_class,
        notes=tuple(spec.notes) + tuple(pt.notes),
        region=region,
        region_symbols=dict(spec.region_symbols),
        region_links={axis: (replaced, substitute(by, fixed)) for axis, replaced, by in spec.region_links},
    )


# ---------------------------------------------------------------------------------------------------------
# results that double precision cannot hold: rejected, naming the input at fault
# ---------------------------------------------------------------------------------------------------------


def _magnitude(v: Any) -> float:
    try:
        x = abs(float(getattr(v, "value", v)))
    except (TypeError, ValueError, OverflowError):
        return math.inf
    return abs(math.log10(x)) if x > 0 and math.isfinite(x) else (math.inf if x > 0 else 0.0)


def _out_of_range_named(name: str, raw: Mapping[str, Any], what: str) -> str:
    value = raw.get(name, raw.get("sigma") if name == "sigma2" else None)
    shown = "sigma" if name == "sigma2" and "sigma" in raw else name
    return (
        f"{shown} = {_short(value)} is outside the range the calculator can evaluate in double precision "
        f"({what}); use a value of moderate size"
    )


def _short(value: Any) -> str:
    try:
        return f"{float(getattr(value, 'value', value)):.6g}"
    except (TypeError, ValueError, OverflowError):
        text = repr(value)
        return text if len(text) <= 24 else text[:21] + "..."


def _out_of_range(pt: Point, what: str) -> str:
    """The message for a result that is not a finite number: it names the most extreme input."""
    numeric = {k: v for k, v in pt.raw.items() if not isinstance(v, bool)}
    culprit = max(numeric, key=lambda k: _magnitude(numeric[k]), default=None)
    if culprit is None:  # pragma: no cover - every theorem has inputs
        return f"no finite answer ({what})"
    return _out_of_range_named(culprit, numeric, what)


def check_finite(result: FeasibilityResult, pt: Point) -> None:
    """No NaN anywhere, and no infinite or vanishing point, bound or guarantee: ValueError naming the input."""
    bad: list[str] = []
    for k, v in result.chosen.items():
        decl = pt.spec.param(k)
        if not math.isfinite(v) or (v <= 0 and decl is not None and decl.domain in ("positive", "integer")):
            bad.append(f"{k} = {v:g}")
    for c in result.conditions:
        # an infinite bound is an answer (the condition binds nothing: rho = 0, or a vanishing B); NaN is not
        if math.isnan(c.bound) or (c.value is not None and not math.isfinite(c.value)):
            bad.append(f"the bound of {c.name} = {c.bound:g}")
    bad += [f"{k} = {v:g}" for k, v in result.step_sizes.items() if isinstance(v, float) and math.isnan(v)]
    g = result.guarantee
    for t in g.terms + g.extra_terms:
        if t.value is not None and not math.isfinite(t.value):
            bad.append(f"the guarantee's term {t.name!r} = {t.value:g}")
    for x, what in ((g.total, "total"), (g.floor, "floor")):
        if x is not None and not math.isfinite(x):
            bad.append(f"the guarantee's {what} = {x:g}")
    bad += [
        f"Table 1's {r.method} rate = {r.rate_value:g}"
        for r in result.table1
        if r.rate_value is not None and not math.isfinite(r.rate_value)
    ]
    if bad:
        raise ValueError(_out_of_range(pt, bad[0]))
