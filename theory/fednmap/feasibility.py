"""Feasibility declarations for FedNMap (arXiv 2602.03357): Theorem 5 (nonconvex) and Theorem 8 (PL).

Conditions (Theorem 5, [V]; ``fedbounds.theory.fednmap.formulas.theorem5_conditions``)::

    gamma  <= 1/(5(rho+L)),
    etahat <= (1-gamma rho) / (100 m sqrt(L^2 + 1/gamma^2)),
    eta_a  <= (1-gamma rho) / (100 Q sqrt(m (L^2 + 1/gamma^2))),

with etahat = eta_s eta_a Q ([I], docs/fednmap-reconstruction.md section 2.4) and m >= 1 the multistep
window (an analysis parameter). Theorem 8's own step-size conditions are lost with the text; Theorem 5's
are used (docs/fednmap-reconstruction.md, section 4).

Both theorems are *declared* (:data:`THEOREM5`, :data:`THEOREM8`) and answered by the generic solver of
:mod:`fedbounds.theory.core.feasibility`. What remains code is genuinely FedNMap's: how the window m and the
server step are chosen from the step sizes given (:func:`choose_point`), Theorem 8's rounds in the unknown
C_0, E[L_0] and the step sizes that would reach an unreachable epsilon, and the Table 1 comparison.
Every expression comes from :mod:`fedbounds.theory.fednmap.formulas`.

Beside the conditions, :func:`report_sections` gives the report's extra sections (the ``feasible`` command prints
every paper's): here the largest steps the PEP certifies at the point (:mod:`fedbounds.theory.fednmap.pep_steps`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import sympy as sp
from fedbounds.theory.core.feasibility import (
    Condition,
    FeasibilityResult,
    GuaranteeSpec,
    Param,
    Point,
    RoundsNeeded,
    TermSpec,
    TheoremSpec,
    Unknown,
    _tex_text,
    evaluate,
    first_true,
    last_true,
    meets_upper,
    round_inward,
    smallest_integer,
    substitute,
)
from fedbounds.theory.core.symbols import (
    C_0,
    EL_0,
    Delta_f,
    L,
    Q,
    T,
    epsilon,
    eta_a,
    eta_hat,
    eta_s,
    gamma,
    grad0_sq,
    m,
    mu,
    n,
    rho,
    sigma2,
    zeta2,
)
from fedbounds.theory.fednmap import formulas as core
from fedbounds.theory.fednmap.feasibility_table1 import table1_comparison

__all__ = ["DECLARATIONS", "PARAM_SYMBOLS", "THEOREM5", "THEOREM8", "ReportSection", "noise_floor_section", "pep_section",
           "report_sections"]

#: parameter name -> symbol (the plane of a feasible-region plot is any two of these)
PARAM_SYMBOLS: dict[str, sp.Symbol] = {"gamma": gamma, "eta_hat": eta_hat, "eta_a": eta_a, "eta_s": eta_s, "m": m}

# ---------------------------------------------------------------------------------------------------------
# the inputs
# ---------------------------------------------------------------------------------------------------------

_MU_REQUIRED = "mu is required for fednmap.theorem8 (the proximal-PL constant of Assumption 4), in (0, L]"


def _constants(mu_required: bool) -> tuple[Param, ...]:
    return (
        Param("L", L, "positive", required=True, help="smoothness of every f_i (Assumption 2)"),
        Param("rho", rho, "nonnegative", required=True, help="weak-convexity modulus of phi (Assumption 3)"),
        Param("n", n, "integer", required=True, help="number of clients"),
        Param("Q", Q, "integer", required=True, help="local steps per round"),
        Param("sigma2", sigma2, "sigma2", help="gradient noise: --sigma its standard deviation, or --sigma2 its variance (Assumption 1)"),
        Param("mu", mu, "positive", required=mu_required, required_message=_MU_REQUIRED,
              help="proximal-PL constant (Assumption 4), in (0, L]; selects Theorem 8 for 'fednmap'"),
        Param("C_0", C_0, "nonnegative", flag="--C0", help="Theorem 8's Lyapunov constant C_0, if known (lost with the text)"),
        Param("EL_0", EL_0, "nonnegative", flag="--EL0", help="Theorem 8's initial Lyapunov value E[L_0], if known (lost with the text)"),
        Param("Delta_f", Delta_f, "nonnegative", help="f(x_0) - f* (Theorem 5's complexity)"),
        Param("grad0_sq", grad0_sq, "nonnegative", help="(1/n) sum_i ||grad f_i(x_0)||^2"),
        Param("zeta2", zeta2, "nonnegative", help="heterogeneity bound zeta^2 (Table 1)"),
    )


PARAMS = (
    Param("gamma", gamma, "positive", cap=1 / rho, help="prox parameter, in (0, 1/rho); default: its largest admissible value"),
    Param("eta_a", eta_a, "positive", help="client step; default: its largest admissible value"),
    Param("eta_s", eta_s, "positive", help="server step (etahat = eta_s eta_a Q)"),
    Param("eta_hat", eta_hat, "positive", help="effective step etahat = eta_s eta_a Q (instead of --eta-s)"),
    Param("m", m, "integer", help="analysis window m >= 1 (not an algorithm parameter); default: chosen to minimise "
          "the rounds to --epsilon (Theorem 8), else the largest a given --eta-hat admits, else 1"),
    Param("T", T, "integer", horizon=True, help="horizon (rounds) at which to evaluate the guarantee"),
)


def _mu_at_most_L(pt: Point) -> None:
    """mu lies in (0, L]: the PL constant of an L-smooth f is at most L."""
    c = pt.consts
    if "mu" in c and c["mu"] > c["L"] * (1 + 1e-12):
        raise ValueError(f"mu must lie in (0, L] = (0, {c['L']:g}] (the PL constant of an L-smooth f is at most L), got {c['mu']:g}")


def _gamma_below_1_over_rho(pt: Point) -> None:
    """gamma < 1/rho (the prox of a rho-weakly convex phi with parameter gamma is single-valued)."""
    g, r = pt.params.get("gamma"), pt.consts["rho"]
    if g is not None and r > 0 and g * r >= 1:
        raise ValueError(f"gamma must lie in (0, 1/rho) = (0, {1 / r:.6g}) for rho = {r:g}, got {g:g}")


# ---------------------------------------------------------------------------------------------------------
# the conditions (Theorem 5, verbatim), and the region they bound
# ---------------------------------------------------------------------------------------------------------

_NOT_GIVEN = "not given: set to its largest admissible value"
#: the yes/no facts of Table 1's problem class (``ProblemClass``), as command-line switches
PROBLEM_FLAGS = (
    ("convex", "f is convex"),
    ("strongly_convex", "f is strongly convex"),
    ("pl", "psi satisfies the proximal-PL inequality (implied by --mu)"),
    ("quadratic", "every f_i is quadratic"),
    ("bounded_heterogeneity", "||grad f_i - grad f||^2 <= zeta^2 everywhere"),
    ("bounded_iterates", "the iterates stay bounded"),
    ("bounded_subgradients", "bounded subgradients of psi (B_psi)"),
)
_IMPLIED = (gamma, eta_a, eta_s, m)

CONDITIONS = (
    Condition(
        "theorem5.gamma",
        "Theorem 5, gamma <= 1/(5(rho+L))",
        "verbatim",
        "gamma",
        bound=core.theorem5_conditions[gamma],
        implied=_IMPLIED,
        given_by=("gamma",),
        note_if_not_given=_NOT_GIVEN,
    ),
    Condition(
        "theorem5.eta_hat",
        "Theorem 5, etahat <= (1-gamma rho)/(100 m sqrt(L^2+1/gamma^2))",
        "verbatim",
        "eta_hat",
        bound=core.theorem5_conditions[eta_hat],
        lhs=core.eta_hat_definition,
        implied=_IMPLIED,
        given_by=("eta_hat", "eta_s"),
        note_if_not_given=_NOT_GIVEN,
    ),
    Condition(
        "theorem5.eta_a",
        "Theorem 5, eta_a <= (1-gamma rho)/(100 Q sqrt(m(L^2+1/gamma^2)))",
        "verbatim",
        "eta_a",
        bound=core.theorem5_conditions[eta_a],
        implied=(gamma, eta_s, m),
        given_by=("eta_a",),
        note_if_not_given=_NOT_GIVEN,
    ),
)
REGION = tuple((c.name, c.bound - PARAM_SYMBOLS[c.parameter], None) for c in CONDITIONS)

# ---------------------------------------------------------------------------------------------------------
# the point: the given step sizes, the window m, and the missing ones at their largest admissible values
# ---------------------------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _solved() -> dict[str, sp.Expr]:
    """Theorem 5's conditions and the etahat definition solved for m and eta_s (sympy.solve, cached)."""
    md = sp.Dummy("m", positive=True)
    m_eta_hat = [core.window_real]  # [D] in the formulas: the etahat condition solved for m
    m_eta_a = sp.solve(sp.Eq(core.theorem5_eta_a_max.subs(m, md), eta_a), md)
    eta_s_def = sp.solve(sp.Eq(eta_hat, core.eta_hat_definition), eta_s)
    eta_a_def = sp.solve(sp.Eq(eta_hat, core.eta_hat_definition), eta_a)
    assert len(m_eta_hat) == len(m_eta_a) == len(eta_s_def) == len(eta_a_def) == 1
    return {"m_eta_hat": m_eta_hat[0], "m_eta_a": m_eta_a[0], "eta_s": eta_s_def[0], "eta_a": eta_a_def[0]}


