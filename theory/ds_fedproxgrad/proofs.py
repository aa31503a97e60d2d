"""DS FedProxGrad's proof steps (arXiv 2512.08671), each decided by sympy; registered in
:func:`fedbounds.theory.core.proofs.steps` under their function names, which the claims cite.
"""

from __future__ import annotations

import sympy as sp
from fedbounds.theory.core.proofs import (
    FIVE_QUARTERS,
    QUARTER,
    SIX_FIFTHS,
    SQRT10,
    Part,
    _dot,
    _expect,
    _nonneg,
    _psd,
    _slack,
    _step,
    _true,
    _unit,
    _vec,
    _zero,
)
from fedbounds.theory.core.symbols import (
    L_F,
    B,
    Delta_0,
    G,
    G_r,
    L_f,
    R,
    alpha,
    c,
    c_gamma,
    ef2,
    eta,
    g2,
    gamma_r,
    gradf2,
    lam,
    r,
    r_0,
    rho_f,
    sigma2,
)
from fedbounds.theory.ds_fedproxgrad import formulas as ds


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
def ds_eq13(two: sp.Expr = 2, printed: sp.Expr = ds.eq13_bound) -> tuple[Part, ...]:
    """||grad f|| <= ||grad F|| + lambda ||grad r|| (triangle, proved through the Lagrange identity), lambda ||grad r|| <=
    lambda G_r (A3), then (a + b)^2 <= 2 a^2 + 2 b^2; ``printed`` is the claim's bound (13), which the chain reaches, and
    which is tight (equality when grad F and -lambda grad r are parallel with equal norms lambda G_r)."""
    u, v = _vec("u", 2), _vec("v", 2)  # grad F and -lambda grad r, so grad f = u + v
    nu, nv = sp.sqrt(_dot(u, u)), sp.sqrt(_dot(v, v))
    gap = (nu + nv) ** 2 - _dot(u + v, u + v) - 2 * (nu * nv - _dot(u, v))
    parts = [_zero("triangle: (|u| + |v|)^2 - |u + v|^2 = 2 (|u||v| - <u, v>)", gap)]
    parts.append(_zero("... and |u|^2 |v|^2 - <u, v>^2 is a square (so |u||v| >= <u, v>)",
                       _dot(u, u) * _dot(v, v) - _dot(u, v) ** 2 - (u[0] * v[1] - u[1] * v[0]) ** 2))
    a, b = sp.Symbol("a", real=True), sp.Symbol("b", real=True)
    parts.append(_psd("(a+b)^2 <= 2a^2+2b^2", two * a**2 + two * b**2 - (a + b) ** 2, (a, b)))
    # chain to the printed bound: ||grad f|| = j (||grad F|| + lambda ||grad r||), j in (0, 1] (triangle), and
    # lambda ||grad r|| = k lambda G_r, k in (0, 1] (A3); then ||grad f||^2 <= (13) evaluated at ||grad F||^2 = gF^2
    gF = sp.Symbol("gF", nonnegative=True)
    j, _ = _unit("s_tri")
    k, _ = _unit("s_A3")
    b_ = k * lam * G_r
    bound = printed.subs(g2, gF**2)
    # ||grad f||^2 = j^2 (gF + b)^2 = [bound] - [bound - 2(gF^2 + b^2)] - [2(gF^2 + b^2) - (gF + b)^2] - [(1 - j^2)(gF + b)^2]
    parts.append(_nonneg("(13) >= 2(||grad F||^2 + lambda^2 ||grad r||^2) (A3)", bound - two * (gF**2 + b_**2)))
    parts.append(_nonneg("(1 - j^2)(a + b)^2 >= 0 (triangle inequality)", (1 - j**2) * (gF + b_) ** 2))
    parts.append(_zero("tight: equality at grad F parallel to -lambda grad r, ||grad F|| = lambda ||grad r|| = lambda G_r",
                       (bound - (gF + lam * G_r) ** 2).subs(gF, lam * G_r)))
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
    unabsorbed_bound: sp.Expr = ds.descent_unabsorbed_bound,
) -> tuple[Part, ...]:
    """Descent lemma + linear term + Young + (19), then (16): the coefficient of ||g||^2 is (20), the rest is (22);
    ``unabsorbed_bound`` (claim ds.descent_unabsorbed) is what the pieces give, in every round."""
    before16 = -eta * g2 + eta * (quarter * g2 + ef2) + L_F / 2 * three * eta**2 * (g2 + ef2 + sigma2)
    parts = [_zero("before (16): matches the recorded form", before16 - ds.descent_before_16)]
    coef_ef = sp.expand(before16).coeff(ef2)
    parts.append(_nonneg("coefficient of ||e_f||^2 >= 0 (so (16) may be substituted)", coef_ef))
    after = sp.expand(before16.subs(ef2, ds.C_e * gamma_r**2 * (g2 + ds.K_e2)))
    parts.append(_zero("coefficient of ||g||^2 is (20)", after.coeff(g2) - printed_coefficient))
    parts.append(_zero("remainder is (22)", after.subs(g2, 0) - printed_Xi))
    parts.append(_zero("the pieces give the every-round bound (20)||g||^2 + (22)", after - unabsorbed_bound))
    return tuple(parts)


