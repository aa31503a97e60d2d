"""Feasibility calculator for DS FedProxGrad (arXiv 2512.08671): Theorem 5.3 and Corollary (ii).

Hypotheses (A4, from :mod:`fedbounds.theory.ds_fedproxgrad.formulas`): ``eta_r <= 1/(6 L_F)`` (A4(iv)),
``eta_r <= 1/(2 rho)`` (A4(ii)), ``gamma_r <= c_gamma eta_r`` (10), and for Theorem 5.3 a Robbins-Monro
schedule (A4(i)); Lemma 5.2's absorption needs ``gamma_r <= 1/(sqrt(10) B)`` ([INF], notes 1.4), which a
decaying schedule reaches from round ``r_0`` on, and a constant step must meet in every round.
Guarantees: Theorem 5.3, ``liminf E||grad F(x^r)||^2 = 0`` (no rate); Corollary (ii) with every constant
(notes 1.6, ``corollary_ii_bound``), and the constant-step noise floor (``constant_step_bound``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
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
    L_F,
    B,
    Delta_0,
    Delta_r0,
    G,
    G_r,
    L_f,
    L_r,
    R,
    Xi_sum,
    alpha,
    c,
    c_gamma,
    epsilon,
    eta,
    gamma_r,
    lam,
    r,
    r_0,
    rho_f,
    sigma2,
)
from fedbounds.theory.ds_fedproxgrad import formulas as core

CONSTANT_KEYS = ("L_f", "L_r", "lam", "G", "B", "G_r", "sigma", "sigma2", "rho", "Delta_0")
_CONSTANT_ALIASES = {"lambda": "lam", "rho_f": "rho", "Delta0": "Delta_0", "L-f": "L_f", "L-r": "L_r", "G-r": "G_r"}
PARAM_KEYS = ("c", "alpha", "c_gamma", "eta", "gamma_r", "R")

#: parameter name -> symbol (the plane of a feasible-region plot is any two of these)
PARAM_SYMBOLS: dict[str, sp.Symbol] = {"eta": eta, "gamma_r": gamma_r, "c_gamma": c_gamma}


@lru_cache(maxsize=1)
def _solved() -> dict[str, sp.Expr]:
    """The absorption threshold as a bound on eta (from (10) and the threshold), and the constant-step floor."""
    sol = sp.solve(sp.Eq(core.gamma_r_max, core.absorption_gamma_max), eta)
    assert len(sol) == 1
    floor = sp.limit(core.constant_step_bound(Delta_0), R, sp.oo)
    return {"eta_absorption": sol[0], "constant_floor": floor}


def _constants(constants: Mapping[str, Any]) -> tuple[dict[str, float], list[str]]:
    constants = {_CONSTANT_ALIASES.get(k, k): v for k, v in constants.items()}
    check_keys("constant", constants.keys(), CONSTANT_KEYS)
    for req in ("L_f", "G", "B"):
        if constants.get(req) is None:
            raise ValueError(f"{req} is required for DS FedProxGrad (> 0)")
    notes = []
    out = {
        "L_f": check_positive("L_f", constants["L_f"]),
        "L_r": check_positive("L_r", constants.get("L_r", 0.0) or 0.0, strict=False),
        "lam": check_positive("lam", constants.get("lam", 0.0) or 0.0, strict=False),
        "G": check_positive("G", constants["G"]),
        "B": check_positive("B", constants["B"]),
        "G_r": check_positive("G_r", constants.get("G_r", 0.0) or 0.0, strict=False),
        "sigma2": sigma2_from(constants),
    }
    if constants.get("rho") is not None:
        out["rho"] = check_positive("rho", constants["rho"], strict=False)
    else:
        out["rho"] = out["L_f"]
        notes.append("rho not given: rho = L_f (every L_f-smooth f_i is L_f-weakly convex), so A4(ii) is implied by A4(iv)")
    if constants.get("Delta_0") is not None:
        out["Delta_0"] = check_positive("Delta_0", constants["Delta_0"], strict=False)
    return out, notes


_SYM = {"L_f": L_f, "L_r": L_r, "lam": lam, "G": G, "B": B, "G_r": G_r, "sigma2": sigma2, "rho": rho_f, "Delta_0": Delta_0}


def _min_bound(bounds: Mapping[str, float]) -> tuple[float, str]:
    name = min(bounds, key=lambda k: bounds[k])
    return bounds[name], name


def _implied(expr: sp.Expr, env: dict[sp.Symbol, float], params: tuple[sp.Symbol, ...]) -> tuple[ParamBound, ...]:
    """The bound ``expr >= 0`` places on each of ``params`` (the others held at ``env``)."""
    out = []
    for p in params:
        if p not in expr.free_symbols or p not in env:
            continue

        margin = function_of(expr, p, env)
        lo, hi, feasible = feasible_interval(margin, max(env[p], 1e-300), integer=p is R)
        out.append(
            ParamBound(
                parameter=str(p),
                lower=lo,
                upper=hi,
                value=env[p],
                meets=margin(env[p]) >= 0,
                integer=p is R,
                note="" if feasible else "no admissible value with the other parameters fixed",
            )
        )
    return tuple(out)


def _eta_conditions(
    prefix: str,
    step: sp.Expr,
    env: dict[sp.Symbol, float],
    implied_params: tuple[sp.Symbol, ...],
    what: str,
    rho_zero: bool,
    required: bool = True,
) -> list[ConditionResult]:
    """A4(iv) and A4(ii) on the step ``step`` (eta_0 = c, c/sqrt(R), or a constant eta)."""
    value = evaluate(step, env)
    out = []
    for name, label, rhs in (
        ("A4(iv)", "A4(iv): eta_r <= 1/(6 L_F)", core.eta_max_smooth),
        ("A4(ii)", "A4(ii): eta_r <= 1/(2 rho)", core.eta_max_weak),
    ):
        if name == "A4(ii)" and rho_zero:
            continue
        cond = upper_condition(
            f"{prefix}{name}",
            label + f" ({what})",
            "verbatim",
            what,
            eta,
            rhs,
            env,
            value,
            implied=_implied(rhs - step, env, implied_params),
            required=required,
        )
        out.append(_with_relation(cond, sp.Le(step, rhs, evaluate=False)))
    return out


def _with_relation(cond: ConditionResult, relation: sp.Basic) -> ConditionResult:
    """The same condition, shown as ``relation`` (the theory's bound applied to the schedule's step)."""
    return replace(cond, relation=relation)


def ds_feasibility(theorem: str, constants: Mapping[str, Any], params: Mapping[str, Any], eps: float | None) -> FeasibilityResult:
    """Feasibility of DS FedProxGrad's hypotheses; see :func:`fedbounds.theory.feasibility.feasibility`."""
    consts, notes = _constants(constants)
    check_keys("parameter", params.keys(), PARAM_KEYS)
    env: dict[sp.Symbol, float] = {_SYM[k]: v for k, v in consts.items()}
    env[L_F] = evaluate(core.L_F_definition, env)
    rho_zero = consts["rho"] == 0

    eta_smooth = evaluate(core.eta_max_smooth, env)
    eta_weak = math.inf if rho_zero else evaluate(core.eta_max_weak, env)
    eta_max, eta_binding = _min_bound({"A4(iv)": eta_smooth, "A4(ii)": eta_weak})

    if params.get("c_gamma") is not None:
        cg = check_positive("c_gamma", params["c_gamma"], strict=False)
        cg_source = "given"
    else:
        cg = evaluate(core.exact_prox_gamma / eta, {**env, eta: eta_max})
        cg_source = "not given: the ratio gamma/eta of an exact local prox at eta_max (exact_prox_gamma, notes 1.5(4))"
    env[c_gamma] = cg
    thr = evaluate(core.absorption_gamma_max, env)
    eta_abs = math.inf if cg == 0 else evaluate(_solved()["eta_absorption"], env)
    eta_max_const, eta_const_binding = _min_bound({"A4(iv)": eta_smooth, "A4(ii)": eta_weak, "absorption": eta_abs})

    horizon = check_int("R", params["R"], 1) if params.get("R") is not None else None
    given = tuple(k for k in PARAM_KEYS if params.get(k) is not None)
    conds: list[ConditionResult] = []
    step_sizes: dict[str, Any] = {
        "L_F": env[L_F],
        "eta_max_smooth": eta_smooth,
        "eta_max_weak": eta_weak,
        "eta_max": round_inward(eta_max),
        "eta_max_binding": eta_binding,
        "c_gamma": cg,
        "c_gamma_source": cg_source,
        "absorption_gamma_max": thr,
        "eta_max_absorption": eta_abs,
        "eta_max_constant": round_inward(eta_max_const),
        "eta_max_constant_binding": eta_const_binding,
    }
    chosen: dict[str, float] = {"c_gamma": cg}

    if theorem == "ds.theorem5_3":
        a = check_positive("alpha", params["alpha"]) if params.get("alpha") is not None else 1.0
        if params.get("alpha") is None:
            notes.append("alpha not given: alpha = 1 (eta_r = c/(r+1), the classical Robbins-Monro schedule)")
        cc = check_positive("c", params["c"]) if params.get("c") is not None else round_inward(eta_max)
        env[alpha], env[c] = a, cc
        chosen.update(c=cc, alpha=a)
        eta0 = core.schedule_power.subs(r, 0)
        conds += _eta_conditions("", eta0, env, (c,), "eta_0 = c", rho_zero)
        region = _rm_interval()
        rm = bool(core.robbins_monro_power_region.subs(alpha, sp.Float(a)))
        conds.append(
            ConditionResult(
                name="A4(i)",
                label=f"A4(i) Robbins-Monro: sum eta_r = oo, sum eta_r^2 < oo, i.e. alpha in {region}",
                status="verbatim",
                parameter="alpha",
                relation=core.robbins_monro_power_region,
                bound=float(region.sup),
                value=a,
                meets=rm,
                margin=min(a - float(region.inf), float(region.sup) - a),
                ratio=None,
            )
        )
        r0 = _r0(env, thr)
        gam0 = core.gamma_r_max.subs(eta, eta0)
        conds.append(
            _with_relation(
                upper_condition(
                    "absorption",
                    "Lemma 5.2 absorption: gamma_r = c_gamma eta_r <= 1/(sqrt(10) B) (needed from r_0 on)",
                    "derived",
                    "gamma_0 = c_gamma c",
                    gamma_r,
                    core.absorption_gamma_max,
                    env,
                    evaluate(gam0, env),
                    implied=_implied(core.absorption_gamma_max - gam0, env, (c, c_gamma)),
                    required=False,
                    note=f"a decaying schedule absorbs from r_0 = {r0} on (r0_power)",
                ),
                sp.Le(gam0, core.absorption_gamma_max, evaluate=False),
            )
        )
        step_sizes.update(c_max=round_inward(eta_max), c=cc, alpha=a, r_0=r0, robbins_monro=rm)
        guarantee, rounds = _theorem5_3(env, horizon, eps, r0)
    else:
        cc = check_positive("c", params["c"]) if params.get("c") is not None else round_inward(eta_max_const)
        env[c] = cc
        chosen["c"] = cc
        r_min = _horizon_min(env)
        step_sizes.update(c=cc, R_min=r_min)
        if horizon is None:
            env[R] = r_min
            notes.append(f"R not given: conditions evaluated at the smallest valid horizon R_min = {r_min}")
        else:
            env[R] = horizon
            step_sizes["c_max"] = round_inward(eta_max_const * math.sqrt(horizon))
        chosen["R"] = env[R]
        step = core.schedule_sqrt_horizon
        conds += _eta_conditions("", step, env, (c, R), "eta = c/sqrt(R)", rho_zero)
        gam = core.gamma_r_max.subs(eta, step)
        conds.append(
            _with_relation(
                upper_condition(
                    "absorption",
                    "absorption in every round (constant step): gamma = c_gamma c/sqrt(R) <= 1/(sqrt(10) B)",
                    "derived",
                    "gamma = c_gamma c/sqrt(R)",
                    gamma_r,
                    core.absorption_gamma_max,
                    env,
                    evaluate(gam, env),
                    implied=_implied(core.absorption_gamma_max - gam, env, (c, R, c_gamma)),
                ),
                sp.Le(gam, core.absorption_gamma_max, evaluate=False),
            )
        )
        guarantee, rounds = _corollary_ii(env, horizon, eps, r_min)

    # the constant-step alternative (notes 1.6): its floor, at the given eta (or the largest admissible one)
    eta_c = check_positive("eta", params["eta"]) if params.get("eta") is not None else round_inward(eta_max_const)
    gam_c = check_positive("gamma_r", params["gamma_r"], strict=False) if params.get("gamma_r") is not None else None
    cenv = {**env, eta: eta_c}
    if gam_c is None:
        gam_c = evaluate(core.gamma_r_max, cenv)
    cenv[gamma_r] = gam_c
    chosen.update(eta=eta_c, gamma_r=gam_c)
    if params.get("eta") is not None or params.get("gamma_r") is not None:
        conds += _eta_conditions("constant.", eta, cenv, (), "constant eta", rho_zero, required=False)
        if params.get("gamma_r") is not None:
            conds.append(
                upper_condition(
                    "constant.(10)",
                    "(10): gamma_r <= c_gamma eta_r",
                    "verbatim",
                    "gamma_r",
                    gamma_r,
                    core.gamma_r_max,
                    cenv,
                    gam_c,
                    required=False,
                )
            )
        conds.append(
            upper_condition(
                "constant.absorption",
                "absorption: gamma_r <= 1/(sqrt(10) B) (constant step, every round)",
                "derived",
                "gamma_r",
                gamma_r,
                core.absorption_gamma_max,
                cenv,
                gam_c,
                required=False,
            )
        )
    floor_expr = _solved()["constant_floor"]
    noise_part, het_part = sp.S.Zero, sp.S.Zero
    for t in sp.Add.make_args(floor_expr):
        if sigma2 in t.free_symbols:
            noise_part += t
        else:
            het_part += t
    floor_terms = (
        _term("constant-step noise floor 6 L_F sigma^2 eta", noise_part, cenv),
        _term("constant-gamma floor 5 C_e K_e^2 gamma^2", het_part, cenv),
    )
    floor = evaluate(floor_expr, cenv)
    step_sizes.update(constant_eta=eta_c, constant_gamma_r=gam_c, constant_floor=floor)
    guarantee = replace(guarantee, extra_terms=floor_terms)
    if eps is not None:
        msg = f"constant step eta = {eta_c:.6g}, gamma_r = {gam_c:.6g}: " + (
            f"unreachable: floor {floor:.6g} > epsilon {eps:g}" if floor >= eps else f"floor {floor:.6g} <= epsilon {eps:g}"
        )
        notes.append(msg)

    conds_t = tuple(conds)
    by_param: dict[str, str] = {}
    for p in ("c", "R", "c_gamma", "eta"):
        cands = []
        for cnd in conds_t:
            if not cnd.required:
                continue
            for b in cnd.implied:
                if b.parameter == p and b.upper is not None:
                    cands.append((b.upper, cnd.name))
        if cands:
            by_param[p] = min(cands)[1]
    by_param["eta_max"] = eta_binding
    region = {
        "A4(iv)": core.eta_max_smooth - eta,
        "(10)": core.gamma_r_max - gamma_r,
        "absorption": core.absorption_gamma_max - gamma_r,
    }
    if not rho_zero:
        region["A4(ii)"] = core.eta_max_weak - eta
    region = {k: substitute(v, {s: env[s] for s in env if s not in (eta, gamma_r, c_gamma, c, R, alpha)}) for k, v in region.items()}
    return FeasibilityResult(
        theorem=theorem,
        title="DS FedProxGrad "
        + ("Theorem 5.3 (Robbins-Monro schedule)" if theorem == "ds.theorem5_3" else "Corollary (ii) (eta = c/sqrt(R))"),
        constants={**consts, "L_F": env[L_F]},
        chosen=chosen,
        given=given,
        conditions=conds_t,
        admissible=all(cn.meets for cn in conds_t if cn.required),
        binding=binding_of(conds_t),
        binding_by_parameter=by_param,
        step_sizes=step_sizes,
        guarantee=guarantee,
        rounds_needed=rounds,
        notes=tuple(notes),
        region=region,
        region_symbols=dict(PARAM_SYMBOLS),
    )


