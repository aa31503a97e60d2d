"""Feasibility calculator for FedNMap (arXiv 2602.03357): Theorem 5 (nonconvex) and Theorem 8 (PL).

Conditions (Theorem 5, [V]; ``fedbounds.theory.fednmap.formulas.theorem5_conditions``)::

    gamma  <= 1/(5(rho+L)),
    etahat <= (1-gamma rho) / (100 m sqrt(L^2 + 1/gamma^2)),
    eta_a  <= (1-gamma rho) / (100 Q sqrt(m (L^2 + 1/gamma^2))),

with etahat = eta_s eta_a Q ([I], reconstruction note section 2.4) and m >= 1 the multistep window (an
analysis parameter). Theorem 8's own step-size conditions are lost with the text; Theorem 5's are used
(reconstruction note, section 4). Every expression comes from :mod:`fedbounds.theory.fednmap.formulas`; this module
only evaluates and solves them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import sympy as sp
from fedbounds.theory.core.feasibility import (
    ConditionResult,
    FeasibilityResult,
    Guarantee,
    ParamBound,
    RoundsNeeded,
    Term,
    binding_of,
    check_int,
    check_keys,
    check_positive,
    evaluate,
    feasible_interval,
    function_of,
    meets_upper,
    round_inward,
    sigma2_from,
    smallest_integer,
    substitute,
    upper_condition,
    value_of,
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
from fedbounds.theory.fednmap.feasibility_table1 import ProblemClass, table1_comparison

CONSTANT_KEYS = ("L", "rho", "n", "Q", "sigma", "sigma2", "mu", "C_0", "EL_0", "Delta_f", "grad0_sq", "zeta2")
PARAM_KEYS = ("gamma", "eta_a", "eta_s", "eta_hat", "m", "T")

#: parameter name -> symbol (the plane of a feasible-region plot is any two of these)
PARAM_SYMBOLS: dict[str, sp.Symbol] = {"gamma": gamma, "eta_hat": eta_hat, "eta_a": eta_a, "eta_s": eta_s, "m": m}

_CONDITION_NAMES = {gamma: "theorem5.gamma", eta_hat: "theorem5.eta_hat", eta_a: "theorem5.eta_a"}
_CONDITION_LABELS = {
    gamma: "Theorem 5, gamma <= 1/(5(rho+L))",
    eta_hat: "Theorem 5, etahat <= (1-gamma rho)/(100 m sqrt(L^2+1/gamma^2))",
    eta_a: "Theorem 5, eta_a <= (1-gamma rho)/(100 Q sqrt(m(L^2+1/gamma^2)))",
}
_PARAM_NAME = {gamma: "gamma", eta_hat: "eta_hat", eta_a: "eta_a", eta_s: "eta_s", m: "m"}


# ---------------------------------------------------------------------------------------------------------
# the theory's expressions, solved for other parameters (cached: solved once per process)
# ---------------------------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _solved() -> dict[str, sp.Expr]:
    """Theorem 5's conditions and the etahat definition solved for m and eta_s (sympy.solve, cached)."""
    md = sp.Dummy("m", positive=True)
    m_eta_hat = [core.window_real]  # [D] in fednmap_core: the etahat condition solved for m
    m_eta_a = sp.solve(sp.Eq(core.theorem5_eta_a_max.subs(m, md), eta_a), md)
    eta_s_def = sp.solve(sp.Eq(eta_hat, core.eta_hat_definition), eta_s)
    eta_a_def = sp.solve(sp.Eq(eta_hat, core.eta_hat_definition), eta_a)
    assert len(m_eta_hat) == len(m_eta_a) == len(eta_s_def) == len(eta_a_def) == 1
    return {"m_eta_hat": m_eta_hat[0], "m_eta_a": m_eta_a[0], "eta_s": eta_s_def[0], "eta_a": eta_a_def[0]}


def _largest_m(expr_key: str, values: Mapping[sp.Symbol, float], cond: sp.Symbol) -> int:
    """The largest integer m whose Theorem 5 condition on ``cond`` holds (0 if even m = 1 fails)."""
    x = evaluate(_solved()[expr_key], values)
    if not math.isfinite(x) or x < 1 - 1e-9:
        x = 0.0
    k = max(math.floor(x * (1 + 1e-12)), 0)
    rhs = core.theorem5_conditions[cond]

    def ok(mm: int) -> bool:
        return mm >= 1 and meets_upper(values[cond], evaluate(rhs, {**values, m: mm}))

    while k >= 1 and not ok(k):
        k -= 1
    while ok(k + 1):
        k += 1
    return k