@_step("DS FedProxGrad eq. (21): (3 L_F/2) eta^2 <= eta/4")
def ds_eq21(six: sp.Expr = 6, quarter: sp.Expr = QUARTER) -> tuple[Part, ...]:
    """Under eta <= 1/(6 L_F): (3 L_F/2) eta^2 <= eta/4 (with eta = t/(6 L_F): t(1 - t)/(24 L_F) >= 0)."""
    e, _ = _eta_admissible(six)
    return (_nonneg("eta/4 - 3 L_F eta^2/2 >= 0", quarter * e - sp.Rational(3, 2) * L_F * e**2),)


@_step("DS FedProxGrad eq. (21): absorption threshold gamma_r <= 1/(sqrt(10) B)")
def ds_absorption(threshold: sp.Expr = ds.absorption_gamma_max, six: sp.Expr = 6,
                  exact: sp.Expr = ds.absorption_gamma_exact) -> tuple[Part, ...]:
    """Coefficient (20) <= -eta/2 + (5/4) eta C_e gamma^2 (using 3 L_F eta/2 <= 1/4), and that is <= -eta/4 iff
    C_e gamma^2 <= 1/5, i.e. gamma_r <= 1/(sqrt(10) B): sufficient for every eta <= 1/(6 L_F). The exact condition at a
    given eta is gamma_r <= ``exact`` (absorption_gamma_exact), which equals the threshold at eta = 1/(6 L_F) and is larger
    below it: the threshold is sharp only at eta = 1/(6 L_F)."""
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
    # the exact threshold at a given eta: (20) + eta/4 = eta ((1 + 3 L_F eta/2) C_e (gamma^2 - exact^2))
    excess = ds.coefficient20 + eta / 4
    parts.append(_zero("(20) + eta/4 = eta (1 + 3 L_F eta/2) C_e (gamma^2 - exact^2): <= 0 iff gamma <= exact",
                       excess - eta * (1 + sp.Rational(3, 2) * L_F * eta) * ds.C_e * (gamma_r**2 - exact**2)))
    parts.append(_zero("exact = threshold at eta = 1/(6 L_F) (sharp there)", (exact**2 - threshold**2).subs(eta, 1 / (6 * L_F))))
    parts.append(_nonneg("exact^2 - threshold^2 >= 0 for eta <= 1/(6 L_F) (the threshold is only sufficient below it)",
                         (exact**2 - threshold**2).subs(eta, e)))
    return tuple(parts)


@_step("r_0 in closed form for eta_r = c/(r+1)^alpha, gamma_r = c_gamma eta_r")
def ds_r0_power(sqrt10: sp.Expr = SQRT10, r0: sp.Expr = ds.r0_power) -> tuple[Part, ...]:
    """At the real root r* = (c c_gamma sqrt(10) B)^(1/alpha) - 1, c_gamma eta_{r*} equals the threshold; eta_r
    decreases in r, so every r >= ceil(r*) is absorbed: r_0 = max(0, ceil(r*))."""
    root = (c * c_gamma * sqrt10 * B) ** (1 / alpha) - 1
    at_root = c_gamma * ds.schedule_power.subs(r, root) - ds.absorption_gamma_max
    cg = sp.Symbol("c_gamma_pos", positive=True)
    at_root = sp.powsimp(sp.expand_power_base(at_root.subs(c_gamma, cg), force=True), force=True)
    parts = [_zero("c_gamma eta_{r*} = 1/(sqrt(10) B)", at_root)]
    x = sp.Symbol("x", nonnegative=True)
    parts.append(_nonneg("eta_r decreasing: -d eta/dr >= 0", -sp.diff(ds.schedule_power.subs(r, x), x)))
    parts.append(_zero("r_0 = max(0, ceil(r*))", r0 - sp.Max(0, sp.ceiling(root))))
    return tuple(parts)


@_step("DS FedProxGrad eq. (22): explicit O(eta^2) bound on Xi_r")
def ds_xi_explicit(five_quarters: sp.Expr = FIVE_QUARTERS, six: sp.Expr = 6, Xi_explicit: sp.Expr = ds.Xi_explicit) -> tuple[Part, ...]:
    """C_e K_e^2 = G^2 + 2 B^2 lambda^2 G_r^2; 1 + 3 L_F eta/2 <= 5/4; gamma <= c_gamma eta; hence Xi <= ``Xi_explicit``,
    with equality at eta = 1/(6 L_F), gamma = c_gamma eta (so no constant of it can be lowered)."""
    e, _ = _eta_admissible(six)
    v, _ = _unit("v_gamma")
    parts = [_zero("C_e K_e^2", ds.C_e * ds.K_e2 - (G**2 + 2 * B**2 * lam**2 * G_r**2))]
    parts.append(_nonneg("1 + 3 L_F eta/2 <= 5/4", (five_quarters - 1 - sp.Rational(3, 2) * L_F * eta).subs(eta, e)))
    gap = (Xi_explicit - ds.Xi).subs(gamma_r, c_gamma * eta * v).subs(eta, e)
    parts.append(_nonneg("Xi <= Xi_explicit", gap))
    tight = (Xi_explicit - ds.Xi).subs(gamma_r, c_gamma * eta).subs(eta, 1 / (6 * L_F))
    parts.append(_zero("equality at eta = 1/(6 L_F), gamma = c_gamma eta", tight))
    return tuple(parts)