@lru_cache(maxsize=1)
def _rm_interval() -> sp.Set:
    """The Robbins-Monro region of the power schedule as an interval of alpha (cached: as_set is slow)."""
    return core.robbins_monro_power_region.as_set()


def _r0(env: dict[sp.Symbol, float], thr: float) -> int:
    """r_0 from the theory's ``r0_power``, checked against the schedule (rounding at integer boundaries)."""
    k = int(evaluate(core.r0_power, env))

    def absorbed(rr: int) -> bool:
        return meets_upper(evaluate(core.gamma_r_max.subs(eta, core.schedule_power), {**env, r: rr}), thr)

    while k > 0 and absorbed(k - 1):
        k -= 1
    while not absorbed(k):
        k += 1
    return k


def _horizon_min(env: dict[sp.Symbol, float]) -> int:
    """The smallest R at which Corollary (ii)'s hypotheses hold (``corollary_ii_horizon_min``, and A4(ii))."""
    x = evaluate(core.corollary_ii_horizon_min, env)
    k = max(1, math.ceil(x * (1 - 1e-12)))
    step = core.schedule_sqrt_horizon

    def valid(rr: int) -> bool:
        e = {**env, R: rr}
        v = evaluate(step, e)
        ok = meets_upper(v, evaluate(core.eta_max_smooth, e)) and meets_upper(
            evaluate(core.gamma_r_max.subs(eta, step), e), evaluate(core.absorption_gamma_max, e)
        )
        if env[rho_f] > 0:
            ok = ok and meets_upper(v, evaluate(core.eta_max_weak, e))
        return ok

    found = smallest_integer(valid, start=1) if not valid(k) else k
    if found is None:  # pragma: no cover - only for absurd constants
        raise ValueError("c is too large: no horizon R < 1e18 makes eta = c/sqrt(R) admissible")
    while found > 1 and valid(found - 1):
        found -= 1
    return found