def _largest_m(expr_key: str, values: Mapping[sp.Symbol, float], cond: sp.Symbol) -> int:
    """The largest integer m whose Theorem 5 condition on ``cond`` holds (0 if even m = 1 fails).

    From the real solution, corrected in integer arithmetic (any size: no stepping of a float).
    """
    x = evaluate(_solved()[expr_key], values)
    hint = max(math.floor(x * (1 + 1e-12)), 0) if math.isfinite(x) and x >= 1 - 1e-9 else 0
    rhs = core.theorem5_conditions[cond]

    def ok(mm: int) -> bool:
        try:
            mf = float(mm)
        except OverflowError:
            return False
        return mm >= 1 and meets_upper(values[cond], evaluate(rhs, {**values, m: mf}))

    if hint >= 1 and not ok(hint):
        found = first_true(lambda j: hint - j < 1 or ok(hint - j), 1, floor=1, limit=hint)
        return 0 if found is None else hint - found
    return last_true(lambda k: ok(k), hint)


def _given_steps(pt: Point) -> tuple[float | None, float | None, float | None]:
    """eta_a, eta_s, etahat as given, completed by etahat = eta_s eta_a Q (and checked against it)."""
    ea, es, eh = (pt.params.get(k) for k in ("eta_a", "eta_s", "eta_hat"))
    if ea is None and eh is not None and es is not None:
        ea = evaluate(_solved()["eta_a"], {**pt.env, eta_hat: eh, eta_s: es})
    elif ea is not None and es is not None:
        implied = evaluate(core.eta_hat_definition, {**pt.env, eta_s: es, eta_a: ea})
        if eh is not None and not math.isclose(implied, eh, rel_tol=1e-9):
            raise ValueError(f"eta_hat must equal eta_s*eta_a*Q = {implied:.6g} (the effective step), got {eh:g}")
        eh = implied
    return ea, es, eh