@_step("DS FedProxGrad Lemma 5.2 for r >= r_0")
def ds_lemma5_2(Phi_r: sp.Expr = ds.Phi_r) -> tuple[Part, ...]:
    """Once coefficient (20) <= -eta/4 (absorbed), the unabsorbed descent bound is <= -(eta/4)||g||^2 + Xi; before
    absorption the coefficient of -eta ||g||^2 is ``Phi_r`` = -(20)/eta."""
    w = _slack("w_abs")  # absorbed: coefficient20 = -eta/4 - w
    unabsorbed = (-eta / 4 - w) * g2 + ds.Xi
    parts = [_zero("unabsorbed bound is (20)||g||^2 + (22)", ds.descent_unabsorbed_bound - (ds.coefficient20 * g2 + ds.Xi))]
    parts.append(_nonneg("absorbed: <= -eta Phi ||g||^2 + Xi", ds.lemma5_2_bound - unabsorbed))
    parts.append(_zero("Phi_r = -(20)/eta", Phi_r + ds.coefficient20 / eta))
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
def ds_constant_step_bound(bound: sp.Expr | None = None) -> tuple[Part, ...]:
    """From (eta/4) sum_{r<R} E||g_r||^2 <= Delta_0 + R Xi (telescoping, every round absorbed):
    (1/R) sum <= 4 Delta_0/(eta R) + 4 Xi/eta <= ``bound`` (constant_step_bound); equality at eta = 1/(6 L_F), so no
    constant of the bound can be lowered."""
    bound = ds.constant_step_bound(Delta_0) if bound is None else bound
    e, _ = _eta_admissible()
    w = _slack("w_tel")  # (eta/4) sum_{r<R} E||g_r||^2 = Delta_0 + R Xi - w
    avg = (Delta_0 + R * ds.Xi - w) / (eta / 4) / R
    parts = [_nonneg("average <= 4 Delta_0/(eta R) + 4 Xi/eta", 4 * Delta_0 / (eta * R) + 4 * ds.Xi / eta - avg)]
    gap = bound - 4 * Delta_0 / (eta * R) - 4 * ds.Xi / eta
    parts.append(_nonneg("4 Delta_0/(eta R) + 4 Xi/eta <= bound for eta <= 1/(6 L_F)", gap.subs(eta, e)))
    parts.append(_zero("equality at eta = 1/(6 L_F)", gap.subs(eta, 1 / (6 * L_F))))
    return tuple(parts)


@_step("Corollary (ii), eq. (26), with every constant")
def ds_corollary_ii(bound: sp.Expr | None = None, horizon_min: sp.Expr = ds.corollary_ii_horizon_min) -> tuple[Part, ...]:
    """eta = c/sqrt(R), gamma = c_gamma eta in the constant-step bound gives ``bound`` (corollary_ii_bound) =
    O(1/sqrt(R)), valid once R >= ``horizon_min`` = max(36 L_F^2 c^2, 10 B^2 c_gamma^2 c^2): then eta <= 1/(6 L_F) and
    C_e gamma^2 <= 1/5, each with equality at its own term of the max (the horizon is the smallest that works)."""
    bound = ds.corollary_ii_bound(Delta_0) if bound is None else bound
    e = c / sp.sqrt(R)
    sub = ds.constant_step_bound(Delta_0, e, c_gamma * e)
    parts = [_zero("substitution", sub - bound)]
    lim = sp.limit(sp.sqrt(R) * bound, R, sp.oo)
    parts.append(_zero("sqrt(R) * bound -> 4 Delta_0/c + 6 L_F sigma^2 c", lim - (4 * Delta_0 / c + 6 * L_F * sigma2 * c)))
    terms = horizon_min.args if isinstance(horizon_min, sp.Max) else (horizon_min,)
    step_term = [t for t in terms if t.has(L_F)]
    gamma_term = [t for t in terms if t.has(B)]
    parts.append(_true("the horizon has one term for the step and one for the inexactness", len(step_term) == len(gamma_term) == 1))
    if len(step_term) == len(gamma_term) == 1:
        s1, s2 = _slack("s_R1"), _slack("s_R2")
        eta_max2 = ds.eta_max_smooth**2
        parts.append(_nonneg("R >= step term => eta^2 <= 1/(6 L_F)^2", eta_max2 - c**2 / (step_term[0] * (1 + s1))))
        parts.append(_zero("... with equality at R = step term", eta_max2 - c**2 / step_term[0]))
        absorbed = 1 / (5 * ds.C_e)  # C_e gamma^2 <= 1/5, i.e. gamma^2 <= 1/(10 B^2) = absorption_gamma_max^2
        parts.append(_zero("1/(5 C_e) is the absorption threshold squared", absorbed - ds.absorption_gamma_max**2))
        parts.append(_nonneg("R >= inexactness term => gamma^2 <= 1/(10 B^2)", absorbed - c_gamma**2 * c**2 / (gamma_term[0] * (1 + s2))))
        parts.append(_zero("... with equality at R = inexactness term", absorbed - c_gamma**2 * c**2 / gamma_term[0]))
    return tuple(parts)