def _term(name: str, expr: sp.Expr, env: Mapping[sp.Symbol, float], flag_unknown: str = "unknown", note: str = "") -> Term:
    sub = substitute(expr, env)
    free = sorted(s.name for s in sub.free_symbols)
    value = value_of(expr, env)
    return Term(name=name, expression=sub, value=value, flag="exact" if not free else flag_unknown, unknowns=tuple(free), note=note)


def _corollary_ii(env: dict[sp.Symbol, float], horizon: int | None, eps: float | None, r_min: int) -> tuple[Guarantee, RoundsNeeded | None]:
    benv = {k: v for k, v in env.items() if k is not R}
    if horizon is not None:
        benv[R] = horizon
    bound = core.corollary_ii_bound(Delta_0)
    names = {Delta_0: "initial gap 4 Delta_0/(c sqrt R)", sigma2: "noise 6 L_F sigma^2 c/sqrt R"}
    terms = []
    for t in sp.Add.make_args(bound):
        label = next((v for k, v in names.items() if k in t.free_symbols), "inexactness 5 C_e K_e^2 c_gamma^2 c^2/R")
        note = "Delta_0 = F(x^0) - F* not given" if Delta_0 in t.free_symbols and Delta_0 not in benv else ""
        terms.append(_term(label, t, benv, note=note))
    known = all(t.value is not None for t in terms)
    g = Guarantee(
        claim="ds.corollary_ii",
        quantity="(1/R) sum_{r<R} E||grad F(x^r)||^2",
        relation="<=",
        horizon_name="R",
        horizon=horizon,
        terms=tuple(terms),
        total=sum(t.value for t in terms) if known else None,  # type: ignore[misc]
        floor=0.0,
        flag="exact" if known else "unknown",
        note=f"valid for R >= {r_min} (eta = c/sqrt(R) must meet A4 and absorption)",
    )
    if eps is None:
        return g, None
    if Delta_0 in env:
        k = smallest_integer(lambda rr: evaluate(bound, {**env, R: rr}) <= eps, start=r_min)
        return g, RoundsNeeded(
            eps,
            "R",
            k,
            "exact" if k is not None else "unreachable",
            message="" if k is not None else "no horizon below 1e18 reaches epsilon",
        )
    expr = _rounds_expression(env, eps, r_min)
    return g, RoundsNeeded(
        eps,
        "R",
        None,
        "symbolic",
        expression=expr,
        message=f"exact in the unknown Delta_0 = F(x^0) - F*: R >= {expr}",
    )