#: reference values of Theorem 8's lost constants: used only to choose the window m and to give the rounds as a
#: number beside their exact expression in C_0 and E[L_0] (each replaced by the value given, when given)
REFERENCE: dict[str, float] = {"C_0": 1.0, "EL_0": 1.0}
REFERENCE_NOTE = (
    "C_0 = 1: the Lyapunov constant the PEP certifies at the printed steps (claim fednmap.pep.lyapunov_constants, "
    "docs/fednmap-reconstruction.md §10.3); E[L_0] = 1: a unit initial Lyapunov gap, in the units of epsilon "
    "(give --C0 and --EL0 for your problem)"
)
_WINDOW_NOTE = "m is the analysis window, not an algorithm parameter; --m fixes it"


def _reference_env(pt: Point, env: Mapping[sp.Symbol, float]) -> dict[sp.Symbol, float]:
    """``env`` with C_0 and E[L_0] set to :data:`REFERENCE` where not given."""
    out = dict(env)
    out.setdefault(C_0, REFERENCE["C_0"])
    out.setdefault(EL_0, REFERENCE["EL_0"])
    return out


def _env_at_window(pt: Point, mm: int, ea: float | None) -> dict[sp.Symbol, float]:
    """The point at window ``mm``: eta_hat at its largest (Theorem 5), eta_a as given or at its largest."""
    e = {**pt.env, m: float(mm)}
    e[eta_hat] = round_inward(evaluate(core.theorem5_eta_hat_max, e))
    e[eta_a] = ea if ea is not None else round_inward(evaluate(core.theorem5_eta_a_max, e))
    return _reference_env(pt, e)


