"""Feasibility declarations for DS FedProxGrad (arXiv 2512.08671): Theorem 5.3 and Corollary (ii).

Hypotheses (A4, from :mod:`fedbounds.theory.ds_fedproxgrad.formulas`): ``eta_r <= 1/(6 L_F)`` (A4(iv)),
``eta_r <= 1/(2 rho)`` (A4(ii)), ``gamma_r <= c_gamma eta_r`` (10), and for Theorem 5.3 a Robbins-Monro
schedule (A4(i)); Lemma 5.2's absorption needs ``gamma_r <= 1/(sqrt(10) B)`` ([INF],
docs/ds-fedproxgrad-notes.md section 1.4), which a decaying schedule reaches from round ``r_0`` on, and a
constant step must meet in every round. Guarantees: Theorem 5.3, ``liminf E||grad F(x^r)||^2 = 0`` (no
rate); Corollary (ii) with every constant (notes 1.6, ``corollary_ii_bound``), and the constant-step noise
floor (``constant_step_bound``).

Both theorems are *declared* (:data:`THEOREM5_3`, :data:`COROLLARY_II`) and answered by the generic solver
of :mod:`fedbounds.theory.core.feasibility`. What remains code is genuinely this paper's: the default
inexactness ratio and the step-size maxima (:func:`_choose_common`), the round r_0 from which a decaying
schedule absorbs, the smallest valid horizon of Corollary (ii), its rounds in the unknown Delta_0,
Theorem 5.3's asymptotic guarantee, and the constant-step floor reported beside both.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache

import sympy as sp
from fedbounds.theory.core.feasibility import (
    Condition,
    Guarantee,
    GuaranteeSpec,
    Param,
    Point,
    RoundsNeeded,
    Term,
    TermSpec,
    TheoremSpec,
    Unknown,
    evaluate,
    first_true,
    make_term,
    meets_upper,
    round_inward,
    substitute,
    text,
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

__all__ = ["COROLLARY_II", "DECLARATIONS", "PARAM_SYMBOLS", "THEOREM5_3"]

#: parameter name -> symbol (the plane of a feasible-region plot is any two of these)
PARAM_SYMBOLS: dict[str, sp.Symbol] = {"eta": eta, "gamma_r": gamma_r, "c_gamma": c_gamma}

_RHO_NOTE = "rho not given: rho = L_f (every L_f-smooth f_i is L_f-weakly convex), so A4(ii) is implied by A4(iv)"

CONSTANTS = (
    Param("L_f", L_f, "positive", required=True, help="smoothness of each f_i (A1(i))"),
    Param("L_r", L_r, "nonnegative", default=0.0, help="smoothness of the fairness regulariser r (A1(i))"),
    Param("lam", lam, "nonnegative", default=0.0, help="fairness weight lambda"),
    Param("G", G, "positive", required=True, help="dissimilarity constant G of (8)"),
    Param("B", B, "positive", required=True, help="dissimilarity constant B of (8)"),
    Param("G_r", G_r, "nonnegative", default=0.0, help="bound on ||grad r|| (A3)"),
    Param("sigma2", sigma2, "sigma2", help="fairness-gradient noise: --sigma its standard deviation, or --sigma2 its variance (9)"),
    Param("rho", rho_f, "nonnegative", default="L_f", default_note=_RHO_NOTE,
          help="weak-convexity modulus of the f_i (A1(ii)); default L_f"),
    Param("Delta_0", Delta_0, "nonnegative", flag="--Delta0", help="F(x^0) - F*, if known"),
)
PARAMS = (
    Param("c", c, "positive", help="schedule constant: eta_r = c/(r+1)^alpha (Theorem 5.3) or c/sqrt(R) (Corollary (ii))"),
    Param("alpha", alpha, "positive", help="schedule exponent: eta_r = c/(r+1)^alpha (selects Theorem 5.3)"),
    Param("c_gamma", c_gamma, "nonnegative", help="inexactness ratio: gamma_r <= c_gamma eta_r (10); default: an exact local prox"),
    Param("eta", eta, "positive", help="a constant step, for the constant-step floor"),
    Param("gamma_r", gamma_r, "nonnegative", help="a constant inexactness, for the constant-step floor"),
    Param("R", R, "integer", horizon=True, help="horizon (rounds) at which to evaluate the guarantee"),
)
KEY_ALIASES = (("lambda", "lam"), ("rho_f", "rho"), ("Delta0", "Delta_0"), ("L-f", "L_f"), ("L-r", "L_r"), ("G-r", "G_r"))

# ---------------------------------------------------------------------------------------------------------
# the conditions
# ---------------------------------------------------------------------------------------------------------

_CONSTANT = ("eta", "gamma_r")


def _a4(
    step: sp.Expr, what: str, implied: tuple[sp.Symbol, ...], prefix: str = "", required: bool = True, if_given=()
) -> tuple[Condition, ...]:
    """A4(iv) and A4(ii) on the step ``step`` (eta_0 = c, c/sqrt(R), or a constant eta)."""
    return (
        Condition(f"{prefix}A4(iv)", f"A4(iv): eta_r <= 1/(6 L_F) ({what})", "verbatim", what, bound=core.eta_max_smooth,
                  value=step, implied=implied, required=required, if_given=if_given),
        Condition(f"{prefix}A4(ii)", f"A4(ii): eta_r <= 1/(2 rho) ({what})", "verbatim", what, bound=core.eta_max_weak,
                  value=step, implied=implied, required=required, if_given=if_given, unless_zero="rho"),
    )  # fmt: skip


CONSTANT_STEP = (
    *_a4(eta, "constant eta", (), prefix="constant.", required=False, if_given=_CONSTANT),
    Condition("constant.(10)", "(10): gamma_r <= c_gamma eta_r", "verbatim", "gamma_r", bound=core.gamma_r_max,
              value=gamma_r, required=False, if_given=("gamma_r",)),
    Condition("constant.absorption", "absorption: gamma_r <= 1/(sqrt(10) B) (constant step, every round)", "derived",
              "gamma_r", bound=core.absorption_gamma_max, value=gamma_r, required=False, if_given=_CONSTANT),
)  # fmt: skip

_ETA0 = core.schedule_power.subs(r, 0)
_GAMMA0 = core.gamma_r_max.subs(eta, _ETA0)
_GAMMA_SQRT = core.gamma_r_max.subs(eta, core.schedule_sqrt_horizon)
_GAMMA_POWER = core.gamma_r_max.subs(eta, core.schedule_power)

THEOREM5_3_CONDITIONS = (
    *_a4(_ETA0, "eta_0 = c", (c,)),
    Condition("A4(i)", "A4(i) Robbins-Monro: sum eta_r = oo, sum eta_r^2 < oo, i.e. alpha in {set}", "verbatim", "alpha",
              region=core.robbins_monro_power_region),
    Condition("absorption", "Lemma 5.2 absorption: gamma_r = c_gamma eta_r <= 1/(sqrt(10) B) (needed from r_0 on)",
              "derived", "gamma_0 = c_gamma c", bound=core.absorption_gamma_max, value=_GAMMA0, implied=(c, c_gamma),
              required=False, note="a decaying schedule absorbs from r_0 = {r_0} on (r0_power)"),
    *CONSTANT_STEP,
)  # fmt: skip
COROLLARY_II_CONDITIONS = (
    *_a4(core.schedule_sqrt_horizon, "eta = c/sqrt(R)", (c, R)),
    Condition("absorption", "absorption in every round (constant step): gamma = c_gamma c/sqrt(R) <= 1/(sqrt(10) B)",
              "derived", "gamma = c_gamma c/sqrt(R)", bound=core.absorption_gamma_max, value=_GAMMA_SQRT,
              implied=(c, R, c_gamma)),
    *CONSTANT_STEP,
)  # fmt: skip
REGION = (
    ("A4(iv)", core.eta_max_smooth - eta, None),
    ("(10)", core.gamma_r_max - gamma_r, None),
    ("absorption", core.absorption_gamma_max - gamma_r, None),
    ("A4(ii)", core.eta_max_weak - eta, "rho"),
)

# ---------------------------------------------------------------------------------------------------------
# the point
# ---------------------------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _solved() -> dict[str, sp.Expr]:
    """The absorption threshold as a bound on eta (from (10) and the threshold), and the constant-step floor."""
    sol = sp.solve(sp.Eq(core.gamma_r_max, core.absorption_gamma_max), eta)
    assert len(sol) == 1
    floor = sp.limit(core.constant_step_bound(Delta_0), R, sp.oo)
    return {"eta_absorption": sol[0], "constant_floor": floor}


def _min_bound(bounds: Mapping[str, float]) -> tuple[float, str]:
    name = min(bounds, key=lambda k: bounds[k])
    return bounds[name], name


def _choose_common(pt: Point) -> None:
    """The step-size maxima (A4, absorption) and the inexactness ratio c_gamma (given, or an exact prox's)."""
    env = pt.env
    eta_smooth = evaluate(core.eta_max_smooth, env)
    eta_weak = math.inf if pt.consts["rho"] == 0 else evaluate(core.eta_max_weak, env)
    eta_max, eta_binding = _min_bound({"A4(iv)": eta_smooth, "A4(ii)": eta_weak})
    if "c_gamma" in pt.params:
        cg, cg_source = pt.params["c_gamma"], "given"
    else:
        cg = evaluate(core.exact_prox_gamma / eta, {**env, eta: eta_max})
        cg_source = ("not given: the ratio gamma/eta of an exact local prox at eta_max (exact_prox_gamma, "
                     "docs/ds-fedproxgrad-notes.md §1.5(4))")
    env[c_gamma] = cg
    thr = evaluate(core.absorption_gamma_max, env)
    eta_abs = math.inf if cg == 0 else evaluate(_solved()["eta_absorption"], env)
    eta_max_const, eta_const_binding = _min_bound({"A4(iv)": eta_smooth, "A4(ii)": eta_weak, "absorption": eta_abs})
    pt.step_sizes.update(
        L_F=env[L_F],
        eta_max_smooth=eta_smooth,
        eta_max_weak=eta_weak,
        eta_max=round_inward(eta_max),
        eta_max_binding=eta_binding,
        c_gamma=cg,
        c_gamma_source=cg_source,
        absorption_gamma_max=thr,
        eta_max_absorption=eta_abs,
        eta_max_constant=round_inward(eta_max_const),
        eta_max_constant_binding=eta_const_binding,
    )
    pt.chosen["c_gamma"] = cg
    pt.info.update(eta_max=eta_max, eta_max_const=eta_max_const, threshold=thr)


def _choose_constant_step(pt: Point, default_eta: float | None = None) -> None:
    """The constant-step alternative (notes 1.6): the given eta (else ``default_eta``, else the largest admissible)
    and gamma_r (given, else c_gamma eta)."""
    eta_c = pt.params.get("eta", round_inward(pt.info["eta_max_const"]) if default_eta is None else default_eta)
    pt.env[eta] = eta_c
    gam_c = pt.params.get("gamma_r")
    if gam_c is None:
        gam_c = evaluate(core.gamma_r_max, pt.env)
    pt.env[gamma_r] = gam_c
    pt.chosen.update(eta=eta_c, gamma_r=gam_c)


def _r0(env: dict[sp.Symbol, float], thr: float) -> int:
    """r_0 from the theory's ``r0_power``, checked against the schedule (integer search, any size)."""
    x = evaluate(core.r0_power, env)
    if not math.isfinite(x):
        raise OverflowError(f"r_0 = (c c_gamma sqrt(10) B)^(1/alpha) - 1 = {x:g}")

    def absorbed(rr: int) -> bool:
        try:
            rf = float(rr)
        except OverflowError:
            return False
        return meets_upper(evaluate(_GAMMA_POWER, {**env, r: rf}), thr)

    k = first_true(absorbed, int(x), floor=0)
    if k is None:
        raise OverflowError(f"r_0 = (c c_gamma sqrt(10) B)^(1/alpha) - 1 = {x:g} has no double-precision value")
    return k


def choose_theorem5_3(pt: Point) -> None:
    """Theorem 5.3's point: alpha (default 1), c (default its largest admissible value), and r_0."""
    _choose_common(pt)
    env = pt.env
    if "alpha" not in pt.params:
        pt.notes.append("alpha not given: alpha = 1 (eta_r = c/(r+1), the classical Robbins-Monro schedule)")
    a = pt.params.get("alpha", 1.0)
    cc = pt.params.get("c", round_inward(pt.info["eta_max"]))
    env[alpha], env[c] = a, cc
    pt.chosen.update(c=cc, alpha=a)
    r0 = _r0(env, pt.info["threshold"])
    rm = bool(core.robbins_monro_power_region.subs(alpha, sp.Float(a)))
    pt.step_sizes.update(c_max=round_inward(pt.info["eta_max"]), c=cc, alpha=a, r_0=r0, robbins_monro=rm)
    _choose_constant_step(pt)


def _horizon_min(env: dict[sp.Symbol, float]) -> int:
    """The smallest R at which Corollary (ii)'s hypotheses hold (``corollary_ii_horizon_min``, and A4(ii))."""
    x = evaluate(core.corollary_ii_horizon_min, env)
    hint = max(1, math.ceil(x * (1 - 1e-12))) if math.isfinite(x) else 1
    step = core.schedule_sqrt_horizon

    def valid(rr: int) -> bool:
        e = {**env, R: rr}
        v = evaluate(step, e)
        ok = meets_upper(v, evaluate(core.eta_max_smooth, e)) and meets_upper(
            evaluate(_GAMMA_SQRT, e), evaluate(core.absorption_gamma_max, e)
        )
        if env[rho_f] > 0:
            ok = ok and meets_upper(v, evaluate(core.eta_max_weak, e))
        return ok

    found = first_true(valid, hint, floor=1, limit=10**18)
    if found is None:
        raise ValueError("c is too large: no horizon R < 1e18 makes eta = c/sqrt(R) admissible")
    return found


def choose_corollary_ii(pt: Point) -> None:
    """Corollary (ii)'s point: c (default its largest admissible constant step), and the horizon R."""
    _choose_common(pt)
    env = pt.env
    cc = pt.params.get("c", round_inward(pt.info["eta_max_const"]))
    env[c] = cc
    pt.chosen["c"] = cc
    r_min = _horizon_min(env)
    pt.step_sizes.update(c=cc, R_min=r_min)
    if pt.horizon is None:
        env[R] = r_min
        pt.notes.append(f"R not given: conditions evaluated at the smallest valid horizon R_min = {r_min}")
    else:
        env[R] = pt.horizon
        pt.step_sizes["c_max"] = round_inward(pt.info["eta_max_const"] * math.sqrt(pt.horizon))
    pt.chosen["R"] = env[R]
    step = evaluate(core.schedule_sqrt_horizon, env)  # the step Corollary (ii) runs with (eq. (26)'s eta = c/sqrt(R))
    pt.step_sizes["eta_R"] = step
    if "eta" in pt.params and pt.params["eta"] != step:
        pt.notes.append(f"eta = {pt.params['eta']:g} given: the constant-step floor is evaluated at it; Corollary (ii) itself "
                        f"runs with eta = c/sqrt(R) = {step:.6g}")
    _choose_constant_step(pt, default_eta=step)


# ---------------------------------------------------------------------------------------------------------
# what both theorems report besides: the constant-step floor, and eta_max's binding condition
# ---------------------------------------------------------------------------------------------------------


def _floor_terms() -> tuple[TermSpec, TermSpec]:
    noise, het = sp.S.Zero, sp.S.Zero
    for t in sp.Add.make_args(_solved()["constant_floor"]):
        if sigma2 in t.free_symbols:
            noise += t
        else:
            het += t
    return TermSpec("constant-step noise floor 6 L_F sigma^2 eta", noise), TermSpec("constant-gamma floor 5 C_e K_e^2 gamma^2", het)


def constant_step_floor(pt: Point) -> None:
    """The constant-step floor (notes 1.6) at the point's eta and gamma_r, as extra terms and a note."""
    missing = sorted(str(s) for s in _solved()["constant_floor"].free_symbols if s not in pt.env)
    if missing:
        raise ValueError(f"the constant-step floor of Theorem 5.3 needs {', '.join(missing)}: give it (e.g. --sigma for sigma^2)")
    terms = tuple(make_term(t, pt.env, pt) for t in _floor_terms())
    floor = evaluate(_solved()["constant_floor"], pt.env)
    eta_c, gam_c, eps = pt.env[eta], pt.env[gamma_r], pt.eps
    pt.step_sizes.update(constant_eta=eta_c, constant_gamma_r=gam_c, constant_floor=floor)
    pt.guarantee = replace(pt.guarantee, extra_terms=terms)  # type: ignore[arg-type]
    if eps is not None:
        reached = f"unreachable: floor {floor:.6g} > epsilon {eps:g}" if floor >= eps else f"floor {floor:.6g} <= epsilon {eps:g}"
        pt.notes.append(f"constant step eta = {eta_c:.6g}, gamma_r = {gam_c:.6g}: " + reached)
    pt.binding_by_parameter["eta_max"] = pt.step_sizes["eta_max_binding"]


# ---------------------------------------------------------------------------------------------------------
# Corollary (ii): rounds in the unknown Delta_0
# ---------------------------------------------------------------------------------------------------------


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


def _corollary_ii_symbolic(pt: Point, eps: float) -> RoundsNeeded:
    """The smallest R with corollary_ii_bound(R) <= epsilon, as an expression in the unknown Delta_0."""
    _, a1, a2, root = _corollary_ii_in_s()
    known = {k: v for k, v in pt.env.items() if k is not R and k is not Delta_0}
    if evaluate(a2, known) == 0:
        r_real = (substitute(a1, known) / sp.Float(eps)) ** 2
    else:
        r_real = substitute(root, {**known, epsilon: eps})
    expr = sp.Max(sp.ceiling(sp.N(r_real, 12)), pt.step_sizes["R_min"])
    return RoundsNeeded(eps, "R", None, "symbolic", expression=expr, message=f"exact in the unknown Delta_0 = F(x^0) - F*: R >= {expr}")


_COROLLARY_LABELS = {Delta_0: "initial gap 4 Delta_0/(c sqrt R)", sigma2: "noise 6 L_F sigma^2 c/sqrt R"}


def _corollary_terms() -> tuple[TermSpec, ...]:
    out = []
    for t in sp.Add.make_args(core.corollary_ii_bound(Delta_0)):
        label = next((v for k, v in _COROLLARY_LABELS.items() if k in t.free_symbols), "inexactness 5 C_e K_e^2 c_gamma^2 c^2/R")
        out.append(TermSpec(label, t, note_if_unknown="Delta_0 = F(x^0) - F* not given"))
    return tuple(out)


# ---------------------------------------------------------------------------------------------------------
# Theorem 5.3: asymptotic (liminf, no rate)
# ---------------------------------------------------------------------------------------------------------

_DENOMINATOR = sp.Sum(core.schedule_power, (r, r_0, R))


def theorem5_3_guarantee(pt: Point) -> Guarantee:
    """liminf E||grad F||^2 -> 0, and at a horizon past r_0 the decaying-schedule bound (derived: docs/ds-fedproxgrad-notes.md §1.6)."""
    env, horizon, r0 = pt.env, pt.horizon, pt.step_sizes["r_0"]
    terms: tuple[Term, ...] = (Term("limit", sp.Integer(0), 0.0),)
    if horizon is not None and horizon >= r0:
        s = float(_DENOMINATOR.subs({**{k: sp.Float(v) for k, v in env.items() if k in (c, alpha)}, r_0: r0, R: horizon}).evalf())
        expr = core.decaying_bound.xreplace({_DENOMINATOR: sp.Float(s)})
        if r0 == 0 and Delta_0 in env:
            expr = expr.xreplace({Delta_r0: sp.Float(env[Delta_0])})
        name = "min_{r_0<=r<=R} E||grad F||^2 <= 4 (Delta_r0 + Xi_sum)/sum_{r=r_0}^R eta_r"
        terms += (make_term(TermSpec(name, expr, note="Delta_r0, Xi_sum unknown"), env, pt),)
    return Guarantee(
        claim="ds.theorem5_3",
        quantity="liminf_{r->oo} E||grad F(x^r)||^2",
        relation="->",
        horizon_name="R",
        horizon=horizon,
        terms=terms,
        total=0.0,
        floor=0.0,
        flag="exact",
        note="Theorem 5.3 is asymptotic (liminf, no rate); the finite-R term is the decaying-schedule bound "
        "(derived: docs/ds-fedproxgrad-notes.md §1.6)",
    )


#: the reference value of Delta_r0 + Xi_sum at which Theorem 5.3's rounds are a number (named by the footing line)
_DECAYING_REFERENCE_NOTE = (
    "Delta_r0 + Xi_sum = 1: a unit gap E F(x^r_0) - F* and no noise sum (Delta_r0 = Delta0 when given and r_0 = 0), "
    "in the units of epsilon; the rounds scale as that sum to the power 1/(1 - alpha)"
)


def _schedule_sum_reaches(cv: float, al: float, r0: int, big_r: int, need: float) -> bool:
    """Whether sum_{r=r_0}^R c/(r+1)^alpha >= need, the sum exact (Hurwitz zeta, digamma at alpha = 1) to 40 digits:
    one more term changes a sum of 1e15 terms by less than a double resolves."""
    import mpmath

    with mpmath.workdps(40):
        cm, am = mpmath.mpf(cv), mpmath.mpf(al)
        if al == 1:
            total = cm * (mpmath.digamma(big_r + 2) - mpmath.digamma(r0 + 1))
        else:
            total = cm * (mpmath.zeta(am, r0 + 1) - mpmath.zeta(am, big_r + 2))
        return bool(total >= mpmath.mpf(need))


def _horizon_from(sum_bound: sp.Expr, values: Mapping[sp.Symbol, float], need: float) -> float:
    """The real R at which ``sum_bound`` (an integral bound on the schedule's sum, increasing in R) equals ``need``."""
    rd = sp.Dummy("R", positive=True)
    expr = substitute(sum_bound, values).subs(R, rd)
    (sol,) = sp.solve(sp.Eq(expr, sp.Float(need)), rd)
    return float(sol)


def _big(k: int) -> str:
    return f"{k:,}" if k < 10**18 else f"{float(k):.6e}"


def theorem5_3_rounds(pt: Point, eps: float) -> RoundsNeeded:
    """No rate: the horizon at which the decaying bound reaches epsilon, sum_{r=r_0}^R eta_r >= 4 (Delta_r0 +
    Xi_sum)/epsilon (docs/ds-fedproxgrad-notes.md §1.6). Closed form in the unknowns from the sum's integral bounds
    (sufficient: sum >= integral from r_0 to R+1; necessary: sum <= eta_r0 + integral from r_0 to R); the number
    (``rounds``) is the smallest such R at the reference Delta_r0 + Xi_sum = 1, found on the exact sum."""
    env = pt.env
    r0 = int(pt.step_sizes["r_0"])
    cv, al = float(env[c]), float(env[alpha])
    gap0 = float(env[Delta_0]) if r0 == 0 and Delta_0 in env else 1.0
    need = 4 * gap0 / eps
    values = {c: cv, alpha: al, r_0: float(r0)}
    if al == 1:
        lower, upper = core.decaying_sum_lower_alpha1, core.decaying_sum_upper_alpha1
    else:
        lower, upper = core.decaying_sum_lower, core.decaying_sum_upper
    sufficient = max(r0, math.ceil(_horizon_from(lower, values, need)))
    necessary = max(r0, math.floor(_horizon_from(upper, values, need)))
    # the smallest R with the exact sum >= need lies in [necessary, sufficient]: bisection on integers
    lo, hi = necessary, sufficient
    exact = sufficient <= 10**18  # past it the bracket is the answer (relative width below 1e-4 there)
    lo = lo if exact else sufficient
    while exact and lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if _schedule_sum_reaches(cv, al, r0, mid, need) else (mid + 1, hi)
    k = sp.Float(4 / eps, 6) * (Delta_r0 + Xi_sum)
    closed = substitute(lower, values)
    rd = sp.Dummy("R", positive=True)
    (r_of_gap,) = sp.solve(sp.Eq(closed.subs(R, rd), k), rd)
    expression = sp.Ge(R, sp.N(r_of_gap, 6), evaluate=False)
    rel = f"sum_{{r={r0}}}^R {cv:.4g}/(r+1)^{al:g} >= {need:.6g}"
    how = "the smallest R with" if exact else "sufficient for (from the integral bound below; the exact sum is searched up to 1e18)"
    message = (
        f"R = {_big(lo)} is {how} {rel} = 4 (Delta_r0 + Xi_sum)/epsilon (the exact sum); "
        f"the sum's integral bounds bracket it: R >= {_big(necessary)} is necessary (sum <= eta_r0 + integral from r_0 to R), "
        f"R >= {_big(sufficient)} sufficient (sum >= integral from r_0 to R+1); for any Delta_r0, Xi_sum, "
        f"R >= {text(sp.N(r_of_gap, 6))} suffices. The paper states no rate for decaying schedules; use ds.corollary_ii "
        "for its explicit rounds"
    )
    return RoundsNeeded(
        eps,
        "R",
        lo,
        "symbolic",
        expression=expression,
        message=message,
        reference_rounds=lo,
        reference={"Delta_r0 + Xi_sum": gap0},
        reference_note=_DECAYING_REFERENCE_NOTE,
    )


# ---------------------------------------------------------------------------------------------------------
# the two theorems, declared
# ---------------------------------------------------------------------------------------------------------

COROLLARY_II = TheoremSpec(
    name="ds.corollary_ii",
    title="DS FedProxGrad Corollary (ii) (eta = c/sqrt(R))",
    constants=CONSTANTS,
    params=PARAMS,
    conditions=COROLLARY_II_CONDITIONS,
    guarantee=GuaranteeSpec(
        claim="ds.corollary_ii",
        quantity="(1/R) sum_{r<R} E||grad F(x^r)||^2",
        relation="<=",
        horizon=R,
        terms=_corollary_terms(),
        floor=0.0,
        rounds_start="R_min",
        note="valid for R >= {R_min} (eta = c/sqrt(R) must meet A4 and absorption)",
        symbolic_rounds=_corollary_ii_symbolic,
    ),
    unknowns=(Unknown(Delta_0, "Delta_0", "F(x^0) - F*, the initial gap"),),
    aliases=("ds-fedproxgrad", "ds_fedproxgrad", "ds"),
    key_aliases=KEY_ALIASES,
    required_for="DS FedProxGrad",
    derived=(("L_F", L_F, core.L_F_definition),),
    choose=choose_corollary_ii,
    finish=(constant_step_floor,),
    region=REGION,
    region_symbols=tuple(PARAM_SYMBOLS.items()),
    binding_ties="least",
    default_axes=("eta", "gamma_r"),
    summary="DS FedProxGrad Corollary (ii) (eta = c/sqrt(R)) or Theorem 5.3 (with --alpha); docs/ds-fedproxgrad-notes.md §1.3",
)

THEOREM5_3 = replace(
    COROLLARY_II,
    name="ds.theorem5_3",
    title="DS FedProxGrad Theorem 5.3 (Robbins-Monro schedule)",
    conditions=THEOREM5_3_CONDITIONS,
    guarantee=GuaranteeSpec(
        claim="ds.theorem5_3",
        quantity="liminf_{r->oo} E||grad F(x^r)||^2",
        relation="->",
        horizon=R,
        build=theorem5_3_guarantee,
        rounds=theorem5_3_rounds,
    ),
    unknowns=(
        Unknown(Delta_r0, "Delta_r0", "E F(x^r_0) - F*, unknown"),
        Unknown(Xi_sum, "Xi_sum", "sum of the noise terms Xi_r, unknown"),
    ),
    alias_when="alpha",
    choose=choose_theorem5_3,
    footing="Theorem 5.3 has no rate: R solves the decaying-schedule bound (derived, docs/ds-fedproxgrad-notes.md §1.6)",
)

#: the declarations this paper contributes to the calculator (read by :mod:`fedbounds.theory.feasibility`)
DECLARATIONS: tuple[TheoremSpec, ...] = (THEOREM5_3, COROLLARY_II)