# ---------------------------------------------------------------------------------------------------------
# input
# ---------------------------------------------------------------------------------------------------------


def _constants(constants: Mapping[str, Any], theorem: str) -> dict[str, float]:
    check_keys("constant", constants.keys(), CONSTANT_KEYS)
    for req, allowed in (("L", "> 0"), ("rho", ">= 0"), ("n", "an integer >= 1"), ("Q", "an integer >= 1")):
        if constants.get(req) is None:
            raise ValueError(f"{req} is required for {theorem} ({allowed})")
    out: dict[str, float] = {
        "L": check_positive("L", constants["L"]),
        "rho": check_positive("rho", constants["rho"], strict=False),
        "n": float(check_int("n", constants["n"], 1)),
        "Q": float(check_int("Q", constants["Q"], 1)),
        "sigma2": sigma2_from(constants),
    }
    if constants.get("mu") is not None:
        out["mu"] = check_positive("mu", constants["mu"])
        if out["mu"] > out["L"] * (1 + 1e-12):
            raise ValueError(
                f"mu must lie in (0, L] = (0, {out['L']:g}] (the PL constant of an L-smooth f is at most L), got {out['mu']:g}"
            )
    elif theorem == "fednmap.theorem8":
        raise ValueError("mu is required for fednmap.theorem8 (the proximal-PL constant of Assumption 4), in (0, L]")
    for key in ("C_0", "EL_0", "Delta_f", "grad0_sq", "zeta2"):
        if constants.get(key) is not None:
            out[key] = check_positive(key, constants[key], strict=False)
    return out


_SYM = {
    "L": L,
    "rho": rho,
    "n": n,
    "Q": Q,
    "sigma2": sigma2,
    "mu": mu,
    "C_0": C_0,
    "EL_0": EL_0,
    "Delta_f": Delta_f,
    "grad0_sq": grad0_sq,
    "zeta2": zeta2,
}


def _choose(consts: dict[str, float], params: Mapping[str, Any]) -> tuple[dict[str, float], dict[str, Any], dict[sp.Symbol, float]]:
    """The chosen point: the given parameters, the missing ones at their largest admissible values."""
    check_keys("parameter", params.keys(), PARAM_KEYS)
    env: dict[sp.Symbol, float] = {_SYM[k]: v for k, v in consts.items()}
    info: dict[str, Any] = {}
    gamma_max = evaluate(core.theorem5_gamma_max, env)
    info["gamma_max"] = round_inward(gamma_max)

    if params.get("gamma") is not None:
        g = check_positive("gamma", params["gamma"])
        if consts["rho"] > 0 and g * consts["rho"] >= 1:
            raise ValueError(f"gamma must lie in (0, 1/rho) = (0, {1 / consts['rho']:.6g}) for rho = {consts['rho']:g}, got {g:g}")
    else:
        g = info["gamma_max"]
    env[gamma] = g

    ea = check_positive("eta_a", params["eta_a"]) if params.get("eta_a") is not None else None
    es = check_positive("eta_s", params["eta_s"]) if params.get("eta_s") is not None else None
    eh = check_positive("eta_hat", params["eta_hat"]) if params.get("eta_hat") is not None else None
    if ea is None and eh is not None and es is not None:
        ea = evaluate(_solved()["eta_a"], {**env, eta_hat: eh, eta_s: es})
    elif ea is not None and es is not None:
        implied = evaluate(core.eta_hat_definition, {**env, eta_s: es, eta_a: ea})
        if eh is not None and not math.isclose(implied, eh, rel_tol=1e-9):
            raise ValueError(f"eta_hat must equal eta_s*eta_a*Q = {implied:.6g} (the effective step), got {eh:g}")
        eh = implied

    if params.get("m") is not None:
        mm = check_int("m", params["m"], 1)
        info["m_source"] = "given"
    elif eh is not None:
        mm = _largest_m("m_eta_hat", {**env, eta_hat: eh}, eta_hat)
        if ea is not None:
            mm = min(mm, _largest_m("m_eta_a", {**env, eta_a: ea}, eta_a))
        if mm >= 1:
            info["m_source"] = "largest m admitted by the given step sizes"
        else:
            mm = 1
            info["m_source"] = "m = 1 (no window m >= 1 admits the given step sizes)"
    else:
        mm = 1
        info["m_source"] = "default m = 1"
    env[m] = mm

    info["eta_hat_max"] = round_inward(evaluate(core.theorem5_eta_hat_max, env))
    info["eta_a_max"] = round_inward(evaluate(core.theorem5_eta_a_max, env))
    if ea is None:
        ea = info["eta_a_max"]
    env[eta_a] = ea
    if eh is None:
        eh = evaluate(core.eta_hat_definition, {**env, eta_s: es}) if es is not None else info["eta_hat_max"]
    env[eta_hat] = eh
    if es is None:
        es = evaluate(_solved()["eta_s"], env)
    env[eta_s] = es
    info["eta_s_at_maxima"] = evaluate(core.eta_s_at_maxima, env)
    info["eta_s_max"] = evaluate(_solved()["eta_s"], {**env, eta_hat: info["eta_hat_max"]})
    if params.get("eta_hat") is not None or (params.get("eta_s") is not None and params.get("eta_a") is not None):
        info["m_max_eta_hat"] = _largest_m("m_eta_hat", env, eta_hat)
    if params.get("eta_a") is not None:
        info["m_max_eta_a"] = _largest_m("m_eta_a", env, eta_a)
    chosen = {"gamma": g, "eta_a": ea, "eta_s": es, "eta_hat": eh, "m": float(mm)}
    return chosen, info, env