def _rounds_at(e: Mapping[sp.Symbol, float], eps: float) -> float:
    """Theorem 8's horizon (real) at which the bound reaches ``eps``: the transient at epsilon - floor (inf if the
    floor is not below epsilon); from the formulas' expressions solved by sympy (:func:`_transient_rounds`)."""
    floor = evaluate(core.theorem8_floor, e)
    if not floor < eps:
        return math.inf
    gap, sol = _transient_rounds()
    return max(evaluate(sol, {**e, gap: eps - floor}), 0.0)


def argmin_integer(f: Any, lo: int, cap: int | None = None) -> int:
    """The integer k in [lo, cap] minimising ``f``, for ``f`` quasi-convex (decreasing, then increasing):
    galloping from ``lo`` to bracket the minimum, then ternary search (integer arithmetic)."""
    cache: dict[int, float] = {}

    def g(k: int) -> float:
        if k not in cache:
            cache[k] = f(k)
        return cache[k]

    top = cap if cap is not None else 2**62
    if lo >= top or g(lo + 1) >= g(lo):
        return lo
    prev, cur, step = lo, lo + 1, 1
    while True:
        nxt = min(cur + 2 * step, top)
        step *= 2
        if nxt == cur or g(nxt) >= g(cur):
            break
        prev, cur = cur, nxt
    a, b = prev, nxt
    while b - a > 2:
        m1, m2 = (2 * a + b) // 3, (a + 2 * b) // 3
        if g(m1) <= g(m2):
            b = m2
        else:
            a = m1
    return min(range(a, b + 1), key=g)


def _best_window(pt: Point, ea: float | None) -> tuple[int, str] | None:
    """Theorem 8's window m minimising the rounds to reach epsilon (else, with a horizon T, the bound at T), eta_hat
    and eta_a at their largest at each m; None when there is nothing to minimise (Theorem 5, or no epsilon or T)."""
    if pt.spec.name != "fednmap.theorem8" or (pt.eps is None and pt.horizon is None):
        return None
    cap = _largest_m("m_eta_a", {**pt.env, eta_a: ea}, eta_a) if ea is not None else None
    if cap is not None and cap < 1:
        return None
    if pt.eps is not None:
        eps = float(pt.eps)
        floor = lambda k: evaluate(core.theorem8_floor, _env_at_window(pt, k, ea))  # noqa: E731
        hint = max(1, math.floor(floor(1) / eps))
        lo = first_true(lambda k: floor(k) < eps, hint, floor=1, limit=cap)
        if lo is None:  # a given eta_a keeps the drift term above epsilon: the largest window minimises the floor
            return int(cap), f"m = {cap}: the largest window eta_a admits (it minimises the floor; {_WINDOW_NOTE})"  # type: ignore[arg-type]
        best = argmin_integer(lambda k: _rounds_at(_env_at_window(pt, k, ea), eps), lo, cap)
        return best, f"m = {best} chosen: minimises T to reach epsilon ({_WINDOW_NOTE})"
    horizon = float(pt.horizon)  # type: ignore[arg-type]
    best = argmin_integer(lambda k: evaluate(core.theorem8_bound, {**_env_at_window(pt, k, ea), T: horizon}), 1, cap)
    return best, f"m = {best} chosen: minimises the bound at T = {pt.horizon} ({_WINDOW_NOTE})"


def _window(pt: Point, ea: float | None, eh: float | None, es: float | None = None) -> tuple[int, str]:
    """The window m: given; else the largest that a given eta_hat admits; else (Theorem 8, with --epsilon or --T)
    the one minimising the rounds (:func:`_best_window`); else 1."""
    if "m" in pt.params:
        return int(pt.params["m"]), "given"
    if eh is None and es is None:
        best = _best_window(pt, ea)
        if best is not None:
            return best
        if pt.spec.name == "fednmap.theorem5":
            return 1, "m = 1: Theorem 5's rate does not involve m, and m = 1 gives the largest steps"
        return 1, "m = 1: no --epsilon or --T to choose it by (m = 1 gives the largest steps)"
    if eh is None:
        return 1, "default m = 1"
    mm = _largest_m("m_eta_hat", {**pt.env, eta_hat: eh}, eta_hat)
    if ea is not None:
        mm = min(mm, _largest_m("m_eta_a", {**pt.env, eta_a: ea}, eta_a))
    if mm >= 1:
        return mm, "largest m admitted by the given step sizes"
    return 1, "m = 1 (no window m >= 1 admits the given step sizes)"


