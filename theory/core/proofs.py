"""Machine-checked proof steps: every algebraic step of the two papers' arguments, decided by sympy.

Each step is a function returning a :class:`StepResult`, a list of :class:`Part` s, each either

* an **identity** (``kind="zero"``): ``residual`` simplifies to 0; or
* an **inequality** reduced to ``residual >= 0`` (``kind="nonnegative"``) whose sign sympy decides from the
  symbols' assumptions (positive / nonnegative), after substituting the step-size conditions through
  positive parameters (``eta = t/(6 L_F)`` with ``t = 1/(1 + s)``, ``s >= 0``, encodes ``0 < eta <= 1/(6 L_F)``); or
* a **quadratic form** (``kind="psd"``): ``residual`` is a homogeneous quadratic whose matrix sympy proves
  positive semidefinite (Young's inequality, ``||a + b + c||^2 <= 3 (...)``, ``(a + b)^2 <= 2a^2 + 2b^2``).

The constants of each step are keyword arguments whose defaults are the paper's; the teeth tests change one
and check that the step then fails and that :func:`counterexample` finds admissible values violating it.
Steps are registered in :data:`STEPS` under their function names, which the claims cite (``Claim.proof``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass

import sympy as sp
from fedbounds.theory.core.symbols import (
    C_0,
    EL_0,
    L_F,
    B,
    C_c,
    Delta_0,
    Delta_f,
    Fnor2,
    G,
    G_r,
    L,
    L_f,
    L_t,
    Q,
    R,
    T,
    alpha,
    c,
    c_gamma,
    corr_err,
    ef2,
    epsilon,
    eta,
    eta_a,
    eta_hat,
    g2,
    gamma,
    gamma_r,
    grad0_sq,
    gradf2,
    lam,
    m,
    mu,
    n,
    psi_gap,
    r,
    rho,
    rho_f,
    sigma2,
)
from fedbounds.theory.ds_fedproxgrad import formulas as ds
from fedbounds.theory.fednmap import formulas as fn

__all__ = ["STEPS", "Part", "StepResult", "counterexample", "decide_nonnegative", "decide_psd", "decide_zero", "run_step"]


# ---------------------------------------------------------------------------------------------------------
# results and deciders
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """One decided sub-claim of a step."""

    name: str
    kind: str  # "zero" | "nonnegative" | "psd" | "true"
    proved: bool
    residual: sp.Basic
    variables: tuple[sp.Symbol, ...] = ()  # for "psd": the variables of the quadratic form


@dataclass(frozen=True)
class StepResult:
    """A proof step: its name, where it sits in the paper, and its decided parts."""

    name: str
    label: str
    parts: tuple[Part, ...]

    @property
    def proved(self) -> bool:
        return all(p.proved for p in self.parts)

    def __bool__(self) -> bool:
        return self.proved

    def failed(self) -> tuple[Part, ...]:
        return tuple(p for p in self.parts if not p.proved)


def decide_zero(expr: sp.Basic) -> tuple[bool, sp.Basic]:
    """Is ``expr`` identically 0? Cheap forms first (expand, cancel), simplify only if needed."""
    e = sp.expand(sp.sympify(expr))
    if e == 0:
        return True, e
    e = sp.cancel(sp.together(e))
    if e == 0:
        return True, e
    e = sp.simplify(e)
    return e == 0, e


def decide_nonnegative(expr: sp.Basic) -> tuple[bool, sp.Basic]:
    """Does sympy's assumption system prove ``expr >= 0``? Tries the expression, its expansion and
    factorisation, and numerator / denominator of its rational form."""
    e = sp.sympify(expr)
    if e.is_nonnegative:
        return True, e
    num, den = sp.fraction(sp.together(e))
    den_forms = [den] if den.is_positive else [sp.expand(den), sp.factor(den)]
    if any(d.is_positive for d in den_forms):
        for form in (num, sp.expand(num), sp.factor(num)):
            if form.is_nonnegative:
                return True, form / den
    for form in (sp.expand(e), sp.factor(e)):
        if form.is_nonnegative:
            return True, form
    return False, sp.factor(sp.together(e))


def decide_psd(expr: sp.Basic, variables: tuple[sp.Symbol, ...]) -> tuple[bool, sp.Basic]:
    """Is the homogeneous quadratic ``expr`` in ``variables`` >= 0 for all real values (matrix PSD)?"""
    e = sp.expand(expr)
    poly = sp.Poly(e, *variables)
    if any(sum(mon) != 2 for mon in poly.monoms()):
        return False, e
    hess = sp.hessian(e, variables) / 2
    psd = hess.is_positive_semidefinite
    return bool(psd), e


def _zero(name: str, expr: sp.Basic) -> Part:
    ok, res = decide_zero(expr)
    return Part(name, "zero", ok, res)


def _nonneg(name: str, expr: sp.Basic) -> Part:
    ok, res = decide_nonnegative(expr)
    return Part(name, "nonnegative", ok, res)


def _psd(name: str, expr: sp.Basic, variables: tuple[sp.Symbol, ...]) -> Part:
    ok, res = decide_psd(expr, variables)
    return Part(name, "psd", ok, res, variables)


def _true(name: str, value: bool | sp.Basic, residual: sp.Basic = sp.S.Zero) -> Part:
    return Part(name, "true", bool(value is True or value == sp.true), residual)


def _unit(name: str) -> tuple[sp.Expr, sp.Symbol]:
    """A parameter in (0, 1]: 1/(1 + s) with s >= 0."""
    s = sp.Symbol(name, nonnegative=True)
    return 1 / (1 + s), s


def _unit_open(name: str) -> tuple[sp.Expr, sp.Symbol]:
    """A parameter in [0, 1): s/(1 + s) with s >= 0."""
    s = sp.Symbol(name, nonnegative=True)
    return s / (1 + s), s


def _slack(name: str) -> sp.Symbol:
    return sp.Symbol(name, nonnegative=True)


def _vec(name: str, p: int) -> sp.Matrix:
    return sp.Matrix([sp.Symbol(f"{name}_{k}", real=True) for k in range(p)])


def _dot(a: sp.Matrix, b: sp.Matrix) -> sp.Expr:
    return (a.T * b)[0, 0]


def _expect(expr: sp.Expr, noise: sp.Matrix, cov: sp.Matrix) -> sp.Expr:
    """E[expr] over a mean-zero random vector ``noise`` with covariance ``cov`` (expr of degree <= 2 in it)."""
    poly = sp.Poly(sp.expand(expr), *list(noise))
    out = sp.S.Zero
    for monom, coeff in poly.terms():
        deg = sum(monom)
        if deg == 0:
            out += coeff
        elif deg == 2:
            idx = [k for k, e in enumerate(monom) for _ in range(e)]
            out += coeff * cov[idx[0], idx[1]]
        elif deg > 2:
            raise ValueError("expectation of a term of degree > 2 in the noise")
    return out


# the papers' constants, as defaults of the steps' keyword arguments
HALF = sp.Rational(1, 2)
QUARTER = sp.Rational(1, 4)
FIVE_QUARTERS = sp.Rational(5, 4)
SIX_FIFTHS = sp.Rational(6, 5)
FOUR_FIFTHS = sp.Rational(4, 5)
SQRT10 = sp.sqrt(10)

STEPS: dict[str, Callable[..., StepResult]] = {}
_LABELS: dict[str, str] = {}


def _step(label: str) -> Callable[[Callable[..., tuple[Part, ...]]], Callable[..., StepResult]]:
    def wrap(fn_: Callable[..., tuple[Part, ...]]) -> Callable[..., StepResult]:
        def run(**kwargs: object) -> StepResult:
            return StepResult(fn_.__name__, label, tuple(fn_(**kwargs)))

        run.__name__ = fn_.__name__
        run.__doc__ = fn_.__doc__
        run.__wrapped__ = fn_  # type: ignore[attr-defined]
        STEPS[fn_.__name__] = run
        _LABELS[fn_.__name__] = label
        return run

    return wrap


def run_step(name: str, **kwargs: object) -> StepResult:
    """Run the registered step ``name``; ValueError listing the steps for an unknown name."""
    if name not in STEPS:
        raise ValueError(f"unknown proof step {name!r}; known steps: {', '.join(sorted(STEPS))}")
    return STEPS[name](**kwargs)


def counterexample(result: StepResult, *, tries: int = 3000, seed: int = 0) -> dict[str, float] | None:
    """Admissible values (every free symbol drawn from a small grid respecting its assumptions) at which a
    failed part of ``result`` is violated: negative for an inequality, non-zero for an identity. None if none
    is found."""
    rng = random.Random(seed)
    pos = [sp.Rational(1, 10), sp.Rational(1, 2), 1, 2, 10]
    for part in result.failed():
        expr = part.residual
        syms = sorted(expr.free_symbols, key=lambda s: s.name)
        if not syms:
            value = float(sp.N(expr))
            if (part.kind == "zero" and value != 0) or value < 0:
                return {}
            continue

        def grid(s: sp.Symbol) -> list:
            if s.is_integer:
                return [1, 2, 3, 10]
            if s.is_positive:
                return pos
            if s.is_nonnegative:
                return [0, *pos]
            return [-2, -1, sp.Rational(-1, 2), 0, *pos]

        f = sp.lambdify(syms, expr, modules="math")
        grids = [grid(s) for s in syms]
        for _ in range(tries):
            point = [rng.choice(g_) for g_ in grids]
            try:
                value = float(f(*[float(v) for v in point]))
            except (ZeroDivisionError, ValueError, OverflowError):
                continue
            if math.isnan(value):
                continue
            violated = abs(value) > 1e-12 if part.kind == "zero" else value < -1e-12
            if violated:
                return {s.name: float(v) for s, v in zip(syms, point)}
    return None


# shorthand: 0 < eta <= 1/(six L_F) as eta = t/(six L_F), t in (0, 1]
def _eta_admissible(six: sp.Expr = 6, name: str = "s_eta") -> tuple[sp.Expr, sp.Symbol]:
    t, s = _unit(name)
    return t / (six * L_F), s


# ---------------------------------------------------------------------------------------------------------
# DS FedProxGrad (arXiv 2512.08671)
# ---------------------------------------------------------------------------------------------------------


@_step("DS FedProxGrad eq. (7)")
def ds_eq7(N: int = 3, p: int = 2) -> tuple[Part, ...]:
    """(5) with (6) is a perturbed gradient step: x^{r+1} - x^r = -eta grad F + eta e_f + eta e_stoch (exact)."""
    x, gr, es = _vec("x", p), _vec("gr", p), _vec("es", p)
    grads = [_vec(f"gf{i}", p) for i in range(N)]
    errs = [_vec(f"e{i}", p) for i in range(N)]
    ys = [x + eta * (-g_ + e_) for g_, e_ in zip(grads, errs)]  # (6) solved for y_i
    ybar = sum(ys, sp.zeros(p, 1)) / N  # (4)
    x_new = ybar - eta * lam * gr + eta * es  # (5)
    grad_F = sum(grads, sp.zeros(p, 1)) / N + lam * gr
    e_f = sum(errs, sp.zeros(p, 1)) / N
    diff = (x_new - x) - (-eta * grad_F + eta * e_f + eta * es)
    return tuple(_zero(f"component {k}", diff[k]) for k in range(p))


@_step("DS FedProxGrad eq. (12), Jensen")
def ds_jensen(N: int = 3, p: int = 2) -> tuple[Part, ...]:
    """||(1/N) sum e_i||^2 <= (1/N) sum ||e_i||^2: the gap equals (1/N) sum ||e_i - ebar||^2 >= 0."""
    errs = [_vec(f"e{i}", p) for i in range(N)]
    ebar = sum(errs, sp.zeros(p, 1)) / N
    gap = sum(_dot(e_, e_) for e_ in errs) / N - _dot(ebar, ebar)
    spread = sum(_dot(e_ - ebar, e_ - ebar) for e_ in errs) / N
    variables = tuple(s for e_ in errs for s in e_)
    return (_zero("gap = spread", gap - spread), _psd("spread >= 0", gap, variables))


@_step("DS FedProxGrad Lemma 5.1, eq. (11)")
def ds_lemma5_1(N: int = 3) -> tuple[Part, ...]:
    """Jensen, then (10) termwise, then (8): ||e_f||^2 <= gamma^2 (G^2 + B^2 ||grad f||^2)."""
    a = [sp.Symbol(f"a{i}", nonnegative=True) for i in range(N)]  # ||grad f_i||^2
    u = [_unit(f"u{i}")[0] for i in range(N)]  # ||e_i|| = gamma ||grad f_i|| u_i, u_i in (0, 1]
    e2 = [gamma_r**2 * a_ * u_**2 for a_, u_ in zip(a, u)]
    termwise = sum(gamma_r**2 * a_ - e2_ for a_, e2_ in zip(a, e2)) / N
    slack = _slack("w8")  # (8): (1/N) sum a_i = G^2 + B^2 ||grad f||^2 - slack
    mean_a = G**2 + B**2 * gradf2 - slack
    final = ds.lemma5_1_bound - gamma_r**2 * mean_a
    return (_nonneg("(10) termwise", termwise), _nonneg("(8) times gamma^2", final))


@_step("DS FedProxGrad eq. (13)")
def ds_eq13(two: sp.Expr = 2) -> tuple[Part, ...]:
    """||grad f|| <= ||grad F|| + lambda G_r, then (a + b)^2 <= 2 a^2 + 2 b^2."""
    u, v = _vec("u", 2), _vec("v", 2)  # grad F and -lambda grad r, so grad f = u + v
    nu, nv = sp.sqrt(_dot(u, u)), sp.sqrt(_dot(v, v))
    gap = (nu + nv) ** 2 - _dot(u + v, u + v) - 2 * (nu * nv - _dot(u, v))
    parts = [_zero("triangle: (|u| + |v|)^2 - |u + v|^2 = 2 (|u||v| - <u, v>)", gap)]
    parts.append(_zero("... and |u|^2 |v|^2 - <u, v>^2 is a square (so |u||v| >= <u, v>)",
                       _dot(u, u) * _dot(v, v) - _dot(u, v) ** 2 - (u[0] * v[1] - u[1] * v[0]) ** 2))
    w = _slack("w_r")  # lambda ||grad r|| = lambda G_r - w (A3)
    parts.append(_nonneg("A3: lambda ||grad r|| <= lambda G_r", lam * G_r - (lam * G_r - w)))
    a, b = sp.Symbol("a", real=True), sp.Symbol("b", real=True)  # ||grad F||, lambda G_r
    parts.append(_psd("(a+b)^2 <= 2a^2+2b^2", two * a**2 + two * b**2 - (a + b) ** 2, (a, b)))
    parts.append(_zero("matches (13)", ds.eq13_bound - (two * g2 + two * lam**2 * G_r**2)))
    return tuple(parts)


@_step("DS FedProxGrad eq. (16), exactness of C_e and K_e^2")
def ds_eq16(C_e: sp.Expr = ds.C_e, K_e2: sp.Expr = ds.K_e2) -> tuple[Part, ...]:
    """gamma^2 (G^2 + B^2 (2||g||^2 + 2 lambda^2 G_r^2)) == C_e gamma^2 (||g||^2 + K_e^2) exactly."""
    lhs = gamma_r**2 * (G**2 + B**2 * (2 * g2 + 2 * lam**2 * G_r**2))
    return (_zero("(16) is an identity", lhs - C_e * gamma_r**2 * (g2 + K_e2)),)


@_step("DS FedProxGrad eq. (16), as an inequality")
def ds_eq16_bound(C_e: sp.Expr = ds.C_e, K_e2: sp.Expr = ds.K_e2) -> tuple[Part, ...]:
    """Lemma 5.1 with (13): ||e_f||^2 <= gamma^2 (G^2 + B^2 ||grad f||^2) <= C_e gamma^2 (||g||^2 + K_e^2)."""
    w = _slack("w13")  # (13): ||grad f||^2 = 2||g||^2 + 2 lambda^2 G_r^2 - w
    lemma = ds.lemma5_1_bound.subs(gradf2, ds.eq13_bound - w)
    return (_nonneg("(11) + (13) <= (16)", C_e * gamma_r**2 * (g2 + K_e2) - lemma),)


@_step("DS FedProxGrad eq. (17)")
def ds_linear_term(p: int = 2) -> tuple[Part, ...]:
    """E<g, -eta g + eta e_f + eta e_stoch> = -eta ||g||^2 + eta <g, e_f> (E[e_stoch | x] = 0)."""
    g_, ef, es = _vec("g", p), _vec("ef", p), _vec("es", p)
    cov = sp.Matrix(p, p, lambda i, j: sp.Symbol(f"S_{min(i, j)}{max(i, j)}", real=True))
    lhs = _expect(_dot(g_, -eta * g_ + eta * ef + eta * es), es, cov)
    return (_zero("linear term", lhs - (-eta * _dot(g_, g_) + eta * _dot(g_, ef))),)


@_step("Cauchy-Schwarz (Lagrange identity)")
def cauchy_schwarz() -> tuple[Part, ...]:
    """<g, e>^2 <= ||g||^2 ||e||^2 in R^2: the gap is (g_0 e_1 - g_1 e_0)^2."""
    g_, e_ = _vec("g", 2), _vec("e", 2)
    gap = _dot(g_, g_) * _dot(e_, e_) - _dot(g_, e_) ** 2
    return (_zero("Lagrange identity", gap - (g_[0] * e_[1] - g_[1] * e_[0]) ** 2),)


@_step("DS FedProxGrad eq. (18), Young with eps = 1/2")
def ds_young(quarter: sp.Expr = QUARTER, b_coef: sp.Expr = 1) -> tuple[Part, ...]:
    """<g, e_f> <= ||g|| ||e_f|| <= (1/4)||g||^2 + ||e_f||^2 (ab <= (eps/2) a^2 + b^2/(2 eps), eps = 1/2)."""
    a, b = sp.Symbol("a", real=True), sp.Symbol("b", real=True)
    return (_psd("a b <= a^2/4 + b^2", quarter * a**2 + b_coef * b**2 - a * b, (a, b)),)


@_step("DS FedProxGrad eq. (19)")
def ds_eq19(three: sp.Expr = 3, p: int = 2) -> tuple[Part, ...]:
    """||a + b + c||^2 <= 3 (||a||^2 + ||b||^2 + ||c||^2) pointwise, then expectation."""
    a, b, c_ = _vec("a", p), _vec("b", p), _vec("c", p)
    s = a + b + c_
    form = three * (_dot(a, a) + _dot(b, b) + _dot(c_, c_)) - _dot(s, s)
    return (_psd("3-term inequality", form, (*a, *b, *c_)),)


@_step("E||x^{r+1} - x^r||^2 exactly (the cross term with e_stoch vanishes)")
def ds_quadratic_term(p: int = 2) -> tuple[Part, ...]:
    """E||-g + e_f + e_stoch||^2 = ||-g + e_f||^2 + E||e_stoch||^2 when e_f is fixed before e_stoch is drawn."""
    g_, ef, es = _vec("g", p), _vec("ef", p), _vec("es", p)
    cov = sp.Matrix(p, p, lambda i, j: sp.Symbol(f"S_{min(i, j)}{max(i, j)}", real=True))
    d = -g_ + ef + es
    exact = _expect(_dot(d, d), es, cov)
    return (_zero("expectation", exact - (_dot(-g_ + ef, -g_ + ef) + cov.trace())),)


@_step("DS FedProxGrad eq. (20) and (22), from the pieces (15), (17)-(19), (16)")
def ds_eq20(
    quarter: sp.Expr = QUARTER,
    three: sp.Expr = 3,
    printed_coefficient: sp.Expr = ds.coefficient20,
    printed_Xi: sp.Expr = ds.Xi,
) -> tuple[Part, ...]:
    """Descent lemma + linear term + Young + (19), then (16): the coefficient of ||g||^2 is (20), the rest is (22)."""
    before16 = -eta * g2 + eta * (quarter * g2 + ef2) + L_F / 2 * three * eta**2 * (g2 + ef2 + sigma2)
    parts = [_zero("before (16): matches the recorded form", before16 - ds.descent_before_16)]
    coef_ef = sp.expand(before16).coeff(ef2)
    parts.append(_nonneg("coefficient of ||e_f||^2 >= 0 (so (16) may be substituted)", coef_ef))
    after = sp.expand(before16.subs(ef2, ds.C_e * gamma_r**2 * (g2 + ds.K_e2)))
    parts.append(_zero("coefficient of ||g||^2 is (20)", after.coeff(g2) - printed_coefficient))
    parts.append(_zero("remainder is (22)", after.subs(g2, 0) - printed_Xi))
    return tuple(parts)


@_step("DS FedProxGrad eq. (21): (3 L_F/2) eta^2 <= eta/4")
def ds_eq21(six: sp.Expr = 6, quarter: sp.Expr = QUARTER) -> tuple[Part, ...]:
    """Under eta <= 1/(6 L_F): (3 L_F/2) eta^2 <= eta/4 (with eta = t/(6 L_F): t(1 - t)/(24 L_F) >= 0)."""
    e, _ = _eta_admissible(six)
    return (_nonneg("eta/4 - 3 L_F eta^2/2 >= 0", quarter * e - sp.Rational(3, 2) * L_F * e**2),)


@_step("DS FedProxGrad eq. (21): absorption threshold gamma_r <= 1/(sqrt(10) B)")
def ds_absorption(threshold: sp.Expr = ds.absorption_gamma_max, six: sp.Expr = 6) -> tuple[Part, ...]:
    """Coefficient (20) <= -eta/2 + (5/4) eta C_e gamma^2 (using 3 L_F eta/2 <= 1/4), and that is <= -eta/4 iff
    C_e gamma^2 <= 1/5, i.e. gamma_r <= 1/(sqrt(10) B); at eta = 1/(6 L_F) the first bound is an equality."""
    e, _ = _eta_admissible(six)
    upper = -eta / 2 + sp.Rational(5, 4) * eta * ds.C_e * gamma_r**2
    parts = [_nonneg("(20) <= -eta/2 + (5/4) eta C_e gamma^2", (upper - ds.coefficient20).subs(eta, e))]
    parts.append(_zero("equality at eta = 1/(6 L_F)", (upper - ds.coefficient20).subs(eta, 1 / (6 * L_F))))
    parts.append(_zero("upper + eta/4 = (5/4) eta (C_e gamma^2 - 1/5): <= 0 iff C_e gamma^2 <= 1/5",
                       upper + eta / 4 - sp.Rational(5, 4) * eta * (ds.C_e * gamma_r**2 - sp.Rational(1, 5))))
    v, _ = _unit("v_gamma")
    parts.append(_nonneg("gamma <= threshold => upper <= -eta/4", (-eta / 4 - upper).subs(gamma_r, threshold * v)))
    solved = sp.solve_univariate_inequality(upper + eta / 4 <= 0, gamma_r, relational=False)  # [-g*, g*]
    parts.append(_zero("upper <= -eta/4 iff |gamma| <= g*, and g* = threshold", solved.end - threshold))
    parts.append(_zero("... symmetric, so for gamma >= 0: iff gamma <= threshold", solved.start + solved.end))
    return tuple(parts)


@_step("r_0 in closed form for eta_r = c/(r+1)^alpha, gamma_r = c_gamma eta_r")
def ds_r0_power(sqrt10: sp.Expr = SQRT10) -> tuple[Part, ...]:
    """At the real root r* = (c c_gamma sqrt(10) B)^(1/alpha) - 1, c_gamma eta_{r*} equals the threshold; eta_r
    decreases in r, so every r >= ceil(r*) is absorbed: r_0 = max(0, ceil(r*))."""
    root = (c * c_gamma * sqrt10 * B) ** (1 / alpha) - 1
    at_root = c_gamma * ds.schedule_power.subs(r, root) - ds.absorption_gamma_max
    cg = sp.Symbol("c_gamma_pos", positive=True)
    at_root = sp.powsimp(sp.expand_power_base(at_root.subs(c_gamma, cg), force=True), force=True)
    parts = [_zero("c_gamma eta_{r*} = 1/(sqrt(10) B)", at_root)]
    x = sp.Symbol("x", nonnegative=True)
    parts.append(_nonneg("eta_r decreasing: -d eta/dr >= 0", -sp.diff(ds.schedule_power.subs(r, x), x)))
    parts.append(_zero("r0_power = max(0, ceil(r*))", ds.r0_power - sp.Max(0, sp.ceiling(root))))
    return tuple(parts)


@_step("DS FedProxGrad eq. (22): explicit O(eta^2) bound on Xi_r")
def ds_xi_explicit(five_quarters: sp.Expr = FIVE_QUARTERS, six: sp.Expr = 6) -> tuple[Part, ...]:
    """C_e K_e^2 = G^2 + 2 B^2 lambda^2 G_r^2; 1 + 3 L_F eta/2 <= 5/4; gamma <= c_gamma eta; hence Xi <= Xi_explicit."""
    e, _ = _eta_admissible(six)
    v, _ = _unit("v_gamma")
    parts = [_zero("C_e K_e^2", ds.C_e * ds.K_e2 - (G**2 + 2 * B**2 * lam**2 * G_r**2))]
    parts.append(_nonneg("1 + 3 L_F eta/2 <= 5/4", (five_quarters - 1 - sp.Rational(3, 2) * L_F * eta).subs(eta, e)))
    explicit = five_quarters * c_gamma**2 * (G**2 + 2 * B**2 * lam**2 * G_r**2) * eta**3 + sp.Rational(3, 2) * L_F * sigma2 * eta**2
    parts.append(_zero("Xi_explicit as recorded", explicit - ds.Xi_explicit))
    gap = (explicit - ds.Xi).subs(gamma_r, c_gamma * eta * v).subs(eta, e)
    parts.append(_nonneg("Xi <= Xi_explicit", gap))
    return tuple(parts)


@_step("DS FedProxGrad Lemma 5.2 for r >= r_0")
def ds_lemma5_2() -> tuple[Part, ...]:
    """Once coefficient (20) <= -eta/4 (absorbed), the unabsorbed descent bound is <= -(eta/4)||g||^2 + Xi."""
    w = _slack("w_abs")  # absorbed: coefficient20 = -eta/4 - w
    unabsorbed = (-eta / 4 - w) * g2 + ds.Xi
    parts = [_zero("unabsorbed bound is (20)||g||^2 + (22)", ds.descent_unabsorbed_bound - (ds.coefficient20 * g2 + ds.Xi))]
    parts.append(_nonneg("absorbed: <= -eta Phi ||g||^2 + Xi", ds.lemma5_2_bound - unabsorbed))
    parts.append(_zero("Phi_r = -(20)/eta", ds.Phi_r + ds.coefficient20 / eta))
    return tuple(parts)


@_step("DS FedProxGrad Lemma A.1, eq. (27)")
def ds_lemmaA1() -> tuple[Part, ...]:
    """||(y - x)/eta|| <= ||grad f_i|| + ||e_i|| <= (1 + gamma)||grad f_i||."""
    a = sp.Symbol("a", nonnegative=True)
    v, _ = _unit("v_e")
    return (_nonneg("(1 + gamma) a - (a + gamma a v) >= 0", ds.lemmaA1_factor / eta * a - (a + gamma_r * a * v)),)


@_step("Telescoping (24)")
def ds_telescoping() -> tuple[Part, ...]:
    """sum_{r<R} (a_{r+1} - a_r) = a_R - a_0 (sympy's Sum, for symbolic R)."""
    a = sp.Function("a")
    return (_zero("telescoping", sp.Sum(a(r + 1) - a(r), (r, 0, R - 1)).doit() - (a(R) - a(0))),)


@_step("Notes 1.6: constant-step noise-floor bound")
def ds_constant_step_bound(six: sp.Expr = 6, five: sp.Expr = 5, four: sp.Expr = 4) -> tuple[Part, ...]:
    """From (eta/4) sum_{r<R} E||g_r||^2 <= Delta_0 + R Xi (telescoping, every round absorbed):
    (1/R) sum <= 4 Delta_0/(eta R) + 4 Xi/eta <= 4 Delta_0/(eta R) + 6 L_F sigma^2 eta + 5 C_e K_e^2 gamma^2."""
    e, _ = _eta_admissible()
    w = _slack("w_tel")  # (eta/4) sum_{r<R} E||g_r||^2 = Delta_0 + R Xi - w
    avg = (Delta_0 + R * ds.Xi - w) / (eta / 4) / R
    parts = [_nonneg("average <= 4 Delta_0/(eta R) + 4 Xi/eta", 4 * Delta_0 / (eta * R) + four * ds.Xi / eta - avg)]
    bound = 4 * Delta_0 / (eta * R) + six * L_F * sigma2 * eta + five * ds.C_e * ds.K_e2 * gamma_r**2
    gap = bound - 4 * Delta_0 / (eta * R) - four * ds.Xi / eta
    parts.append(_nonneg("4 Xi/eta <= 6 L_F sigma^2 eta + 5 C_e K_e^2 gamma^2", gap.subs(eta, e)))
    parts.append(_zero("matches constant_step_bound", bound - ds.constant_step_bound(Delta_0)))
    return tuple(parts)


@_step("Corollary (ii), eq. (26), with every constant")
def ds_corollary_ii(thirty_six: sp.Expr = 36, ten: sp.Expr = 10) -> tuple[Part, ...]:
    """eta = c/sqrt(R), gamma = c_gamma eta in the constant-step bound gives corollary_ii_bound = O(1/sqrt(R)),
    valid once R >= max(36 L_F^2 c^2, 10 B^2 c_gamma^2 c^2) (then eta <= 1/(6 L_F) and C_e gamma^2 <= 1/5)."""
    e = c / sp.sqrt(R)
    sub = ds.constant_step_bound(Delta_0, e, c_gamma * e)
    parts = [_zero("substitution", sub - ds.corollary_ii_bound(Delta_0))]
    lim = sp.limit(sp.sqrt(R) * ds.corollary_ii_bound(Delta_0), R, sp.oo)
    parts.append(_zero("sqrt(R) * bound -> 4 Delta_0/c + 6 L_F sigma^2 c", lim - (4 * Delta_0 / c + 6 * L_F * sigma2 * c)))
    s1, s2 = _slack("s_R1"), _slack("s_R2")
    R1 = thirty_six * L_F**2 * c**2 * (1 + s1)
    parts.append(_nonneg("R >= 36 L_F^2 c^2 => eta^2 <= 1/(36 L_F^2)", 1 / (36 * L_F**2) - c**2 / R1))
    R2 = ten * B**2 * c_gamma**2 * c**2 * (1 + s2)
    parts.append(_nonneg("R >= 10 B^2 c_gamma^2 c^2 => C_e gamma^2 <= 1/5", sp.Rational(1, 5) - ds.C_e * c_gamma**2 * c**2 / R2))
    return tuple(parts)


@_step("Power schedules: sum of eta_r grows like R^(1 - alpha) (integral comparison)")
def ds_decaying_rate() -> tuple[Part, ...]:
    """(r+1)^(-alpha) >= integral_{r+1}^{r+2} x^(-alpha) dx, and the integral from 1 to R+2 is
    ((R+2)^(1-alpha) - 1)/(1-alpha): so sum_{r<=R} eta_r >= c ((R+2)^(1-alpha) - 1)/(1 - alpha) (alpha < 1)."""
    x = sp.Symbol("x", positive=True)
    integral = sp.integrate(x ** (-alpha), (x, 1, R + 2), conds="none")  # alpha != 1
    parts = [_zero("integral", integral - ((R + 2) ** (1 - alpha) - 1) / (1 - alpha))]
    y = sp.Symbol("y", positive=True)
    parts.append(_nonneg("x^(-alpha) decreasing", -sp.diff(y ** (-alpha), y)))
    return tuple(parts)


@_step("Exact prox satisfies (10) with gamma = L_f eta/(1 - L_f eta)")
def ds_exact_prox_gamma(six_fifths: sp.Expr = SIX_FIFTHS) -> tuple[Part, ...]:
    """e = grad f_i(x) - grad f_i(y*), ||e|| <= L eta ||grad f_i(y*)|| <= L eta (||grad f_i(x)|| + ||e||), so
    ||e|| <= L eta/(1 - L eta) ||grad f_i(x)|| <= (6/5) L eta ||grad f_i(x)|| once L eta <= 1/6; the bound is
    attained by f_i(w) = -L w^2/2."""
    a = sp.Symbol("a", nonnegative=True)  # ||grad f_i(x)||
    t, _ = _unit("s_Leta")
    Leta = t / 6  # L_f eta <= L_F eta <= 1/6
    w = _slack("w_e")
    b = (Leta * a - w) / (1 - Leta)  # from b (1 - L eta) = L eta a - w
    parts = [_nonneg("||e|| <= L eta/(1 - L eta) ||grad f_i(x)||", Leta * a / (1 - Leta) - b)]
    parts.append(_nonneg("L eta/(1 - L eta) <= (6/5) L eta", six_fifths * Leta - Leta / (1 - Leta)))
    xx = sp.Symbol("x0", real=True)
    fprime = sp.Lambda(xx, -L_f * xx)  # f = -L w^2/2, L-smooth and L-weakly convex
    y_star = xx / (1 - L_f * eta)  # argmin -L w^2/2 + (w - x)^2/(2 eta): -L w + (w - x)/eta = 0
    parts.append(_zero("y* is the prox point", fprime(y_star) + (y_star - xx) / eta))
    err = (y_star - xx) / eta + fprime(xx)
    parts.append(_zero("tight: ||e|| = L eta/(1 - L eta) ||grad f(x)||", err - ds.exact_prox_gamma * (L_f * xx)))
    return tuple(parts)


@_step("Weak convexity is implied by smoothness, and A4(iv) implies A4(ii)")
def ds_weak_convexity_implied() -> tuple[Part, ...]:
    """An L_f-smooth f_i has f_i'' >= -L_f, so f_i + (L_f/2)||.||^2 is convex: rho <= L_f <= L_F. Then
    1/(6 L_F) <= 1/(2 rho)."""
    h = _slack("h")  # f'' = -L_f + h with h in [0, 2 L_f]
    parts = [_nonneg("(f + L_f w^2/2)'' >= 0", (-L_f + h) + L_f)]
    u, _ = _unit("u_rho")
    gap = ds.eta_max_weak.subs(rho_f, u * L_F) - ds.eta_max_smooth
    parts.append(_nonneg("1/(2 rho) - 1/(6 L_F) >= 0 for rho = u L_F, u in (0, 1]", gap))
    return tuple(parts)


@_step("A4(ii): mu_r = 1/eta_r - rho >= 1/(2 eta_r)")
def ds_mu_r() -> tuple[Part, ...]:
    """h_i(.; x^r) = f_i + ||. - x^r||^2/(2 eta) is (1/eta - rho)-strongly convex, and eta <= 1/(2 rho) gives >= 1/(2 eta)."""
    v, _ = _unit("v_rho")
    rho_ = v / (2 * eta)  # rho = v/(2 eta), v in (0, 1]  <=>  eta <= 1/(2 rho)
    return (_nonneg("mu_r - 1/(2 eta) >= 0", ds.mu_r.subs(rho_f, rho_) - 1 / (2 * eta)),)


@_step("Tighter (19): cross term vanishes; Phi_r can approach 7/12")
def ds_tight_19() -> tuple[Part, ...]:
    """E||d||^2 = eta^2 ||-g + e_f||^2 + eta^2 E||e_stoch||^2 <= 2 eta^2 (||g||^2 + ||e_f||^2) + eta^2 sigma^2;
    the combination gives coefficient20_tight <= coefficient20, and -coefficient/eta -> 7/12 (gamma -> 0, eta = 1/(6 L_F))."""
    a, b = sp.Symbol("a", real=True), sp.Symbol("b", real=True)
    parts = [_psd("(a - b)^2 <= 2a^2 + 2b^2", 2 * a**2 + 2 * b**2 - (a - b) ** 2, (a, b))]
    combo = -eta * g2 + eta * (sp.Rational(1, 4) * g2 + ef2) + L_F / 2 * eta**2 * (2 * (g2 + ef2) + sigma2)
    after = sp.expand(combo.subs(ef2, ds.C_e * gamma_r**2 * (g2 + ds.K_e2)))
    parts.append(_zero("tight coefficient", after.coeff(g2) - ds.coefficient20_tight))
    parts.append(_zero("tight remainder", after.subs(g2, 0) - ds.Xi_tight))
    e, _ = _eta_admissible()
    parts.append(_nonneg("tight <= printed", (ds.coefficient20 - ds.coefficient20_tight).subs(eta, e)))
    phi_tight = (-ds.coefficient20_tight / eta).subs({gamma_r: 0, eta: 1 / (6 * L_F)})
    phi_printed = (-ds.coefficient20 / eta).subs({gamma_r: 0, eta: 1 / (6 * L_F)})
    parts.append(_zero("Phi_tight = 7/12", phi_tight - sp.Rational(7, 12)))
    parts.append(_zero("Phi from (19) = 1/2", phi_printed - sp.Rational(1, 2)))
    return tuple(parts)


@_step("gamma_r = O(eta_r) is sufficient, not necessary; constant gamma leaves a floor")
def ds_gamma_relaxed() -> tuple[Part, ...]:
    """The proof needs sum eta gamma^2 < inf and eventual absorption: gamma_r = c_s sqrt(eta_r) gives Xi_r = O(eta_r^2);
    a constant gamma gives Xi_r/eta_r -> C_e K_e^2 gamma^2 > 0 (not summable against sum eta = inf) and, in the
    constant-step bound, the floor 5 C_e K_e^2 gamma^2 = gamma^2 (5 G^2 + 10 B^2 lambda^2 G_r^2)."""
    c_s = sp.Symbol("c_s", positive=True)
    xi_sqrt = ds.Xi.subs(gamma_r, c_s * sp.sqrt(eta))
    lim_sqrt = sp.limit(xi_sqrt / eta**2, eta, 0, "+")
    parts = [_true("gamma = c_s sqrt(eta): Xi/eta^2 has a finite limit", lim_sqrt.is_finite is True, lim_sqrt)]
    lim_const = sp.limit(ds.Xi / eta, eta, 0, "+")
    parts.append(_zero("constant gamma: Xi/eta -> C_e K_e^2 gamma^2", lim_const - ds.C_e * ds.K_e2 * gamma_r**2))
    floor_ = gamma_r**2 * (5 * G**2 + 10 * B**2 * lam**2 * G_r**2)
    parts.append(_zero("floor = gamma^2 (5 G^2 + 10 B^2 lambda^2 G_r^2)", ds.constant_gamma_floor - floor_))
    long_run = sp.limit(sp.limit(ds.constant_step_bound(Delta_0), R, sp.oo), eta, 0, "+")
    parts.append(_zero("floor is the constant-step bound as R -> oo, then eta -> 0", long_run - ds.constant_gamma_floor))
    al = sp.Rational(3, 4)
    summable = sp.Sum((c_s**2 * (r + 1) ** (-2 * al)).subs(c_s, 1), (r, 0, sp.oo)).is_convergent()
    parts.append(_true("sum eta gamma^2 = c_s^2 sum eta^2 < inf for alpha = 3/4", summable is True or summable == sp.true))
    return tuple(parts)


@_step("Corollary (i) as printed: c/r^alpha at r = 0")
def ds_schedule_at_zero() -> tuple[Part, ...]:
    """c/r^alpha is complex infinity at r = 0 (the sums start at r = 0); c/(r+1)^alpha equals c there."""
    printed = ds.schedule_power_printed.subs(r, 0)
    parts = [_true("printed schedule undefined at r = 0", printed in (sp.zoo, sp.oo), printed)]
    parts.append(_zero("corrected schedule is c at r = 0", ds.schedule_power.subs(r, 0) - c))
    return tuple(parts)


@_step("Phi_r >= 1/4 fails before r_0: coefficient (20) above -eta/4 just past the threshold")
def ds_phi_prefix() -> tuple[Part, ...]:
    """At eta = 1/(6 L_F): (20) + eta/4 = (5/4) eta (C_e gamma^2 - 1/5), positive for gamma just above 1/(sqrt(10) B);
    with L_F = B = 1, gamma = 1/2 (allowed by gamma <= c_gamma eta with c_gamma = 3) the coefficient is +1/48 > 0."""
    e = 1 / (6 * L_F)
    excess = (ds.coefficient20 + eta / 4).subs(eta, e)
    parts = [_zero("excess at eta = 1/(6 L_F)", excess - sp.Rational(5, 4) * e * (ds.C_e * gamma_r**2 - sp.Rational(1, 5)))]
    d = sp.Symbol("delta", positive=True)
    above = sp.factor(excess.subs(gamma_r, ds.absorption_gamma_max * (1 + d)))
    parts.append(_true("excess > 0 for gamma = (1 + delta)/(sqrt(10) B), delta > 0", above.is_positive is True, above))
    numbers = ds.coefficient20.subs({L_F: 1, B: 1, eta: sp.Rational(1, 6), gamma_r: sp.Rational(1, 2)})
    parts.append(_zero("L_F = B = 1, eta = 1/6, gamma = 1/2: coefficient = 1/48", numbers - sp.Rational(1, 48)))
    parts.append(_true("gamma = 1/2 <= c_gamma eta with c_gamma = 3", sp.Rational(1, 2) <= 3 * sp.Rational(1, 6)))
    return tuple(parts)


# ---------------------------------------------------------------------------------------------------------
# FedNMap (arXiv 2602.03357)
# ---------------------------------------------------------------------------------------------------------


@_step("FedNMap, Theorem 5: gamma <= 1/(5(rho + L)) gives 1 - gamma rho >= 4/5")
def fednmap_one_minus_gamma_rho(five: sp.Expr = 5, four_fifths: sp.Expr = FOUR_FIFTHS) -> tuple[Part, ...]:
    """With gamma = t/(5(rho + L)), t in (0, 1]: 1 - gamma rho - 4/5 = (rho (1 - t) + L)/(5 (rho + L)) >= 0."""
    t, _ = _unit("s_gamma")
    g_ = t / (five * (rho + L))
    return (_nonneg("1 - gamma rho >= 4/5", 1 - g_ * rho - four_fifths),)


@_step("FedNMap, Theorem 5: eta_s is free (eta_s = 1/sqrt(m) at both maxima)")
def fednmap_eta_s_free() -> tuple[Part, ...]:
    """eta_hat_max/(Q eta_a_max) = 1/sqrt(m); for any eta_s > 0, eta_a = min(eta_a_max, eta_hat_max/(eta_s Q)) and
    eta_hat = eta_s eta_a Q satisfy both conditions (two cases)."""
    parts = [_zero("eta_s at both maxima", fn.eta_s_at_maxima - 1 / sp.sqrt(m))]
    t, _ = _unit("s_gamma")
    admissible = {gamma: t / (5 * (rho + L))}  # Theorem 5's gamma condition (so 1 - gamma rho > 0)
    u, _ = _unit("u_es")
    # case eta_s <= 1/sqrt(m): eta_s = u/sqrt(m); eta_a = eta_a_max; eta_hat = eta_s Q eta_a_max
    es1 = u / sp.sqrt(m)
    gap1 = fn.theorem5_eta_hat_max - es1 * Q * fn.theorem5_eta_a_max
    parts.append(_nonneg("case eta_s <= 1/sqrt(m): eta_hat <= max", gap1.subs(admissible)))
    # case eta_s >= 1/sqrt(m): eta_s = 1/(u sqrt(m)); eta_a = eta_hat_max/(eta_s Q); eta_hat = eta_hat_max
    es2 = 1 / (u * sp.sqrt(m))
    gap2 = fn.theorem5_eta_a_max - fn.theorem5_eta_hat_max / (es2 * Q)
    parts.append(_nonneg("case eta_s >= 1/sqrt(m): eta_a <= max", gap2.subs(admissible)))
    return tuple(parts)


@_step("FedNMap: the largest window m_max(eta_hat) satisfies Theorem 5's eta_hat condition")
def fednmap_m_max(hundred: sp.Expr = 100) -> tuple[Part, ...]:
    """m_max = floor(M) <= M with M = (1 - gamma rho)/(100 eta_hat S): eta_hat <= (1 - gamma rho)/(100 m_max S)."""
    u, _ = _unit("u_floor")
    M = (1 - gamma * rho) / (hundred * eta_hat * fn.lipschitz_scale)
    parts = [_nonneg("condition at m = floor(M) = u M", fn.theorem5_eta_hat_max.subs(m, u * M) - eta_hat)]
    parts.append(_zero("m_max = floor(M)", sp.floor(M) - fn.m_max))
    return tuple(parts)


@_step("FedNMap, Theorem 8: the floor with m = m_max(eta_hat) is O(eta_hat)")
def fednmap_floor_coupled(half: sp.Expr = HALF) -> tuple[Part, ...]:
    """floor(M) >= M/2 for M >= 1 (M = k + f, k >= 1 integer, f in [0, 1)); so 36 sigma^2/(m_max n mu Q) <=
    72 sigma^2/(M n mu Q) = 7200 eta_hat S sigma^2/((1 - gamma rho) n mu Q), linear in eta_hat."""
    j = sp.Symbol("j", nonnegative=True, integer=True)
    f, _ = _unit_open("s_frac")
    k = 1 + j
    parts = [_nonneg("floor(M) >= M/2", k - half * (k + f))]
    variance_upper = fn.theorem8_floor_coupled_upper - fn.theorem8_drift
    parts.append(_zero("72 sigma^2/(M n mu Q) is linear in eta_hat", sp.diff(variance_upper, eta_hat, 2)))
    parts.append(_zero("... with slope 7200 S sigma^2/((1 - gamma rho) n mu Q)",
                       sp.diff(variance_upper, eta_hat) - 7200 * fn.lipschitz_scale * sigma2 / ((1 - gamma * rho) * n * mu * Q)))
    M = fn.window_real
    parts.append(_zero("m = M in the variance term gives 36/72 of the upper bound",
                       fn.theorem8_variance.subs(m, M) - variance_upper / 2))
    return tuple(parts)


@_step("FedNMap, Theorem 8: the bound tends to the floor as T grows")
def fednmap_theorem8_floor() -> tuple[Part, ...]:
    """exp(-2 eta_hat mu T/(9(1 + gamma mu C_0))) -> 0, so the bound -> 36 sigma^2/(m n mu Q) + 12100 (...)."""
    Tr = sp.Symbol("T_real", positive=True)
    lim = sp.limit(fn.theorem8_bound.subs(T, Tr), Tr, sp.oo)
    return (_zero("limit T -> oo", lim - fn.theorem8_floor),)


@_step("FedNMap: natural residual vs normal map, (1 - gamma rho)||F_nat(prox z)|| <= gamma ||F_nor(z)||")
def fednmap_nat_nor_relation(p: int = 2) -> tuple[Part, ...]:
    """(i) z - (x - gamma grad f(x)) = gamma F_nor(z) for x = prox(z); (ii) prox is 1/(1 - gamma rho)-Lipschitz:
    optimality gives (z - x)/gamma in d phi(x), (w - x')/gamma in d phi(x'), rho-weak convexity gives
    <u - u', x - x'> >= -rho ||x - x'||^2, hence <z - w, x - x'> >= (1 - gamma rho)||x - x'||^2, and Cauchy-Schwarz;
    (iii) F_nat(x) = prox(z) - prox(x - gamma grad f(x))."""
    z, x, gf = _vec("z", p), _vec("x", p), _vec("gf", p)
    F_nor = gf + (z - x) / gamma
    parts = [_zero(f"(i) component {k}", (z - (x - gamma * gf))[k] - gamma * F_nor[k]) for k in range(p)]
    w, x2 = _vec("w", p), _vec("xp", p)
    u1, u2 = (z - x) / gamma, (w - x2) / gamma
    lhs = _dot(u1 - u2, x - x2)  # >= -rho ||x - x'||^2 (weak convexity)
    parts.append(_zero("(ii) monotonicity rearranged", gamma * (lhs + rho * _dot(x - x2, x - x2))
                       - (_dot(z - w, x - x2) - (1 - gamma * rho) * _dot(x - x2, x - x2))))
    d = sp.Symbol("d", positive=True)  # ||x - x'||
    w1, w2 = _slack("w_mono"), _slack("w_cs")
    gr, _ = _unit_open("s_gr")  # gamma rho in [0, 1)
    ip = (1 - gr) * d**2 + w1  # <z - w, x - x'> = (1 - gamma rho) d^2 + w1
    D_val = (ip + w2) / d  # Cauchy-Schwarz: ip <= D d, i.e. D d = ip + w2
    parts.append(_nonneg("(ii) (1 - gamma rho) ||x - x'|| <= ||z - w||", D_val - (1 - gr) * d))
    return tuple(parts)


@_step("FedNMap: the relation is tight (phi = -rho y^2/2, f = a x^2/2)")
def fednmap_nat_nor_tight(factor: sp.Expr | None = None) -> tuple[Part, ...]:
    """For phi(y) = -rho y^2/2 (rho-weakly convex), prox_{gamma phi}(z) = z/(1 - gamma rho), and for f = a x^2/2
    (1 - gamma rho)|F_nat(prox z)| = gamma |F_nor(z)| exactly; ``factor`` replaces (1 - gamma rho)."""
    a = sp.Symbol("a_q", positive=True)
    zz = sp.Symbol("z0", positive=True)
    k, _ = _unit_open("s_k")  # gamma rho = k in [0, 1)
    rho_ = k / gamma
    prox = sp.Lambda(zz, zz / (1 - gamma * rho_))
    y = sp.Symbol("y", real=True)
    parts = [_zero("prox optimality", (sp.diff(-rho_ * y**2 / 2 + (y - zz) ** 2 / (2 * gamma), y)).subs(y, prox(zz)))]
    x = prox(zz)
    F_nor = a * x + (zz - x) / gamma
    F_nat = x - prox(x - gamma * a * x)
    fac = (1 - gamma * rho_) if factor is None else factor.subs(rho, rho_)
    # both sides carry the sign of (a - rho) x; compare squares
    parts.append(_nonneg("gamma^2 F_nor^2 - factor^2 F_nat^2 >= 0", gamma**2 * F_nor**2 - fac**2 * F_nat**2))
    return tuple(parts)


@_step("FedNMap: F_nor(z) lies in the subdifferential of psi at prox(z)")
def fednmap_nor_in_subdifferential() -> tuple[Part, ...]:
    """v = (z - prox(z))/gamma is in d phi(prox(z)) (Fermat's rule for the prox subproblem); checked for phi = |.|
    (soft thresholding, three cases) and phi = -rho y^2/2; then F_nor = grad f(x) + v is in d psi(x)."""
    zz = sp.Symbol("z0", real=True)
    s = sp.Symbol("s_z", positive=True)
    y = sp.Symbol("y", real=True)
    parts = []
    # z > gamma: prox = z - gamma (the derivative of |y| + (y - z)^2/(2 gamma) vanishes there, y > 0), v = 1 = sign(prox)
    z1 = gamma + s
    parts.append(_zero("l1, z > gamma: prox = z - gamma is stationary", sp.diff(y + (y - z1) ** 2 / (2 * gamma), y).subs(y, z1 - gamma)))
    parts.append(_zero("l1, z > gamma: v = +1", (z1 - (z1 - gamma)) / gamma - 1))
    z2 = -(gamma + s)
    parts.append(_zero("l1, z < -gamma: v = -1", (z2 - (z2 + gamma)) / gamma + 1))
    t, _ = _unit("s_in")
    z3 = gamma * (2 * t - 1)  # |z| <= gamma: prox = 0, v = z/gamma in [-1, 1]
    parts.append(_nonneg("l1, |z| <= gamma: 1 - v >= 0", 1 - z3 / gamma))
    parts.append(_nonneg("l1, |z| <= gamma: 1 + v >= 0", 1 + z3 / gamma))
    k, _ = _unit_open("s_k")
    rho_ = k / gamma
    x = zz / (1 - gamma * rho_)
    parts.append(_zero("phi = -rho y^2/2: v = phi'(x)", (zz - x) / gamma - (-rho_ * x)))
    return tuple(parts)


def _simulate_fednmap(n_: int, Q_: int, rounds: int) -> dict:
    """Algorithm 1 (the note's section 2.6) with symbolic gradient samples g[t][i][l] and prox outputs x[t]."""
    ea, es_, gam = sp.Symbol("eta_a", positive=True), sp.Symbol("eta_s", positive=True), sp.Symbol("gamma", positive=True)
    z = [sp.Symbol("z_0", real=True)]
    xs = [sp.Symbol("x_0", real=True)]
    g = [[[sp.Symbol(f"g_{t}_{i}_{l}", real=True) for l in range(Q_)] for i in range(n_)] for t in range(rounds)]
    c_ = [[sp.S.Zero] * n_]
    y: list[list[sp.Expr]] = []
    for t in range(rounds):
        v = (z[t] - xs[t]) / gam
        yt = []
        for i in range(n_):
            zi = z[t]
            for l in range(Q_):
                zi = zi - ea * (g[t][i][l] + v + c_[t][i])
            yt.append((z[t] - zi) / (ea * Q_))
        y.append(yt)
        ybar = sum(yt) / n_
        z.append(z[t] - Q_ * es_ * ea / n_ * sum(yt))
        xs.append(sp.Symbol(f"x_{t + 1}", real=True))
        c_.append([c_[t][i] - yt[i] + ybar for i in range(n_)])
    return {"z": z, "x": xs, "g": g, "c": c_, "y": y, "eta_a": ea, "eta_s": es_, "gamma": gam}


@_step("FedNMap, section 2.5 compact form and the section 2.1 tracking identity (symbolic run, small n, Q)")
def fednmap_compact_form(n_clients: int = 2, local_steps: int = 2, rounds: int = 3) -> tuple[Part, ...]:
    """y_i = gbar_i + v + c_i; sum_i c_i = 0; c_{i,t} = gbar_{t-1} - gbar_{i,t-1}; ybar = gbar + v;
    z_{t+1} = z_t - eta_hat (gbar_t + v_t) with eta_hat = eta_s eta_a Q; and the tracking identity of section 2.1."""
    sim = _simulate_fednmap(n_clients, local_steps, rounds)
    z, x, g, c_, y, gam = sim["z"], sim["x"], sim["g"], sim["c"], sim["y"], sim["gamma"]
    N, Qn = n_clients, local_steps
    eta_hat_ = sim["eta_s"] * sim["eta_a"] * Qn
    gbar_i = [[sum(g[t][i]) / Qn for i in range(N)] for t in range(rounds)]
    gbar = [sum(gbar_i[t]) / N for t in range(rounds)]
    parts = []
    for t in range(rounds):
        v = (z[t] - x[t]) / gam
        for i in range(N):
            parts.append(_zero(f"y_{i},{t} = gbar_i + v + c_i", y[t][i] - (gbar_i[t][i] + v + c_[t][i])))
            if t >= 1:
                parts.append(_zero(f"c_{i},{t} = gbar_(t-1) - gbar_i,(t-1)", c_[t][i] - (gbar[t - 1] - gbar_i[t - 1][i])))
        parts.append(_zero(f"sum_i c_i,{t} = 0", sum(c_[t])))
        parts.append(_zero(f"ybar_{t} = gbar + v", sum(y[t]) / N - (gbar[t] + v)))
        parts.append(_zero(f"z_{t + 1} = z_t - eta_hat (gbar + v)", z[t + 1] - (z[t] - eta_hat_ * (gbar[t] + v))))
        if t + 1 < rounds:
            v1 = (z[t + 1] - x[t + 1]) / gam
            for i in range(N):
                track = sum(y[t]) / N + (gbar_i[t + 1][i] + v1) - (gbar_i[t][i] + v)
                parts.append(_zero(f"tracking identity, client {i}, round {t + 1}", y[t + 1][i] - track))
    return tuple(parts)


@_step("FedNMap, fixed point: with c_i = grad f(x*) - grad f_i(x*) and F_nor(z*) = 0 the local steps do not move")
def fednmap_fixed_point(n_clients: int = 3) -> tuple[Part, ...]:
    """Local direction g_i(x*) + v* + c_i = grad f_i(x*) + v* + grad f(x*) - grad f_i(x*) = F_nor(z*) = 0 (exact gradients)."""
    gi = [sp.Symbol(f"gf_{i}", real=True) for i in range(n_clients)]
    v_star = -sum(gi) / n_clients  # F_nor(z*) = grad f(x*) + v* = 0
    gf = sum(gi) / n_clients
    return tuple(_zero(f"client {i} direction", gi[i] + v_star + (gf - gi[i])) for i in range(n_clients))


@_step("FedNMap Lyapunov reconstruction: PL sandwich and per-round contraction")
def fednmap_lyapunov_contraction(descent_den: sp.Expr = 9) -> tuple[Part, ...]:
    """PL + F_nor in d psi(prox z): psi - psi* <= ||F_nor||^2/(2 mu), so the merit part is <= (1 + gamma mu C_0)/(2 mu) ||F_nor||^2;
    a per-round descent (eta_hat/9)||F_nor||^2 then gives L_{t+1} <= q L_t with 1 - q = 2 eta_hat mu/(9 (1 + gamma mu C_0))."""
    w = _slack("w_pl")
    parts = [_nonneg("merit <= PL upper", fn.lyapunov_merit_pl_upper - fn.lyapunov_merit.subs(psi_gap, Fnor2 / (2 * mu) - w))]
    wl = _slack("w_L")
    F2 = 2 * mu * L_t / (1 + gamma * mu * C_0) + wl  # the sandwich L_t <= (1 + gamma mu C_0) ||F_nor||^2/(2 mu)
    descent = L_t - eta_hat / descent_den * F2
    parts.append(_nonneg("q L_t >= L_t - (eta_hat/9)||F_nor||^2", fn.lyapunov_round_factor * L_t - descent))
    parts.append(_zero("lyapunov = merit + C_c corr_err", fn.lyapunov - fn.lyapunov_merit - C_c * corr_err))
    return tuple(parts)


@_step("FedNMap Lyapunov reconstruction: the per-window recursion unrolls to Theorem 8's bound")
def fednmap_lyapunov_unroll() -> tuple[Part, ...]:
    """L_{(k)} <= (1 - x) L_{(k-1)} + x F (x = m (1 - q), F the floor) gives L_{(k)} <= (1 - x)^k L_0 + F (1 - (1 - x)^k)
    <= exp(-x k) L_0 + F, and exp(-x k) = exp(-(1 - q) T) for T = k m: Theorem 8's exponent and floor."""
    x, _ = _unit_open("s_x")
    k = sp.Symbol("k", positive=True, integer=True)
    j = sp.Symbol("j", nonnegative=True, integer=True)
    F = sp.Symbol("F", nonnegative=True)
    xs = sp.Symbol("x_w", positive=True)
    geo = sp.Sum((1 - xs) ** j * xs * F, (j, 0, k - 1)).doit()
    parts = [_zero("geometric sum", sp.simplify(geo - F * (1 - (1 - xs) ** k)))]
    y = sp.Symbol("y", nonnegative=True)
    h_prime = sp.diff(-y - sp.log(1 - y), y)  # h(y) = -y - log(1 - y) >= 0 on [0, 1): h(0) = 0, h' >= 0
    parts.append(_nonneg("h'(y) >= 0 so log(1 - x) <= -x", h_prime.subs(y, x)))
    parts.append(_zero("h(0) = 0", (-y - sp.log(1 - y)).subs(y, 0)))
    noise_over_gap = fn.lyapunov_window_noise / (1 - fn.lyapunov_window_factor)
    parts.append(_zero("window noise/(1 - window factor) = Theorem 8 floor", noise_over_gap - fn.theorem8_floor))
    kk = sp.Symbol("k_w", positive=True)
    expo = (1 - fn.lyapunov_window_factor) * kk  # x k
    parts.append(_zero("exp(-x k) E[L_0] = Theorem 8 transient at T = k m", sp.exp(-expo) * EL_0 - fn.theorem8_transient.subs(T, kk * m)))
    return tuple(parts)


def _exponent(expr: sp.Expr, var: sp.Symbol) -> sp.Expr:
    """d log(expr)/d log(var): the power of ``var`` in a monomial-like expression."""
    return sp.simplify(var * sp.diff(sp.log(expr), var))


@_step("FedNMap PL complexity: what Theorem 8's bound gives (the printed second term does not arise)")
def fednmap_pl_complexity() -> tuple[Part, ...]:
    """With m = m_max(eta_hat) and eta_s free, the bound needs T of order (1 + gamma mu C_0)/mu * max(S sigma^2/(n Q mu eps), S) log(1/eps):
    the epsilon powers are -1 and 0, never -1/2. With eta_s = 1 the drift term gives an eps^(-1/2) term, but it scales as Q^(-1/2),
    while the printed sqrt(L^2 sigma^2/(eps mu (L + rho + mu)^2)) does not depend on Q."""
    parts = []
    # the derived complexity is (coefficient) * log(3 E[L_0]/eps) * Max(b1, b2)
    maxes = [a for a in sp.preorder_traversal(fn.theorem8_complexity_derived) if isinstance(a, sp.Max)]
    by_power = {_exponent(b, epsilon): b for b in maxes[0].args}
    parts.append(_true("eta_s free: eps powers {-1, 0}", sorted(by_power) == [-1, 0], sp.Tuple(*by_power)))
    variance_branch = by_power.get(-1, sp.S.One)
    parts.append(_zero("the eps^-1 branch scales as 1/n (linear speedup)", _exponent(variance_branch, n) + 1))
    parts.append(_zero("the eps^-1 branch scales as 1/Q (linear speedup)", _exponent(variance_branch, Q) + 1))
    drift_rounds = fn.theorem8_complexity_drift_term_eta_s1 / sp.log(3 * EL_0 / epsilon)
    parts.append(_zero("eta_s = 1: drift term ~ eps^(-1/2)", _exponent(drift_rounds, epsilon) + sp.Rational(1, 2)))
    parts.append(_zero("eta_s = 1: drift term ~ Q^(-1/2)", _exponent(drift_rounds, Q) + sp.Rational(1, 2)))
    printed_second = sp.sqrt(L**2 * sigma2 / (epsilon * mu * (L + rho + mu) ** 2))
    parts.append(_zero("printed second term is the printed complexity's second summand", fn.theorem8_complexity - (
        (L + rho) * sigma2 / (n * Q * epsilon * mu**2) + printed_second)))
    parts.append(_zero("printed second term ~ eps^(-1/2)", _exponent(printed_second, epsilon) + sp.Rational(1, 2)))
    parts.append(_zero("printed second term is Q-free", _exponent(printed_second, Q)))
    parts.append(_true("so the printed Q-power (0) differs from the derivable one (-1/2)",
                       sp.simplify(_exponent(printed_second, Q) - _exponent(drift_rounds, Q)) != 0))
    return tuple(parts)


@_step("FedNMap nonconvex complexity: Delta_f = f(x_0) - f* can vanish while psi(x_0) - psi* > 0")
def fednmap_delta_f() -> tuple[Part, ...]:
    """n = 1, f(x) = x^2/2, phi(x) = |x - 1|, x_0 = 0: Delta_f = 0 and (1/n) sum ||grad f_i(x_0)||^2 = 0, so the printed
    complexity is 0, yet psi(x_0) - psi* = 1/2 and F_nat(x_0) = -gamma != 0 (gamma < 1): x_0 is no epsilon-solution for eps < gamma."""
    xx = sp.Symbol("xx", real=True)
    f = xx**2 / 2
    x0 = sp.S.Zero
    f_star = sp.minimum(f, xx, sp.Reals)
    Delta = f.subs(xx, x0) - f_star
    grad0 = sp.diff(f, xx).subs(xx, x0) ** 2
    printed = fn.theorem5_complexity.subs({Delta_f: Delta, grad0_sq: grad0})
    parts = [_zero("Delta_f = 0", Delta), _zero("grad term = 0", grad0), _zero("printed complexity = 0", printed)]
    # psi* = 1/2 at x = 1: on x < 1 psi' = x - 1 < 0, on x > 1 psi' = x + 1 > 0
    psi = xx**2 / 2 + sp.Abs(xx - 1)
    parts.append(_zero("psi(x_0) - psi(1) = 1/2", psi.subs(xx, 0) - psi.subs(xx, 1) - sp.Rational(1, 2)))
    s_ = _slack("s_left")
    left = sp.Symbol("xl", real=True)
    parts.append(_nonneg("psi decreasing on x < 1", -(sp.diff(left**2 / 2 + 1 - left, left)).subs(left, 1 - s_)))
    parts.append(_nonneg("psi increasing on x > 1", sp.diff(left**2 / 2 + left - 1, left).subs(left, 1 + s_)))
    # prox of gamma |. - 1| at w = x_0 - gamma f'(x_0) = 0 (< 1 - gamma): shift by +gamma
    t, _ = _unit_open("s_g")
    g_ = t  # gamma in [0, 1)
    w0 = x0 - g_ * sp.diff(f, xx).subs(xx, x0)  # = 0
    yv = sp.Symbol("yv", real=True)
    prox_w = g_  # argmin_y |y - 1| + (y - w0)^2/(2 gamma): on y < 1 the derivative -1 + (y - w0)/gamma vanishes at y = gamma < 1
    parts.append(_zero("prox point is stationary on y < 1", sp.diff((1 - yv) + (yv - w0) ** 2 / (2 * g_), yv).subs(yv, prox_w)))
    parts.append(_zero("F_nat(x_0) = x_0 - prox(x_0 - gamma f'(x_0)) = -gamma", (x0 - prox_w) + g_))
    return tuple(parts)


@_step("FedNMap Theorem 8: with m = 1 the floor does not shrink with the step")
def fednmap_m_coupling() -> tuple[Part, ...]:
    """m = 1 is admissible whenever eta_hat <= (1 - gamma rho)/(100 S); the floor then is 36 sigma^2/(n mu Q) +
    drift, which does not vanish as eta_hat -> 0: only the coupling m ~ 1/eta_hat makes the variance part small."""
    floor_m1 = fn.theorem8_floor.subs(m, 1)
    lim = sp.limit(floor_m1.subs(eta_a, 0), eta_hat, 0)
    return (_zero("floor at m = 1 and eta_a -> 0 is 36 sigma^2/(n mu Q)", lim - 36 * sigma2 / (n * mu * Q)),
            _zero("eta_hat_max_window1 is the eta_hat bound at m = 1", fn.theorem5_eta_hat_max.subs(m, 1) - fn.eta_hat_max_window1))


@_step("DS FedProxGrad (10) at a stationary point of f_i forces an exact local solve")
def ds_inexactness_relative() -> tuple[Part, ...]:
    """If grad f_i(x^r) = 0, (10) reads ||e_{f,i}|| <= 0: any solver noise at such points violates it."""
    e_norm = sp.Symbol("e_norm", real=True)
    feasible = sp.solve_univariate_inequality(e_norm <= gamma_r * 0, e_norm, relational=False).intersect(sp.Interval(0, sp.oo))
    return (_true("{||e|| >= 0 : ||e|| <= gamma * 0} = {0}", feasible == sp.FiniteSet(0), e_norm),)


@_step("DS FedProxGrad without F* > -inf: every stated assumption holds, the conclusion fails")
def ds_unbounded_below() -> tuple[Part, ...]:
    """N = 1, f_1(x) = -x, r = 0 (lambda = 1, G_r = 1), G = B = 1, exact prox: f_1 is L_f-smooth for every L_f and
    0-weakly convex, (8) reads 1 <= 1 + 1, ||grad r|| = 0 <= G_r, the exact prox y = x + eta has e_f = 0 (gamma_r = 0),
    yet ||grad F(x^r)||^2 = 1 in every round: liminf E||grad F||^2 = 1, not 0. F is unbounded below."""
    xx, w = sp.Symbol("xx", real=True), sp.Symbol("w", real=True)
    f1 = -xx
    F = f1 + 1 * 0
    parts = [_zero("f_1'' = 0 (smooth, weakly convex with rho = 0)", sp.diff(f1, xx, 2))]
    grad = sp.diff(F, xx)
    parts.append(_nonneg("(8) with G = B = 1: G^2 + B^2 ||grad f||^2 - (1/N) sum ||grad f_i||^2 >= 0", 1 + grad**2 - grad**2))
    h = f1.subs(xx, w) + (w - xx) ** 2 / (2 * eta)
    y = sp.solve(sp.diff(h, w), w)[0]
    parts.append(_zero("exact prox y = x + eta", y - (xx + eta)))
    parts.append(_zero("e_f = (y - x)/eta + grad f_1(x) = 0 (so (10) holds with gamma_r = 0)", (y - xx) / eta + sp.diff(f1, xx)))
    parts.append(_zero("||grad F||^2 = 1 at every point", grad**2 - 1))
    parts.append(_true("F is unbounded below", sp.limit(F, xx, sp.oo) == -sp.oo))
    return tuple(parts)


@_step("FedNMap nonconvex complexity: Theorem 5's conditions make 1/eta_hat grow with rho + L, not with L alone")
def fednmap_rho_in_complexity() -> tuple[Part, ...]:
    """At gamma = 1/(5(rho+L)): S^2 = L^2 + 25(rho+L)^2 >= 25(rho+L)^2 and 1 - gamma rho <= 1, so
    1/eta_hat >= 100 m S/(1 - gamma rho) >= 500 m (rho + L): the round count grows with rho at fixed L."""
    g_ = fn.theorem5_gamma_max
    S2 = (fn.lipschitz_scale**2).subs(gamma, g_)
    parts = [_zero("S^2 - 25 (rho+L)^2 = L^2", S2 - 25 * (rho + L) ** 2 - L**2)]
    inv = 1 / fn.theorem5_eta_hat_max.subs(gamma, g_)
    parts.append(_nonneg("(1/eta_hat_max)^2 >= (500 m (rho + L))^2", sp.expand(inv**2) - (500 * m * (rho + L)) ** 2))
    return tuple(parts)