@lru_cache(maxsize=1)
def _corollary_ii_in_s() -> tuple[sp.Symbol, sp.Expr, sp.Expr, sp.Expr]:
    """Corollary (ii)'s bound in s = 1/sqrt(R): a1 s + a2 s^2, and R = 1/s^2 at the positive root of a1 s + a2 s^2 = epsilon."""
    s = sp.Dummy("s", positive=True)
    poly = sp.Poly(sp.expand(core.corollary_ii_bound(Delta_0).subs(R, s**-2)), s)
    assert poly.degree() == 2 and poly.all_coeffs()[2] == 0
    a2, a1, _ = poly.all_coeffs()
    A, Bq = sp.Dummy("A", positive=True), sp.Dummy("B", positive=True)
    (root,) = sp.solve(sp.Eq(A * s + Bq * s**2, epsilon), s)
    return s, a1, a2, sp.radsimp(1 / root**2).subs({A: a1, Bq: a2})


def _rounds_expression(env: dict[sp.Symbol, float], eps: float, r_min: int) -> sp.Expr:
    """The smallest R with corollary_ii_bound(R) <= epsilon, as an expression in the unknown Delta_0."""
    _, a1, a2, root = _corollary_ii_in_s()
    known = {k: v for k, v in env.items() if k is not R and k is not Delta_0}
    if evaluate(a2, known) == 0:
        r_real = (substitute(a1, known) / sp.Float(eps)) ** 2
    else:
        r_real = substitute(root, {**known, epsilon: eps})
    return sp.Max(sp.ceiling(sp.N(r_real, 12)), r_min)