def choose_point(pt: Point) -> None:
    """The point: the given parameters, the window m, and the missing step sizes at their largest values."""
    env, s = pt.env, pt.step_sizes
    s["gamma_max"] = round_inward(evaluate(core.theorem5_gamma_max, env))
    env[gamma] = g = pt.params.get("gamma", s["gamma_max"])
    ea, es, eh = _given_steps(pt)
    mm, source = _window(pt, ea, eh, es)
    env[m] = mm
    s.update(gamma=g, m=mm, m_source=source)
    s["eta_hat_max"] = round_inward(evaluate(core.theorem5_eta_hat_max, env))
    s["eta_a_max"] = round_inward(evaluate(core.theorem5_eta_a_max, env))
    env[eta_a] = ea = s["eta_a_max"] if ea is None else ea
    if eh is None:
        eh = evaluate(core.eta_hat_definition, {**env, eta_s: es}) if es is not None else s["eta_hat_max"]
    env[eta_hat] = eh
    env[eta_s] = es = evaluate(_solved()["eta_s"], env) if es is None else es
    s["eta_s_at_maxima"] = evaluate(core.eta_s_at_maxima, env)
    s["eta_s_max"] = evaluate(_solved()["eta_s"], {**env, eta_hat: s["eta_hat_max"]})
    s["eta_s_range"] = f"(0, {s['eta_s_max']:.6g}] at eta_a = {ea:.6g} (eta_s = etahat/(eta_a Q))"
    s.update(eta_hat=eh, eta_a=ea, eta_s=es)
    given = set(pt.given)
    if "eta_hat" in given or {"eta_s", "eta_a"} <= given:
        s["m_max_eta_hat"] = _largest_m("m_eta_hat", env, eta_hat)
    if "eta_a" in given:
        s["m_max_eta_a"] = _largest_m("m_eta_a", env, eta_a)
    pt.chosen.update(gamma=g, eta_a=ea, eta_s=es, eta_hat=eh, m=float(mm))


def _table1(pt: Point) -> None:
    """The problem class and Table 1's rows (:mod:`fedbounds.theory.fednmap.feasibility_table1`)."""
    pt.problem_class, pt.table1 = table1_comparison(pt.consts, pt.problem, pt.env, pt.horizon)


# ---------------------------------------------------------------------------------------------------------
# Theorem 8: its rounds in the unknown C_0, E[L_0], and what would reach an unreachable epsilon
# ---------------------------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _transient_rounds() -> tuple[sp.Symbol, sp.Expr]:
    """Theorem 8's transient term solved for T: the T at which it equals ``gap`` (epsilon minus the floor)."""
    gap, Td = sp.Dummy("gap", positive=True), sp.Dummy("T", positive=True)
    (sol,) = sp.solve(sp.Eq(core.theorem8_transient.subs(T, Td), gap), Td)
    return gap, sol


def _symbolic_rounds(pt: Point, eps: float) -> RoundsNeeded:
    """Theorem 8's rounds, exact in the unknown C_0 and E[L_0]: the transient term at epsilon - floor."""
    gap, sol = _transient_rounds()
    floor = pt.guarantee.floor  # type: ignore[union-attr]
    expr = sp.N(sol.xreplace({gap: sp.Float(eps - floor), **{k: sp.Float(v) for k, v in pt.env.items()}}), 12)
    o_expr = substitute(core.theorem8_complexity, {**pt.env, epsilon: eps})
    ref_env = _reference_env(pt, pt.env)
    ref = smallest_integer(lambda t: evaluate(core.theorem8_bound, {**ref_env, T: t}) <= eps)
    given = {k for k in ("C_0", "EL_0") if k in pt.consts}
    # ``rounds`` holds the number at the reference constants (named by the result's footing line); the exact
    # answer in the unknown constants stays in ``expression``. Table 1's Õ-complexity is kept in ``o_expression``
    # only: its constants are lost, so its value is no number of rounds.
    return RoundsNeeded(
        eps,
        "T",
        ref,
        "symbolic",
        expression=expr,
        message=f"exact in the unknown C_0, E[L_0]: T >= {expr}",
        o_expression=o_expr,
        reference_rounds=ref,
        reference={k: ref_env[s] for k, s in (("C_0", C_0), ("EL_0", EL_0)) if k not in given},
        reference_note=REFERENCE_NOTE,
    )