# ---------------------------------------------------------------------------------------------------------
# conditions
# ---------------------------------------------------------------------------------------------------------


def _margin_expr(cond: sp.Symbol) -> sp.Expr:
    """bound - parameter for the Theorem 5 condition on ``cond``, with etahat = eta_s eta_a Q."""
    lhs = core.eta_hat_definition if cond is eta_hat else cond
    return core.theorem5_conditions[cond] - lhs


def _implied(cond: sp.Symbol, env: dict[sp.Symbol, float], rho_value: float) -> tuple[ParamBound, ...]:
    expr = _margin_expr(cond)
    out = []
    for p in (gamma, eta_a, eta_s, m):
        if p is cond or p not in expr.free_symbols:
            continue
        if cond is eta_a and p is eta_a:
            continue

        margin = function_of(expr, p, env)
        cap = 1 / rho_value if (p is gamma and rho_value > 0) else None
        lo, hi, feasible = feasible_interval(margin, env[p], cap=cap, integer=p is m)
        if p is gamma and cap is not None and hi is not None and hi >= cap:
            hi = None
        value = env[p]
        meets = margin(value) >= -1e-12 * abs(evaluate(core.theorem5_conditions[cond], env))
        out.append(
            ParamBound(
                parameter=_PARAM_NAME[p],
                lower=lo,
                upper=hi,
                value=value,
                meets=meets,
                integer=p is m,
                note="" if feasible else "no admissible value with the other parameters fixed",
            )
        )
    return tuple(out)


def _conditions(env: dict[sp.Symbol, float], given: set[str], rho_value: float) -> tuple[ConditionResult, ...]:
    out = []
    for sym, rhs in core.theorem5_conditions.items():
        out.append(
            upper_condition(
                _CONDITION_NAMES[sym],
                _CONDITION_LABELS[sym],
                "verbatim",
                _PARAM_NAME[sym],
                sym,
                rhs,
                env,
                env[sym],
                implied=_implied(sym, env, rho_value),
                note=""
                if _PARAM_NAME[sym] in given or (sym is eta_hat and "eta_s" in given)
                else "not given: set to its largest admissible value",
            )
        )
    return tuple(out)


def _binding_by_parameter(conds: tuple[ConditionResult, ...]) -> dict[str, str]:
    best: dict[str, tuple[float, str]] = {}
    for c in conds:
        cands = [(c.parameter, c.bound)] + [(b.parameter, b.upper) for b in c.implied if b.upper is not None]
        for p, ub in cands:
            if ub is None or not math.isfinite(ub):
                continue
            if p not in best or ub < best[p][0] * (1 - 1e-12):
                best[p] = (ub, c.name)
    return {p: name for p, (_, name) in best.items()}


# ---------------------------------------------------------------------------------------------------------
# guarantees
# ---------------------------------------------------------------------------------------------------------


def _term(name: str, expr: sp.Expr, env: Mapping[sp.Symbol, float], flag_unknown: str = "unknown", note: str = "") -> Term:
    sub = substitute(expr, env)
    free = sorted((s.name for s in sub.free_symbols), key=str)
    value = value_of(expr, env)
    flag = "exact" if not free else flag_unknown
    return Term(name=name, expression=sub, value=value, flag=flag, unknowns=tuple(free), note=note)