@_step("Decaying schedules: telescoping Lemma 5.2 from r_0 and the min below the weighted average")
def ds_decaying_bound(bound: sp.Expr = ds.decaying_bound, rounds: int = 3) -> tuple[Part, ...]:
    """Lemma 5.2 for r >= r_0: E F(x^{r+1}) - E F(x^r) <= -(eta_r/4) g_r + Xi_r. Summed over ``rounds`` rounds r_0..R
    (symbolic values) with E F(x^{R+1}) >= F*: (1/4) sum eta_r g_r <= Delta_{r_0} + sum Xi_r; and min g_r <= sum eta_r g_r /
    sum eta_r. Hence min_{r_0<=r<=R} g_r <= ``bound`` (decaying_bound, its sum of eta_r a positive symbol here)."""
    etas = [sp.Symbol(f"eta_{k}", positive=True) for k in range(rounds)]
    xis = [sp.Symbol(f"Xi_{k}", nonnegative=True) for k in range(rounds)]
    gmin = sp.Symbol("g_min", nonnegative=True)
    gs = [gmin + sp.Symbol(f"h_{k}", nonnegative=True) for k in range(rounds)]  # g_r >= min_r g_r
    ws = [_slack(f"w_{k}") for k in range(rounds)]
    Fs = [sp.Symbol("F_0", real=True)]
    for k in range(rounds):  # Lemma 5.2 (absorbed), slack w_k: F_{k+1} = F_k - (eta_k/4) g_k + Xi_k - w_k
        Fs.append(Fs[k] - etas[k] / 4 * gs[k] + xis[k] - ws[k])
    F_star = Fs[rounds] - _slack("w_end")  # F(x^{R+1}) >= F*
    weighted = sum(e_ * g_ for e_, g_ in zip(etas, gs))
    parts = [_nonneg("(1/4) sum eta_r g_r <= Delta_{r_0} + sum Xi_r", (Fs[0] - F_star) + sum(xis) - weighted / 4)]
    parts.append(_nonneg("min g_r <= weighted average: sum eta_r g_r - g_min sum eta_r >= 0", weighted - gmin * sum(etas)))
    S_eta = sp.Symbol("S_eta", positive=True)
    concl = bound.replace(lambda x: isinstance(x, sp.Sum), lambda x: S_eta)
    Delta, Xi_s = [s_ for s_ in concl.free_symbols if s_.name == "Delta_r0"], [s_ for s_ in concl.free_symbols if s_.name == "Xi_sum"]
    parts.append(_true("the bound is stated in Delta_r0, Xi_sum and the sum of eta_r", bool(Delta and Xi_s)))
    if Delta and Xi_s:
        # Delta_{r_0} + sum Xi = (1/4) sum eta_r g_r + slacks >= (1/4) g_min S_eta + slack, with S_eta = sum eta_r
        d_plus_x = sp.Symbol("D_plus_X", nonnegative=True)
        wavg = _slack("w_avg")
        g_from = (4 * (d_plus_x - wavg)) / S_eta  # g_min S_eta/4 = D + X - w_avg (the two steps above, combined)
        gap = concl.subs({Delta[0]: d_plus_x, Xi_s[0]: 0}) - g_from
        parts.append(_nonneg("g_min <= bound", gap))
    return tuple(parts)


@_step("Power schedules: sum of eta_r grows like R^(1 - alpha), or log R at alpha = 1 (integral comparison)")
def ds_decaying_rate(sum_lower: sp.Expr = ds.decaying_sum_lower,
                     sum_lower_alpha1: sp.Expr = ds.decaying_sum_lower_alpha1) -> tuple[Part, ...]:
    """(r+1)^(-alpha) >= integral_{r+1}^{r+2} x^(-alpha) dx (x^(-alpha) decreasing), so sum_{r=r_0}^R c/(r+1)^alpha >=
    c integral_{r_0+1}^{R+2} x^(-alpha) dx = ``sum_lower`` (alpha < 1) or ``sum_lower_alpha1`` = c log((R+2)/(r_0+1)) (alpha = 1);
    the decaying bound is then O(R^-(1-alpha)), resp. O(1/log R). Both are checked exactly at alpha = 1/2 + 1/4, R = r_0 + 3."""
    x = sp.Symbol("x", positive=True)
    lo, hi = r_0 + 1, R + 2
    integral = sp.integrate(x ** (-alpha), (x, lo, hi), conds="none")  # alpha != 1
    parts = [_zero("integral, alpha < 1", sp.simplify(integral - sum_lower / c))]
    integral1 = sp.integrate(1 / x, (x, lo, hi))
    parts.append(_zero("integral, alpha = 1", sp.expand_log(integral1 - sum_lower_alpha1 / c, force=True)))
    y = sp.Symbol("y", positive=True)
    parts.append(_nonneg("x^(-alpha) decreasing", -sp.diff(y ** (-alpha), y)))
    # alpha = 1 term by term: 1/(r+1) >= log((r+2)/(r+1)) = log(1 + u), u = 1/(r+1): h(u) = u - log(1 + u), h(0) = 0, h' >= 0
    u = sp.Symbol("u", nonnegative=True)
    parts.append(_zero("h(0) = 0", (u - sp.log(1 + u)).subs(u, 0)))
    parts.append(_nonneg("h'(u) = u/(1 + u) >= 0", sp.diff(u - sp.log(1 + u), u)))
    # exact check on a short window (r_0 = 0, R = 3): sum >= the lower bounds, for alpha = 3/4 and alpha = 1
    window = {r_0: 0, R: 3, c: 1}
    for a_ in (sp.Rational(3, 4), sp.S.One):
        total = sum((k + 1) ** (-a_) for k in range(4))
        low = (sum_lower if a_ != 1 else sum_lower_alpha1).subs(window).subs(alpha, a_)
        parts.append(_true(f"alpha = {a_}: sum_(r=0)^3 (r+1)^-alpha >= lower bound", bool(sp.N(total - low, 30) >= 0), total - low))
    rate = sp.limit(sum_lower_alpha1.subs(r_0, 0) / sp.log(R), R, sp.oo)
    parts.append(_zero("alpha = 1: sum / log R -> c (so the bound is O(1/log R))", rate - c))
    a3 = sp.Rational(3, 4)
    rate_a = sp.limit(sum_lower.subs({r_0: 0, alpha: a3}) / R ** (1 - a3), R, sp.oo)
    parts.append(_zero("alpha = 3/4: sum / R^(1/4) -> 4 c (so the bound is O(R^-(1-alpha)))", rate_a - c / (1 - a3)))
    return tuple(parts)