def _hint(pt: Point, eps: float) -> tuple[str, dict[str, float] | None]:
    """What would reach epsilon: the formulas' [D] step sizes that put each of Theorem 8's floor terms <= epsilon/3."""
    e = {**pt.env, epsilon: eps}
    eh_v, ea_v = evaluate(core.theorem8_eta_hat_for_variance, e), evaluate(core.theorem8_eta_a_for_drift, e)
    m_v = evaluate(core.window_real, {**e, eta_hat: eh_v})
    if not math.isfinite(m_v):
        return "", None
    m_int = max(1, math.floor(m_v))
    # the window that makes the variance term small also tightens Theorem 5's eta_a condition: take the smaller
    ea_cond = evaluate(core.theorem5_eta_a_max, {**e, m: m_int})
    binding = "the drift term" if ea_v <= ea_cond else f"Theorem 5's eta_a condition at m = {m_int}"
    text = (
        f"; to reach it (each term <= epsilon/3): eta_hat <= {eh_v:.4g} with the window m = {m_int}, "
        f"eta_a <= {min(ea_v, ea_cond):.4g} (binding: {binding}; eta_s = eta_hat/(eta_a Q) free)"
    )
    return text, {"eta_hat": eh_v, "m": float(m_int), "eta_a": min(ea_v, ea_cond)}


# ---------------------------------------------------------------------------------------------------------
# the two theorems, declared
# ---------------------------------------------------------------------------------------------------------

_UNKNOWN_8 = "C_0 and E[L_0] are lost with the text (Lyapunov constant, initial Lyapunov value)"
_LOST_5 = "Theorem 5's bound is lost with the text: only its rate (Table 1) is known, its constants are not"
_NOTES = (
    "etahat = eta_s eta_a Q is a high-confidence reconstruction (docs/fednmap-reconstruction.md §2.4)",
    "m is the analysis window (not an algorithm parameter); larger m shrinks the variance term but also etahat_max "
    "(docs/fednmap-reconstruction.md §4.2)",
)

THEOREM8 = TheoremSpec(
    name="fednmap.theorem8",
    title="FedNMap Theorem 8 (proximal PL)",
    constants=_constants(mu_required=True),
    params=PARAMS,
    conditions=CONDITIONS,
    guarantee=GuaranteeSpec(
        claim="fednmap.theorem8",
        quantity="E[psi(x_T)] - psi*",
        relation="<=",
        horizon=T,
        terms=(
            TermSpec("transient exp(-2 etahat mu T/(9(1+gamma mu C_0))) E[L_0]", core.theorem8_transient, note=_UNKNOWN_8),
            TermSpec("variance 36 sigma^2/(m n mu Q)", core.theorem8_variance),
            TermSpec("drift 12100 eta_a^2 Q L^2 sigma^2/(mu (1-gamma rho)^2)", core.theorem8_drift),
        ),
        floor=core.theorem8_floor,
        complexity=core.theorem8_complexity,
        note_if_unknown="terms in C_0, E[L_0] (unknown) or T (no horizon given) are left symbolic",
        symbolic_rounds=_symbolic_rounds,
        unreachable_hint=_hint,
    ),
    unknowns=(
        Unknown(C_0, "C_0", "Theorem 8's Lyapunov constant, lost with the text"),
        Unknown(EL_0, "EL_0", "the initial Lyapunov value E[L_0], lost with the text"),
    ),
    aliases=("fednmap",),
    alias_when="mu",
    notes=(*_NOTES, "Theorem 8's own step-size conditions are lost; Theorem 5's are used (docs/fednmap-reconstruction.md §4.2)"),
    footing="Theorem 5's step-size conditions stand in for Theorem 8's (lost; docs/fednmap-reconstruction.md §4.2)",
    checks=(_mu_at_most_L, _gamma_below_1_over_rho),
    choose=choose_point,
    finish=(_table1,),
    region=REGION,
    region_symbols=tuple(PARAM_SYMBOLS.items()),
    region_links=(("eta_s", eta_hat, core.eta_hat_definition),),
    accepts_problem=True,
    implied_rel_tol=1e-12,
    problem_flags=PROBLEM_FLAGS,
    default_axes=("eta_a", "eta_hat"),
    summary="FedNMap Theorem 8 (proximal PL, with --mu) or Theorem 5 (nonconvex); docs/fednmap-reconstruction.md §4",
)