def _theorem8(env: dict[sp.Symbol, float], horizon: int | None, eps: float | None) -> tuple[Guarantee, RoundsNeeded | None]:
    tenv = dict(env)
    if horizon is not None:
        tenv[T] = horizon
    unknown_note = "C_0 and E[L_0] are lost with the text (Lyapunov constant, initial Lyapunov value)"
    terms = (
        _term("transient exp(-2 etahat mu T/(9(1+gamma mu C_0))) E[L_0]", core.theorem8_transient, tenv, note=unknown_note),
        _term("variance 36 sigma^2/(m n mu Q)", core.theorem8_variance, tenv),
        _term("drift 12100 eta_a^2 Q L^2 sigma^2/(mu (1-gamma rho)^2)", core.theorem8_drift, tenv),
    )
    floor = evaluate(core.theorem8_floor, env)
    known = all(t.value is not None for t in terms)
    total = sum(t.value for t in terms) if known else None  # type: ignore[misc]
    g = Guarantee(
        claim="fednmap.theorem8",
        quantity="E[psi(x_T)] - psi*",
        relation="<=",
        horizon_name="T",
        horizon=horizon,
        terms=terms,
        total=total,
        floor=floor,
        flag="exact" if known else "unknown",
        note="" if known else "terms in C_0, E[L_0] (unknown) or T (no horizon given) are left symbolic",
    )
    if eps is None:
        return g, None
    o_expr = substitute(core.theorem8_complexity, {**env, epsilon: eps})
    if floor >= eps:
        hint_text, hint = _hint(env, eps)
        return g, RoundsNeeded(
            eps,
            "T",
            None,
            "unreachable",
            message=f"unreachable: floor {floor:.6g} > epsilon {eps:g}" + hint_text,
            o_expression=o_expr,
            suggestion=hint,
        )
    if C_0 in env and EL_0 in env:
        k = smallest_integer(lambda t: evaluate(core.theorem8_bound, {**env, T: t}) <= eps, start=0)
        msg = "" if k is not None else "no horizon below 1e18 reaches epsilon"
        return g, RoundsNeeded(eps, "T", k, "exact" if k is not None else "unreachable", message=msg, o_expression=o_expr)
    gap, sol = _transient_rounds()
    expr = sp.N(sol.xreplace({gap: sp.Float(eps - floor), **{k: sp.Float(v) for k, v in env.items()}}), 12)
    return g, RoundsNeeded(
        eps,
        "T",
        None,
        "symbolic",
        expression=expr,
        message=f"exact in the unknown C_0, E[L_0]: T >= {expr}; Õ-complexity (constants lost) ≈ {_value_or_expr(o_expr)}",
        o_expression=o_expr,
    )


@lru_cache(maxsize=1)
def _transient_rounds() -> tuple[sp.Symbol, sp.Expr]:
    """Theorem 8's transient term solved for T: the T at which it equals ``gap`` (epsilon minus the floor)."""
    gap, Td = sp.Dummy("gap", positive=True), sp.Dummy("T", positive=True)
    (sol,) = sp.solve(sp.Eq(core.theorem8_transient.subs(T, Td), gap), Td)
    return gap, sol


def _hint(env: dict[sp.Symbol, float], eps: float) -> tuple[str, dict[str, float] | None]:
    """What would reach epsilon: fednmap_core's [D] step sizes that put each of Theorem 8's floor terms <= epsilon/3."""
    eh = getattr(core, "theorem8_eta_hat_for_variance", None)
    ea = getattr(core, "theorem8_eta_a_for_drift", None)
    if eh is None or ea is None:  # pragma: no cover - older fednmap_core
        return "", None
    e = {**env, epsilon: eps}
    eh_v, ea_v = evaluate(eh, e), evaluate(ea, e)
    m_v = evaluate(core.window_real, {**e, eta_hat: eh_v})
    m_int = max(1, math.floor(m_v))
    # the window that makes the variance term small also tightens Theorem 5's eta_a condition: take the smaller
    ea_cond = evaluate(core.theorem5_eta_a_max, {**e, m: m_int})
    binding = "the drift term" if ea_v <= ea_cond else f"Theorem 5's eta_a condition at m = {m_int}"
    text = (
        f"; to reach it (each term <= epsilon/3): eta_hat <= {eh_v:.4g} with the window m = {m_int}, "
        f"eta_a <= {min(ea_v, ea_cond):.4g} (binding: {binding}; eta_s = eta_hat/(eta_a Q) free)"
    )
    return text, {"eta_hat": eh_v, "m": float(m_int), "eta_a": min(ea_v, ea_cond)}


def _value_or_expr(expr: sp.Basic) -> str:
    return f"{float(expr):.4g}" if not expr.free_symbols else str(expr)