@_step("Exact prox satisfies (10) with gamma = L_f eta/(1 - L_f eta)")
def ds_exact_prox_gamma(six_fifths: sp.Expr = SIX_FIFTHS, gamma_exact: sp.Expr = ds.exact_prox_gamma) -> tuple[Part, ...]:
    """e = grad f_i(x) - grad f_i(y*), ||e|| <= L eta ||grad f_i(y*)|| <= L eta (||grad f_i(x)|| + ||e||), so
    ||e|| <= L eta/(1 - L eta) ||grad f_i(x)|| <= (6/5) L eta ||grad f_i(x)|| once L eta <= 1/6; the bound is
    attained by f_i(w) = -L w^2/2."""
    a = sp.Symbol("a", nonnegative=True)  # ||grad f_i(x)||
    t, _ = _unit("s_Leta")
    Leta = t / 6  # L_f eta <= L_F eta <= 1/6
    w = _slack("w_e")
    b = (Leta * a - w) / (1 - Leta)  # from b (1 - L eta) = L eta a - w
    g_at = gamma_exact.subs(L_f, Leta / eta)  # gamma_exact at L_f eta = Leta
    parts = [_nonneg("||e|| <= gamma_exact ||grad f_i(x)||", g_at * a - b)]
    parts.append(_nonneg("gamma_exact <= (6/5) L eta", six_fifths * Leta - g_at))
    xx = sp.Symbol("x0", real=True)
    fprime = sp.Lambda(xx, -L_f * xx)  # f = -L w^2/2, L-smooth and L-weakly convex
    y_star = xx / (1 - L_f * eta)  # argmin -L w^2/2 + (w - x)^2/(2 eta): -L w + (w - x)/eta = 0
    parts.append(_zero("y* is the prox point", fprime(y_star) + (y_star - xx) / eta))
    err = (y_star - xx) / eta + fprime(xx)
    parts.append(_zero("tight: ||e|| = gamma_exact ||grad f(x)||", err - gamma_exact * (L_f * xx)))
    return tuple(parts)


@_step("Weak convexity is implied by smoothness, and A4(iv) implies A4(ii)")
def ds_weak_convexity_implied(eta_max_weak: sp.Expr = ds.eta_max_weak) -> tuple[Part, ...]:
    """An L_f-smooth f_i is L_f-weakly convex: the gradient of f_i + (L_f/2)||.||^2 is monotone, since with
    a = grad f_i(x) - grad f_i(y), d = x - y and ||a|| <= L_f ||d|| (smoothness), <a, d> + L_f ||d||^2 >= -||a|| ||d|| + L_f ||d||^2
    >= 0 (Cauchy-Schwarz through the Lagrange identity). So rho <= L_f <= L_F = L_f + lambda L_r, and A4(ii)'s cap
    ``eta_max_weak`` = 1/(2 rho) is >= 3/(6 L_F): A4(iv) implies A4(ii), with a factor exactly 3 at rho = L_F."""
    a_, d_ = _vec("a", 2), _vec("d", 2)
    parts = [_zero("Lagrange identity: ||a||^2 ||d||^2 - <a, d>^2 = (a_0 d_1 - a_1 d_0)^2",
                   _dot(a_, a_) * _dot(d_, d_) - _dot(a_, d_) ** 2 - (a_[0] * d_[1] - a_[1] * d_[0]) ** 2)]
    na, nd = sp.Symbol("n_a", nonnegative=True), sp.Symbol("n_d", nonnegative=True)  # ||a||, ||d||
    k, _ = _unit("s_lip")  # ||a|| = k L_f ||d||, k in (0, 1] (smoothness)
    inner = -na * nd + _slack("v_cs")  # Cauchy-Schwarz: <a, d> = -||a|| ||d|| + v, v >= 0
    monotone = (inner + L_f * nd**2).subs(na, k * L_f * nd)
    parts.append(_nonneg("<a, d> + L_f ||d||^2 >= 0 (monotone gradient of f + L_f ||.||^2/2)", monotone))
    parts.append(_nonneg("L_F - L_f = lambda L_r >= 0", ds.L_F_definition - L_f))
    u, _ = _unit("u_rho")  # rho = u L_F, u in (0, 1]
    gap = eta_max_weak.subs(rho_f, u * L_F) - 3 * ds.eta_max_smooth
    parts.append(_nonneg("1/(2 rho) >= 3/(6 L_F) for rho <= L_F", gap))
    parts.append(_zero("... with equality at rho = L_F", eta_max_weak.subs(rho_f, L_F) - 3 * ds.eta_max_smooth))
    return tuple(parts)