THEOREM5 = replace(
    THEOREM8,
    name="fednmap.theorem5",
    title="FedNMap Theorem 5 (nonconvex)",
    constants=_constants(mu_required=False),
    guarantee=GuaranteeSpec(
        claim="fednmap.theorem5",
        quantity="(1/T) sum_t E||F_nor^gamma(z_t)||^2 (reconstructed reading)",
        relation="O",
        horizon=T,
        terms=tuple(TermSpec(f"O-term {t}", t, flag="O", note=_LOST_5) for t in sp.Add.make_args(core.theorem5_rate)),
        complexity=core.theorem5_complexity,
        note=_LOST_5,
    ),
    unknowns=(
        Unknown(Delta_f, "Delta_f", "f(x_0) - f*, in Theorem 5's complexity"),
        Unknown(grad0_sq, "grad0_sq", "(1/n) sum_i ||grad f_i(x_0)||^2, in Theorem 5's complexity"),
    ),
    alias_when=None,
    notes=_NOTES,
)

#: the declarations this paper contributes to the calculator (read by :mod:`fedbounds.theory.feasibility`)
DECLARATIONS: tuple[TheoremSpec, ...] = (THEOREM5, THEOREM8)


# ---------------------------------------------------------------------------------------------------------
# the report's extra section: the largest steps the PEP certifies at the point (both theorems use Theorem 5's)
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReportSection:
    """An extra section of a feasibility report: ``key`` (its --json key), ``title`` and ``lines`` (text), ``data``
    (JSON-ready) and ``latex`` (one line of the ``align*``)."""

    key: str
    title: str
    lines: tuple[str, ...]
    data: dict[str, Any] = field(default_factory=dict)
    latex: str = ""


_PEP_TITLE = "PEP-certified steps (worst case over the class; docs/fednmap-reconstruction.md §10)"
_PEP_CAVEAT = ("each horizon is certified (two solvers) at its own largest k; the minimum over T assumes the certified "
               "multipliers form an interval [0, k*]")


def _pep_lines(c: Any, result: FeasibilityResult) -> list[str]:
    """The text of a covered point: certified vs printed steps, the horizons, constants and certificates."""
    gaps = ", ".join(f"{s} {g:.2g}" for s, g in c.max_gap.items()) or "-"
    out = [
        f"  {'eta_hat':<8} certified {c.eta_hat:.6g}   printed {c.eta_hat_printed:.6g}   ratio k = {c.k:.4g}",
        f"  {'eta_a':<8} certified {c.eta_a:.6g}   printed {c.eta_a_printed:.6g}   ratio k = {c.k:.4g}",
        f"  {'eta_s':<8} {c.eta_s:.6g} (fixed at the printed eta_hat/(eta_a Q))",
        f"  certified for T in {{{', '.join(map(str, c.T))}}}: binding T = {c.T_binding} with (C_0, C_c) = ({c.C_0:g}, {c.C_c:g}); "
        f"status {c.status}; max |duality gap| {gaps}",
        f"  grid point (scale invariance): rho/L = {c.rho / c.L:.6g}, gamma L = {c.gamma * c.L:.6g}, n = {c.n}, Q = {c.Q}, m = 1",
        f"  note: {_PEP_CAVEAT}",
    ]
    m_point = result.step_sizes.get("m", 1)
    if m_point != 1:
        out.append(f"  note: the grid's window is m = 1; at this point's m = {m_point} Theorem 5 prints eta_hat_max = "
                   f"{result.step_sizes['eta_hat_max']:.6g}, eta_a_max = {result.step_sizes['eta_a_max']:.6g} "
                   "(the certified steps do not involve m)")
    return out