def _theorem5(env: dict[sp.Symbol, float], horizon: int | None, eps: float | None) -> tuple[Guarantee, RoundsNeeded | None]:
    tenv = dict(env)
    if horizon is not None:
        tenv[T] = horizon
    note = "Theorem 5's bound is lost with the text: only its rate (Table 1) is known, its constants are not"
    terms = tuple(_term(f"O-term {t}", t, tenv, flag_unknown="O", note=note) for t in (sp.Add.make_args(core.theorem5_rate)))
    terms = tuple(Term(t.name, t.expression, t.value, "O", t.unknowns, t.note) for t in terms)
    known = all(t.value is not None for t in terms)
    g = Guarantee(
        claim="fednmap.theorem5",
        quantity="(1/T) sum_t E||F_nor^gamma(z_t)||^2 (reconstructed reading)",
        relation="O",
        horizon_name="T",
        horizon=horizon,
        terms=terms,
        total=sum(t.value for t in terms) if known else None,  # type: ignore[misc]
        flag="O",
        note=note,
    )
    if eps is None:
        return g, None
    o_expr = substitute(core.theorem5_complexity, {**env, epsilon: eps})
    return g, RoundsNeeded(
        eps,
        "T",
        None,
        "O",
        expression=o_expr,
        message=f"O-expression (constants lost; epsilon-solution as in the paper): T = O({_value_or_expr(o_expr)})",
        o_expression=o_expr,
    )


# ---------------------------------------------------------------------------------------------------------
# entry point
# ---------------------------------------------------------------------------------------------------------


def fednmap_feasibility(
    theorem: str,
    constants: Mapping[str, Any],
    params: Mapping[str, Any],
    eps: float | None,
    problem: ProblemClass | Mapping[str, Any] | None,
) -> FeasibilityResult:
    """Feasibility of FedNMap's Theorem 5 / Theorem 8 conditions; see :func:`fedbounds.theory.feasibility.feasibility`."""
    consts = _constants(constants, theorem)
    horizon = check_int("T", params["T"], 1) if params.get("T") is not None else None
    chosen, info, env = _choose(consts, params)
    given = tuple(k for k in PARAM_KEYS if params.get(k) is not None)
    conds = _conditions(env, set(given), consts["rho"])
    admissible = all(c.meets for c in conds)
    binding = binding_of(conds)
    by_param = _binding_by_parameter(conds)
    step_sizes: dict[str, Any] = {
        "gamma_max": info["gamma_max"],
        "gamma": chosen["gamma"],
        "m": int(chosen["m"]),
        "m_source": info["m_source"],
        "eta_hat_max": info["eta_hat_max"],
        "eta_a_max": info["eta_a_max"],
        "eta_s_at_maxima": info["eta_s_at_maxima"],
        "eta_s_max": info["eta_s_max"],
        "eta_s_range": f"(0, {info['eta_s_max']:.6g}] at eta_a = {chosen['eta_a']:.6g} (eta_s = etahat/(eta_a Q))",
        "eta_hat": chosen["eta_hat"],
        "eta_a": chosen["eta_a"],
        "eta_s": chosen["eta_s"],
    }
    for key in ("m_max_eta_hat", "m_max_eta_a"):
        if key in info:
            step_sizes[key] = info[key]
    notes = [
        "etahat = eta_s eta_a Q is a high-confidence reconstruction (reconstruction note 2.4)",
        "m is the analysis window (not an algorithm parameter); larger m shrinks the variance term but also etahat_max",
    ]
    if theorem == "fednmap.theorem8":
        notes.append("Theorem 8's own step-size conditions are lost; Theorem 5's are used (reconstruction note 4)")
        guarantee, rounds = _theorem8(env, horizon, eps)
    else:
        guarantee, rounds = _theorem5(env, horizon, eps)
    pclass, rows = table1_comparison(consts, problem, env, horizon)
    region = {c.name: core.theorem5_conditions[s] - s for c, s in zip(conds, core.theorem5_conditions)}
    region = {k: substitute(v, {_SYM[c]: consts[c] for c in consts}) for k, v in region.items()}
    return FeasibilityResult(
        theorem=theorem,
        title="FedNMap " + ("Theorem 8 (proximal PL)" if theorem == "fednmap.theorem8" else "Theorem 5 (nonconvex)"),
        constants=dict(consts),
        chosen=chosen,
        given=given,
        conditions=conds,
        admissible=admissible,
        binding=binding,
        binding_by_parameter=by_param,
        step_sizes=step_sizes,
        guarantee=guarantee,
        rounds_needed=rounds,
        table1=rows,
        problem_class=pclass,
        notes=tuple(notes),
        region=region,
        region_symbols=dict(PARAM_SYMBOLS),
        region_links={"eta_s": (eta_hat, substitute(core.eta_hat_definition, {Q: consts["Q"]}))},
    )