@_step("A4(ii): mu_r = 1/eta_r - rho >= 1/(2 eta_r)")
def ds_mu_r() -> tuple[Part, ...]:
    """h_i(.; x^r) = f_i + ||. - x^r||^2/(2 eta) is (1/eta - rho)-strongly convex, and eta <= 1/(2 rho) gives >= 1/(2 eta)."""
    v, _ = _unit("v_rho")
    rho_ = v / (2 * eta)  # rho = v/(2 eta), v in (0, 1]  <=>  eta <= 1/(2 rho)
    return (_nonneg("mu_r - 1/(2 eta) >= 0", ds.mu_r.subs(rho_f, rho_) - 1 / (2 * eta)),)


@_step("Tighter (19): cross term vanishes; Phi_r can approach 7/12")
def ds_tight_19(coefficient_tight: sp.Expr = ds.coefficient20_tight) -> tuple[Part, ...]:
    """E||d||^2 = eta^2 ||-g + e_f||^2 + eta^2 E||e_stoch||^2 <= 2 eta^2 (||g||^2 + ||e_f||^2) + eta^2 sigma^2;
    the combination gives coefficient20_tight <= coefficient20, and -coefficient/eta -> 7/12 (gamma -> 0, eta = 1/(6 L_F))."""
    a, b = sp.Symbol("a", real=True), sp.Symbol("b", real=True)
    parts = [_psd("(a - b)^2 <= 2a^2 + 2b^2", 2 * a**2 + 2 * b**2 - (a - b) ** 2, (a, b))]
    combo = -eta * g2 + eta * (sp.Rational(1, 4) * g2 + ef2) + L_F / 2 * eta**2 * (2 * (g2 + ef2) + sigma2)
    after = sp.expand(combo.subs(ef2, ds.C_e * gamma_r**2 * (g2 + ds.K_e2)))
    parts.append(_zero("tight coefficient", after.coeff(g2) - coefficient_tight))
    parts.append(_zero("tight remainder", after.subs(g2, 0) - ds.Xi_tight))
    e, _ = _eta_admissible()
    parts.append(_nonneg("tight <= printed", (ds.coefficient20 - coefficient_tight).subs(eta, e)))
    phi_tight = (-coefficient_tight / eta).subs({gamma_r: 0, eta: 1 / (6 * L_F)})
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


@_step("Phi_r >= 1/4 fails before r_0: a one-client quadratic with an uphill error gamma_r > sqrt(33) - 5")
def ds_phi_prefix() -> tuple[Part, ...]:
    """The counterexample to Lemma 5.2 as printed (Phi_r >= 1/4 for every r): lambda = 0, N = 1, f = L_F x^2/2 (so (8)
    holds with G = 0, B = 1, and Xi_r = 0 at sigma = 0), the local solve returns y = x - eta (grad f - e) with the
    uphill error e = gamma_r grad f (||e|| = gamma_r ||grad f||, allowed by (10)). Then F(y) - F(x) = -eta Phi
    ||grad F(x)||^2 with Phi = (1 - gamma_r) - (L_F eta/2)(1 - gamma_r)^2, which at eta = 1/(6 L_F) drops below 1/4
    exactly for gamma_r > sqrt(33) - 5 ~ 0.745 (gamma_r <= c_gamma eta holds with c_gamma = 6 L_F). Example:
    gamma_r = 4/5 gives Phi = 59/300 ~ 0.197 < 1/4. The proof's own coefficient (20) is +1/48 at gamma_r = 1/2 (its
    bound fails there), but the instance's Phi at gamma_r = 1/2 is 23/48 > 1/4: that point refutes the proof, not the
    lemma."""
    xx = sp.Symbol("xx", real=True, nonzero=True)
    f = L_F * xx**2 / 2
    grad = sp.diff(f, xx)
    y = xx - eta * (grad - gamma_r * grad)
    phi_instance = sp.simplify(-(f.subs(xx, y) - f) / (eta * grad**2))
    phi = (1 - gamma_r) - (L_F * eta / 2) * (1 - gamma_r) ** 2
    parts = [_zero("Phi of the instance = (1 - gamma_r) - (L_F eta/2)(1 - gamma_r)^2", phi_instance - phi)]
    parts.append(_zero("Xi_r = 0 at lambda = 0, G = 0, sigma = 0 (eq. (22))", ds.Xi.subs({lam: 0, G: 0, sigma2: 0})))
    e = 1 / (6 * L_F)
    at = sp.expand(phi.subs(eta, e))
    root = sp.sqrt(33) - 5
    parts.append(_zero("Phi = 1/4 at gamma_r = sqrt(33) - 5 (eta = 1/(6 L_F))", sp.expand(at.subs(gamma_r, root)) - QUARTER))
    parts.append(_true("Phi decreasing in gamma_r on [0, 1]: dPhi/dgamma = -1 + (1 - gamma_r)/6 < 0",
                       sp.simplify(sp.diff(at, gamma_r) + 1 - (1 - gamma_r) / 6) == 0))
    parts.append(_true("the threshold sqrt(33) - 5 lies in (0, 1)", bool(0 < root < 1), root))
    g45 = at.subs(gamma_r, sp.Rational(4, 5))
    parts.append(_zero("gamma_r = 4/5: Phi = 59/300", g45 - sp.Rational(59, 300)))
    parts.append(_true("59/300 < 1/4: Lemma 5.2 as printed fails at gamma_r = 4/5", g45 < QUARTER))
    parts.append(_true("gamma_r = 4/5 <= c_gamma eta with c_gamma = 24/5 L_F at eta = 1/(6 L_F)",
                       sp.Rational(4, 5) <= sp.Rational(24, 5) * L_F * e))
    proof_coef = ds.coefficient20.subs({L_F: 1, B: 1, eta: sp.Rational(1, 6), gamma_r: sp.Rational(1, 2)})
    parts.append(_zero("the proof's coefficient (20) at L_F = B = 1, eta = 1/6, gamma = 1/2 is +1/48 (its bound fails)",
                       proof_coef - sp.Rational(1, 48)))
    parts.append(_zero("... but the instance's Phi there is 23/48 > 1/4 (not a counterexample to the lemma)",
                       at.subs({gamma_r: sp.Rational(1, 2)}) - sp.Rational(23, 48)))
    return tuple(parts)