def pep_section(result: FeasibilityResult) -> ReportSection:
    """The largest PEP-certified (eta_hat, eta_a) at the result's (L, rho, gamma, n, Q), or why it is not covered
    (:func:`fedbounds.theory.fednmap.pep_steps.certified_steps`)."""
    from fedbounds.theory.fednmap import pep_evidence as ev
    from fedbounds.theory.fednmap.pep_steps import certified_steps

    c = result.constants
    got = certified_steps(c["L"], c["rho"], c["n"], c["Q"], gamma=result.chosen["gamma"])
    data = got.to_dict()
    if not got.covered:
        line = rf"&{_tex_text('PEP-certified steps: not covered: ' + got.reason)} \\  % pep_certified_steps"
        lines = [f"  not covered: {got.reason}"]
        grid_q = sorted({int(r["Q"]) for r in ev.STEPS})
        if got.reason.startswith("n = ") and int(c["Q"]) not in grid_q:
            lines.append(f"  Q = {int(c['Q'])} is off the grid too (grid: Q in {{{', '.join(map(str, grid_q))}}}): no certified "
                         "multiple to carry to this n")
        elif got.reason.startswith("n = "):
            lines.append("  --pep-certify certifies the grid's steps at this n now, in the client-symmetric block form "
                         "(its size does not depend on n; docs/fednmap-reconstruction.md §10.4)")
        return ReportSection("pep_certified_steps", _PEP_TITLE, tuple(lines), data, line)
    data["note"] = _PEP_CAVEAT
    line = (rf"&\hat{{\eta}} \le {got.eta_hat:.6g},\ \eta_{{a}} \le {got.eta_a:.6g} && \text{{PEP-certified, }} "
            rf"k = {got.k:.4g} \times \text{{printed}} \\  % pep_certified_steps")
    return ReportSection("pep_certified_steps", _PEP_TITLE, tuple(_pep_lines(got, result)), data, line)


_FLOOR_TITLE = "Noise floor: Theorem 8's printed floor beside the stochastic PEP's certified one (theory/fednmap/spep_floor.py)"


def noise_floor_section(result: FeasibilityResult) -> ReportSection:
    """Theorem 8's printed noise floor beside the floor the stochastic PEP certifies at the point, where the committed
    grid covers it (:func:`fedbounds.theory.fednmap.spep_floor.certified_noise_floor`), else "not covered" and the
    nearest grid point."""
    from fedbounds.theory.fednmap.spep_floor import certified_noise_floor

    c, ch = result.constants, result.chosen
    if "sigma2" not in c:
        lines = ("  no noise given (--sigma or --sigma2): nothing to compare",)
        return ReportSection("stochastic_pep_floor", _FLOOR_TITLE, lines, {"covered": False, "reason": "no sigma given"})
    from fedbounds.theory.core.evaluate import evaluate as by_name

    mm = int(ch["m"])
    printed = by_name(core.theorem8_floor, {**{k: float(v) for k, v in c.items()}, **ch})
    got = certified_noise_floor(c["L"], c["rho"], c["mu"], int(c["n"]), int(c["Q"]), ch["gamma"], ch["eta_a"], ch["eta_hat"],
                                c["sigma2"], m=mm, C_0=c.get("C_0"))
    head = f"  printed   36 sigma^2/(m n mu Q) + 12100 eta_a^2 Q L^2 sigma^2/(mu (1-gamma rho)^2) = {printed:.6g}   (m = {mm})"
    if not got.covered:
        lines = (head, f"  certified not covered: {got.reason}")
        tex = rf"&{_tex_text('stochastic PEP floor: not covered by the certified grid')} \\  % stochastic_pep_floor"
        return ReportSection("stochastic_pep_floor", _FLOOR_TITLE, lines, got.to_dict() | {"printed_floor": printed}, tex)
    d = got.to_dict()
    lines_l = [head]
    if mm != 1:
        lines_l.append(f"  printed at m = 1 (the certificate's window): {got.printed_m1:.6g}")
    lines_l += [
        f"  certified K sigma^2/e8 = {got.floor:.6g}   = {got.ratio:.3g} x the printed floor at m = 1   "
        f"(K = {got.K:.6g} per round, C_0 = {got.C_0:g}, C_c = {got.C_c:g})",
        f"  scope: {got.scope}",
    ]
    tex = (rf"&\text{{noise floor}} \le {got.floor:.6g} && \text{{stochastic PEP, certified; printed }} {got.printed_m1:.6g}"
           rf"\ (m = 1) \\  % stochastic_pep_floor")
    return ReportSection("stochastic_pep_floor", _FLOOR_TITLE, tuple(lines_l), d, tex)


def report_sections(result: FeasibilityResult) -> tuple[ReportSection, ...]:
    """The extra sections of a FedNMap feasibility report (called by
    :func:`fedbounds.theory.feasibility.report_sections` for this paper's theorems only): the PEP-certified steps,
    and for Theorem 8 the certified noise floor beside the printed one."""
    if result.theorem == "fednmap.theorem8":
        return (pep_section(result), noise_floor_section(result))
    return (pep_section(result),)