def _theorem5_3(env: dict[sp.Symbol, float], horizon: int | None, eps: float | None, r0: int) -> tuple[Guarantee, RoundsNeeded | None]:
    note = "Theorem 5.3 is asymptotic (liminf, no rate); the finite-R term is the decaying-schedule bound (notes 1.6, [INF])"
    extra: tuple[Term, ...] = ()
    denominator = sp.Sum(core.schedule_power, (r, r_0, R))
    if horizon is not None and horizon >= r0:
        s = float(denominator.subs({**{k: sp.Float(v) for k, v in env.items() if k in (c, alpha)}, r_0: r0, R: horizon}).evalf())
        expr = core.decaying_bound.xreplace({denominator: sp.Float(s)})
        if r0 == 0 and Delta_0 in env:
            expr = expr.xreplace({Delta_r0: sp.Float(env[Delta_0])})
        extra = (
            _term("min_{r_0<=r<=R} E||grad F||^2 <= 4 (Delta_r0 + Xi_sum)/sum_{r=r_0}^R eta_r", expr, env, note="Delta_r0, Xi_sum unknown"),
        )
    g = Guarantee(
        claim="ds.theorem5_3",
        quantity="liminf_{r->oo} E||grad F(x^r)||^2",
        relation="->",
        horizon_name="R",
        horizon=horizon,
        terms=(Term("limit", sp.Integer(0), 0.0),),
        total=0.0,
        floor=0.0,
        flag="exact",
        note=note,
    )
    if extra:
        g = replace(g, terms=g.terms + extra)
    if eps is None:
        return g, None
    target = sp.Ge(
        denominator.xreplace({c: sp.Float(env[c]), alpha: sp.Float(env[alpha]), r_0: sp.Integer(r0)}),
        4 * (Delta_r0 + Xi_sum) / sp.Float(eps),
    )
    return g, RoundsNeeded(
        eps,
        "R",
        None,
        "symbolic",
        expression=target,
        message="the paper states no rate for decaying schedules; the decaying bound (notes 1.6) needs the R with "
        f"{target} (Delta_r0 = E F(x^r_0) - F*, Xi_sum = sum Xi_r unknown); use ds.corollary_ii for explicit rounds",
    )