@_step("DS FedProxGrad (10) relaxed: an additive delta_r^2 in expectation keeps Lemma 5.2 with a summable extra remainder")
def ds_inexactness_relaxed(N: int = 3) -> tuple[Part, ...]:
    """(10) is relative: at grad f_i(x^r) = 0 it forces e_{f,i} = 0. The proof uses it only through Lemma 5.1, squared and in
    expectation, so E||e_{f,i}||^2 <= gamma_r^2 ||grad f_i||^2 + delta_r^2 suffices: Jensen gives ||e_f||^2 <=
    gamma^2 (G^2 + B^2 ||grad f||^2) + delta^2, and the descent bound keeps coefficient (20) with the remainder
    Xi_r + eta_r (1 + 3 L_F eta_r/2) delta_r^2, summable when sum eta_r delta_r^2 < inf."""
    delta2 = sp.Symbol("delta2", nonnegative=True)
    a = [sp.Symbol(f"a{i}", nonnegative=True) for i in range(N)]  # ||grad f_i||^2
    u = [_unit(f"u{i}")[0] for i in range(N)]  # E||e_i||^2 = u_i (gamma^2 a_i + delta^2), u_i in (0, 1]
    mean_e2 = sum(u_ * (gamma_r**2 * a_ + delta2) for a_, u_ in zip(a, u)) / N  # >= ||e_f||^2 (Jensen, ds_jensen)
    slack = _slack("w8")  # (8): (1/N) sum a_i = G^2 + B^2 ||grad f||^2 - slack
    relaxed_51 = ds.lemma5_1_bound + delta2
    termwise = sum(gamma_r**2 * a_ + delta2 for a_ in a) / N - mean_e2
    parts = [_nonneg("relaxed (10) termwise", termwise)]
    parts.append(_nonneg("Lemma 5.1 relaxed: E||e_f||^2 <= gamma^2 (G^2 + B^2 ||grad f||^2) + delta^2",
                         relaxed_51 - (gamma_r**2 * (G**2 + B**2 * gradf2 - slack) + delta2)))
    before16 = ds.descent_before_16
    after = sp.expand(before16.subs(ef2, ds.C_e * gamma_r**2 * (g2 + ds.K_e2) + delta2))
    parts.append(_zero("coefficient of ||g||^2 unchanged: (20)", after.coeff(g2) - ds.coefficient20))
    extra = after.subs(g2, 0) - ds.Xi
    parts.append(_zero("extra remainder eta (1 + 3 L_F eta/2) delta^2", extra - eta * (1 + sp.Rational(3, 2) * L_F * eta) * delta2))
    e, _ = _eta_admissible()
    parts.append(_nonneg("extra remainder <= (5/4) eta delta^2 under A4(iv)", (sp.Rational(5, 4) * eta * delta2 - extra).subs(eta, e)))
    return tuple(parts)


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




