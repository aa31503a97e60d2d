"""The generic solver for a theorem's region: validate the inputs against the declaration, choose the point,
evaluate every condition and what it implies, the guarantee and the rounds; and reject answers that double
precision cannot hold, naming the input at fault."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

import sympy as sp
from fedbounds.theory.core import symbols as _symbols
from fedbounds.theory.core.feasibility.declarations import (
    Condition,
    Point,
    TermSpec,
    TheoremSpec,
)
from fedbounds.theory.core.feasibility.intervals import (
    ParamBound,
    feasible_interval,
    smallest_integer,
)
from fedbounds.theory.core.feasibility.numeric import (
    _short,
    check_keys,
    evaluate,
    function_of,
    round_inward,
    substitute,
    value_of,
)
from fedbounds.theory.core.feasibility.results import (
    ConditionResult,
    FeasibilityResult,
    Guarantee,
    RoundsNeeded,
    Term,
    binding_of,
    upper_condition,
)

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
        footing=spec.footing,
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


def _out_of_range(pt: Point, what: str) -> str:
    """The message for a result that is not a finite number: it names the most extreme input."""
    numeric = {k: v for k, v in pt.raw.items() if not isinstance(v, bool)}
    if getattr(pt, "eps", None) is not None:  # the target accuracy is an input too (1e-308 overflows the rounds)
        numeric["epsilon"] = pt.eps
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