def _pivots_positive_on(S: sp.Matrix, t: sp.Symbol, lo: sp.Expr, hi: sp.Expr) -> tuple[bool, list[sp.Expr]]:
    """S(t) >= 0 for every t in (lo, hi]: symbolic LDL^T in a fixed order; each pivot, a rational function of t, is
    shown > 0 on the interval by exact root counting (Sturm sequences, ``Poly.count_roots``) of its numerator and
    denominator plus its sign at one interior point; a pivot identically 0 needs its remaining row identically 0."""
    A = sp.Matrix(S)
    n = A.shape[0]
    alive = list(range(n))
    pivots: list[sp.Expr] = []
    mid = (lo + hi) / 2
    while alive:
        p = next((i for i in alive if sp.simplify(A[i, i]) != 0), None)
        if p is None:
            return all(sp.simplify(A[i, j]) == 0 for i in alive for j in alive), pivots
        d = sp.factor(sp.simplify(A[p, p]))
        num, den = sp.fraction(sp.together(d))
        for q in (num, den):
            if q.free_symbols and sp.Poly(q, t).count_roots(lo, hi) > 0:  # a sign change possible in [lo, hi]
                return False, pivots
        if not d.subs(t, mid) > 0:
            return False, pivots
        pivots.append(d)
        alive.remove(p)
        for i in alive:
            f = A[i, p] / A[p, p]
            for j in alive:
                A[i, j] = sp.simplify(A[i, j] - f * A[p, j])
    return True, pivots


@_step("DS Lemma 5.2 over the class at gamma_r = 0, for every eta in (0, 1/(6 L_F)]: a parametric PEP certificate")
def ds_pep_descent_parametric(phi: sp.Expr | None = None) -> tuple[Part, ...]:
    """The PEP of Lemma 5.2 (checks/ds_fedproxgrad/pep/encoding.py: N = 2, f_i 1-smooth, r 1-smooth, lambda = 1/2, so L_F = 3/2;
    gamma_r = 0, sigma = 0, so Xi = 0) has worst case w(eta) = -eta (1 - L_F eta/2) at every eta in (0, 1/(6 L_F)], i.e.
    Phi over the whole class is 1 - L_F eta/2 >= 11/12 > 1/4. The point certificates of ``ds.pep.lemma5_2`` suggest
    the multipliers: 1/N on each f_i's smooth interpolation inequality (PEPit's SmoothFunction row, after Taylor,
    Hendrickx and Glineur 2017: f_a - f_b >= -(L/4)||x_a - x_b||^2 + <g_a + g_b, x_a - x_b>/2 + ||g_a - g_b||^2/(4L),
    with a = x, b = x^+), lambda on r's, and w on the normalisation ||grad F(x)||^2 = 1; the dissimilarity (8) is not used
    (its multiplier 0). With these multipliers the residual S(eta) = -(weighted sum - w ||grad F||^2), a quadratic form
    in the six gradients (g_i, h_i at x, x^+; grad r at both), must be PSD: proved for the whole interval by a
    symbolic LDL^T whose pivots are positive there (exact root counting). Multipliers are constant in eta, so nothing
    is fitted: the identity and the PSD condition are exact in eta. ``phi`` (an expression in the symbol ``eta``,
    default 1 - L_F eta/2) is the Phi to certify; any larger one fails (the bound is attained)."""
    t = sp.Symbol("eta", positive=True)
    Lf, Lr, lam_, N = sp.Integer(1), sp.Integer(1), sp.Rational(1, 2), 2
    LF = Lf + lam_ * Lr
    g = sp.Matrix(sp.symbols("g0 g1 gr h0 h1 hr", real=True))  # a scalar stand-in per leaf, for the quadratic form
    g0, g1, gr, h0, h1, hr = g
    gradF = (g0 + g1) / N + lam_ * gr
    x_plus = -t * gradF  # x = 0, gamma_r = 0: y_i = x - eta grad f_i(x), x^+ = mean y_i - eta lambda grad r(x)

    def upper(gx: sp.Expr, gp: sp.Expr, L: sp.Expr) -> sp.Expr:
        """f(x^+) - f(x) <= this: the interpolation inequality with a = x, b = x^+ (PEPit's SmoothFunction row)."""
        dx = 0 - x_plus
        return (L / 4) * dx**2 - (gx + gp) * dx / 2 - (gx - gp) ** 2 / (4 * L)

    bound = (upper(g0, h0, Lf) + upper(g1, h1, Lf)) / N + lam_ * upper(gr, hr, Lr)
    w = -t * ((1 - LF * t / 2) if phi is None else phi.subs(sp.Symbol("eta"), t))
    residual = sp.expand(w * gradF**2 - bound)  # = <S, G> >= 0 is what makes F(x^+) - F(x) <= w ||grad F||^2
    S = sp.hessian(residual, list(g)) / 2
    parts = [_zero("residual is the quadratic form of S(eta) (identity)",
                   sp.expand(residual - (g.T * S * g)[0, 0]))]
    ok, pivots = _pivots_positive_on(S, t, sp.Integer(0), 1 / (6 * LF))
    parts.append(_true("S(eta) >= 0 for every eta in (0, 1/(6 L_F)] (symbolic LDL^T, pivots > 0 by root counting)", ok,
                       sp.Tuple(*pivots)))
    parts.append(_zero("certified bound w(eta) = -eta (1 - L_F eta/2), i.e. Phi = 1 - L_F eta/2", sp.expand(-w / t - (1 - LF * t / 2))))
    parts.append(_true("Phi = 1 - L_F eta/2 >= 1/4 on the interval (Lemma 5.2 at gamma_r = 0, with room)",
                       sp.Rational(11, 12) >= QUARTER and sp.expand((1 - LF * t / 2).subs(t, 1 / (6 * LF))) == sp.Rational(11, 12)))
    return tuple(parts)
