"""FedNMap's proof steps (arXiv 2602.03357), each decided by sympy; registered in
:func:`fedbounds.theory.core.proofs.steps` under their function names, which the claims cite.
"""

from __future__ import annotations

import sympy as sp
from fedbounds.theory.core.proofs import (
    FOUR_FIFTHS,
    HALF,
    Part,
    _dot,
    _nonneg,
    _slack,
    _step,
    _true,
    _unit,
    _unit_open,
    _vec,
    _zero,
)
from fedbounds.theory.core.symbols import (
    C_0,
    EL_0,
    C_c,
    Delta_f,
    Fnor2,
    L,
    Q,
    T,
    corr_err,
    epsilon,
    eta_a,
    eta_hat,
    eta_s,
    gamma,
    grad0_sq,
    m,
    mu,
    n,
    psi_gap,
    rho,
    sigma2,
)
from fedbounds.theory.fednmap import formulas as fn

# ---------------------------------------------------------------------------------------------------------
# FedNMap (arXiv 2602.03357)
# ---------------------------------------------------------------------------------------------------------


@_step("FedNMap, Theorem 5: gamma <= 1/(5(rho + L)) gives 1 - gamma rho >= 4/5")
def fednmap_one_minus_gamma_rho(gamma_max: sp.Expr = fn.theorem5_gamma_max,
                                four_fifths: sp.Expr = FOUR_FIFTHS) -> tuple[Part, ...]:
    """With gamma = t gamma_max, t in (0, 1]: 1 - gamma rho - 4/5 = (rho (1 - t) + L)/(5 (rho + L)) >= 0; equality at t = 1, L = 0
    (so 4/5 is the best constant)."""
    t, _ = _unit("s_gamma")
    g_ = t * gamma_max
    return (_nonneg("1 - gamma rho >= 4/5", 1 - g_ * rho - four_fifths),
            _zero("equality at gamma = gamma_max, L = 0", (1 - gamma_max * rho - four_fifths).subs(L, 0)))


@_step("FedNMap, Theorem 5: eta_s is free (eta_s = 1/sqrt(m) at both maxima)")
def fednmap_eta_s_free(eta_s_at_maxima: sp.Expr = fn.eta_s_at_maxima) -> tuple[Part, ...]:
    """eta_hat_max/(Q eta_a_max) = ``eta_s_at_maxima`` = 1/sqrt(m); for any eta_s > 0, eta_a = min(eta_a_max,
    eta_hat_max/(eta_s Q)) and eta_hat = eta_s eta_a Q satisfy both conditions (two cases)."""
    ratio = fn.theorem5_eta_hat_max / (Q * fn.theorem5_eta_a_max)
    parts = [_zero("eta_s at both maxima: eta_hat_max/(Q eta_a_max)", ratio - eta_s_at_maxima)]
    parts.append(_zero("... = 1/sqrt(m)", eta_s_at_maxima - 1 / sp.sqrt(m)))
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
def fednmap_m_max(m_max: sp.Expr = fn.m_max, hundred: sp.Expr | None = None) -> tuple[Part, ...]:
    """Solving Theorem 5's eta_hat condition (1 - gamma rho)/(100 m S) = eta_hat for m gives M; every m <= M is admissible and
    ``m_max`` = floor(M) is the largest integer one. ``hundred`` replaces the 100 of the condition."""
    cond = fn.theorem5_eta_hat_max if hundred is None else fn.theorem5_eta_hat_max * 100 / hundred
    roots = sp.solve(sp.Eq(cond, eta_hat), m)
    parts = [_true("the condition has one root in m", len(roots) == 1, sp.Tuple(*roots))]
    if len(roots) != 1:
        return tuple(parts)
    M = roots[0]
    u, _ = _unit("u_floor")
    parts.append(_nonneg("condition holds at m = u M <= M", cond.subs(m, u * M) - eta_hat))
    parts.append(_zero("m_max = floor(M)", sp.floor(M) - m_max))
    return tuple(parts)


@_step("FedNMap, Theorem 8: the floor with m = m_max(eta_hat) is O(eta_hat)")
def fednmap_floor_coupled(half: sp.Expr = HALF, upper: sp.Expr = fn.theorem8_floor_coupled_upper) -> tuple[Part, ...]:
    """floor(M) >= M/2 for M >= 1 (M = k + f, k >= 1 integer, f in [0, 1)); so Theorem 8's floor at m = floor(M) is <= ``upper``
    = 72 sigma^2/(M n mu Q) + drift = 7200 eta_hat S sigma^2/((1 - gamma rho) n mu Q) + drift, linear in eta_hat; equality when
    floor(M) = M/2 (M = 2 - 0, the worst case)."""
    j = sp.Symbol("j", nonnegative=True, integer=True)
    f, _ = _unit_open("s_frac")
    k = 1 + j
    parts = [_nonneg("floor(M) >= M/2", k - half * (k + f))]
    M = fn.window_real
    t, _ = _unit("s_h")
    h = (1 + t) / 2  # floor(M) = h M with h in [1/2, 1] (for M >= 1)
    gr, _ = _unit_open("s_gr")  # gamma rho in [0, 1)
    parts.append(_nonneg("floor at m = h M <= upper, h in [1/2, 1]", (upper - fn.theorem8_floor.subs(m, h * M)).subs(rho, gr / gamma)))
    parts.append(_zero("equality at h = 1/2", upper - fn.theorem8_floor.subs(m, M / 2)))
    variance_upper = upper - fn.theorem8_drift
    parts.append(_zero("the variance part is linear in eta_hat", sp.diff(variance_upper, eta_hat, 2)))
    parts.append(_zero("... with slope 7200 S sigma^2/((1 - gamma rho) n mu Q)",
                       sp.diff(variance_upper, eta_hat) - 7200 * fn.lipschitz_scale * sigma2 / ((1 - gamma * rho) * n * mu * Q)))
    return tuple(parts)


@_step("FedNMap, Theorem 8: the bound tends to the floor as T grows")
def fednmap_theorem8_floor(floor: sp.Expr = fn.theorem8_floor) -> tuple[Part, ...]:
    """exp(-2 eta_hat mu T/(9(1 + gamma mu C_0))) -> 0, so the bound -> ``floor`` = 36 sigma^2/(m n mu Q) + 12100 (...)."""
    Tr = sp.Symbol("T_real", positive=True)
    lim = sp.limit(fn.theorem8_bound.subs(T, Tr), Tr, sp.oo)
    return (_zero("limit T -> oo", lim - floor),)


@_step("FedNMap: natural residual vs normal map, (1 - gamma rho)||F_nat(prox z)|| <= gamma ||F_nor(z)||")
def fednmap_nat_nor_relation(p: int = 2, bound: sp.Expr = fn.nat_nor_sq_bound) -> tuple[Part, ...]:
    """(i) z - (x - gamma grad f(x)) = gamma F_nor(z) for x = prox(z), and F_nat(x) = prox(z) - prox(w) with w = x - gamma grad f(x);
    (ii) prox is 1/(1 - gamma rho)-Lipschitz: optimality gives (z - x)/gamma in d phi(x), (w - x')/gamma in d phi(x'), rho-weak
    convexity gives <u - u', x - x'> >= -rho ||x - x'||^2 (the premise), which rearranges (identity) to
    <z - w, x - x'> >= (1 - gamma rho)||x - x'||^2; Cauchy-Schwarz (Lagrange identity) gives <z - w, x - x'> <= ||z - w|| ||x - x'||;
    (iii) so ||F_nat||^2 = ||x - x'||^2 <= ||z - w||^2/(1 - gamma rho)^2 = gamma^2 ||F_nor||^2/(1 - gamma rho)^2, which is ``bound``
    (nat_nor_sq_bound, in the symbol ||F_nor||^2)."""
    z, x, gf = _vec("z", p), _vec("x", p), _vec("gf", p)
    F_nor = gf + (z - x) / gamma
    parts = [_zero(f"(i) component {k}", (z - (x - gamma * gf))[k] - gamma * F_nor[k]) for k in range(p)]
    w, x2 = _vec("w", p), _vec("xp", p)
    u1, u2 = (z - x) / gamma, (w - x2) / gamma
    lhs = _dot(u1 - u2, x - x2)  # >= -rho ||x - x'||^2 (weak convexity)
    parts.append(_zero("(ii) monotonicity rearranged", gamma * (lhs + rho * _dot(x - x2, x - x2))
                       - (_dot(z - w, x - x2) - (1 - gamma * rho) * _dot(x - x2, x - x2))))
    a_, b_ = z - w, x - x2
    parts.append(_zero("(ii) Cauchy-Schwarz: ||a||^2 ||b||^2 - <a, b>^2 = (a_0 b_1 - a_1 b_0)^2 (p = 2)",
                       _dot(a_, a_) * _dot(b_, b_) - _dot(a_, b_) ** 2 - (a_[0] * b_[1] - a_[1] * b_[0]) ** 2))
    # (iii) in norms: d = ||x - x'|| = ||F_nat||, D = ||z - w|| = gamma ||F_nor||; (ii) gives D d >= <z - w, x - x'> >= (1 - gamma rho) d^2,
    # i.e. D = (1 - gamma rho) d + v with v >= 0 (d > 0; d = 0 is trivial)
    d = sp.Symbol("d", positive=True)
    gr, _ = _unit_open("s_gr")  # gamma rho in [0, 1)
    D = (1 - gr) * d + _slack("v_lip")
    concl = bound.subs(Fnor2, (D / gamma) ** 2).subs(rho, gr / gamma)
    parts.append(_nonneg("(iii) ||F_nat||^2 = d^2 <= bound at ||F_nor|| = ||z - w||/gamma", concl - d**2))
    return tuple(parts)


@_step("FedNMap: the relation is tight (phi = -rho y^2/2, f = a x^2/2)")
def fednmap_nat_nor_tight(factor: sp.Expr | None = None, bound: sp.Expr = fn.nat_nor_sq_bound) -> tuple[Part, ...]:
    """For phi(y) = -rho y^2/2 (rho-weakly convex), prox_{gamma phi}(z) = z/(1 - gamma rho), and for f = a x^2/2
    (1 - gamma rho)|F_nat(prox z)| = gamma |F_nor(z)| exactly; ``factor`` replaces (1 - gamma rho). ``bound`` (nat_nor_sq_bound)
    is attained there: F_nat^2 = bound at ||F_nor||^2 = F_nor^2."""
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
    parts.append(_zero("bound attained: F_nat^2 = bound(F_nor^2)", bound.subs(Fnor2, F_nor**2).subs(rho, rho_) - F_nat**2))
    return tuple(parts)


@_step("FedNMap: F_nor(z) lies in the subdifferential of psi at prox(z)")
def fednmap_nor_in_subdifferential(bound: sp.Expr = Fnor2) -> tuple[Part, ...]:
    """v = (z - prox(z))/gamma is in d phi(prox(z)) (Fermat's rule for the prox subproblem); checked for phi = |.|
    (soft thresholding, three cases) and phi = -rho y^2/2; then F_nor = grad f(x) + v is in d psi(x), so
    dist(0, d psi(x))^2 <= ``bound`` (||F_nor||^2), with equality where d psi(x) is a singleton (phi = -rho y^2/2, f = a x^2/2)."""
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
    a = sp.Symbol("a_q", positive=True)
    F_nor = a * x + (zz - x) / gamma
    dist2 = (a * x - rho_ * x) ** 2  # d psi(x) = {psi'(x)} = {a x - rho x}
    parts.append(_nonneg("dist(0, d psi(x))^2 <= bound at ||F_nor||^2 = F_nor^2", bound.subs(Fnor2, F_nor**2) - dist2))
    parts.append(_zero("... with equality (the bound is attained)", bound.subs(Fnor2, F_nor**2) - dist2))
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
def fednmap_compact_form(n_clients: int = 2, local_steps: int = 2, rounds: int = 3,
                         z_next: sp.Expr | None = None) -> tuple[Part, ...]:
    """y_i = gbar_i + v + c_i; sum_i c_i = 0; c_{i,t} = gbar_{t-1} - gbar_{i,t-1}; ybar = gbar + v;
    z_{t+1} = ``z_next`` = z_t - eta_hat (gbar_t + v_t) with eta_hat = eta_s eta_a Q; and the tracking identity of section 2.1."""
    zt, gbt, vt = sp.Symbol("z_t"), sp.Symbol("gbar_t"), sp.Symbol("v_t")
    z_next = zt - eta_hat * (gbt + vt) if z_next is None else z_next
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
        parts.append(_zero(f"z_{t + 1} = z_t - eta_hat (gbar + v)",
                           z[t + 1] - z_next.subs({zt: z[t], eta_hat: eta_hat_, gbt: gbar[t], vt: v})))
        if t + 1 < rounds:
            v1 = (z[t + 1] - x[t + 1]) / gam
            for i in range(N):
                track = sum(y[t]) / N + (gbar_i[t + 1][i] + v1) - (gbar_i[t][i] + v)
                parts.append(_zero(f"tracking identity, client {i}, round {t + 1}", y[t + 1][i] - track))
    return tuple(parts)


@_step("FedNMap, fixed point: with c_i = grad f(x*) - grad f_i(x*) and F_nor(z*) = 0 the local steps do not move")
def fednmap_fixed_point(n_clients: int = 3, correction: sp.Expr | None = None) -> tuple[Part, ...]:
    """Local direction g_i(x*) + v* + c_i with ``correction`` c_i = grad f(x*) - grad f_i(x*) (in the symbols gf, gf_i):
    grad f_i(x*) + v* + grad f(x*) - grad f_i(x*) = F_nor(z*) = 0 (exact gradients), for every client of a random-free
    symbolic instance with n_clients clients."""
    gf_s, gfi_s = sp.Symbol("gf", real=True), sp.Symbol("gf_i", real=True)
    correction = gf_s - gfi_s if correction is None else correction
    gi = [sp.Symbol(f"gf_{i}", real=True) for i in range(n_clients)]
    v_star = -sum(gi) / n_clients  # F_nor(z*) = grad f(x*) + v* = 0
    gf = sum(gi) / n_clients
    return tuple(_zero(f"client {i} direction", gi[i] + v_star + correction.subs({gf_s: gf, gfi_s: gi[i]})) for i in range(n_clients))


@_step("FedNMap Lyapunov reconstruction: PL sandwich and per-round contraction")
def fednmap_lyapunov_contraction(descent_den: sp.Expr = 9, round_factor: sp.Expr = fn.lyapunov_round_factor) -> tuple[Part, ...]:
    """PL + F_nor in d psi(prox z): psi - psi* <= ||F_nor||^2/(2 mu), so the merit part M_t = L_t - C_c corr_err is
    <= (1 + gamma mu C_0)/(2 mu) ||F_nor||^2. If one round decreases L_t (C_c > 0 included) as
    L_{t+1} <= L_t - (eta_hat/9)||F_nor||^2 - (1 - q) C_c corr_err (the per-round descent the reconstruction needs: the merit
    by eta_hat/9 ||F_nor||^2, the correction error by the factor q), then L_{t+1} <= q L_t with ``round_factor`` q =
    1 - 2 eta_hat mu/(9 (1 + gamma mu C_0)), the largest contraction that descent allows (equality at the PL extreme)."""
    w = _slack("w_pl")
    F2 = sp.Symbol("F2", nonnegative=True)  # ||F_nor(z_t)||^2
    psi_at = F2 / (2 * mu) - w  # PL: psi - psi* <= dist^2/(2 mu) <= ||F_nor||^2/(2 mu)
    merit_at = fn.lyapunov_merit.subs({psi_gap: psi_at, Fnor2: F2})
    parts = [_nonneg("merit <= PL upper", fn.lyapunov_merit_pl_upper.subs(Fnor2, F2) - merit_at)]
    parts.append(_zero("lyapunov = merit + C_c corr_err", fn.lyapunov - fn.lyapunov_merit - C_c * corr_err))
    q = round_factor
    L_now = fn.lyapunov.subs({psi_gap: psi_at, Fnor2: F2})
    L_next_max = L_now - eta_hat / descent_den * F2 - (1 - q) * C_c * corr_err
    e, _ = _unit("s_eh")  # 2 eta_hat mu/(9 (1 + gamma mu C_0)) <= 1 (the contraction factor stays in [0, 1))
    admissible = {eta_hat: e * 9 * (1 + gamma * mu * C_0) / (2 * mu)}
    parts.append(_nonneg("q L_t >= L_t - (eta_hat/9)||F_nor||^2 - (1 - q) C_c corr_err", (q * L_now - L_next_max).subs(admissible)))
    parts.append(_zero("equality at the PL extreme (w = 0, no slack): q is the largest factor", (q * L_now - L_next_max).subs(w, 0)))
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


@_step("FedNMap PL complexity as Theorem 8's bound gives it: each term <= eps/3, constants 21600 and 36300 from 36 and 12100")
def fednmap_pl_complexity_derived(
    complexity: sp.Expr = fn.theorem8_complexity_derived,
    eta_hat_for_variance: sp.Expr = fn.theorem8_eta_hat_for_variance,
    eta_a_for_drift: sp.Expr = fn.theorem8_eta_a_for_drift,
    rounds_for_transient: sp.Expr = fn.theorem8_rounds_for_transient,
) -> tuple[Part, ...]:
    """Theorem 8's three terms, each set to eps/3 at the step the claim names:
    the variance term 36 sigma^2/(m n mu Q) at m = m_max(eta_hat) >= M/2 (M = window_real) equals eps/3 at ``eta_hat_for_variance``
    (72 * 100 * 3 = 21600), and is smaller for smaller eta_hat; the drift term 12100 eta_a^2 Q L^2 sigma^2/(mu (1-gamma rho)^2) equals
    eps/3 at ``eta_a_for_drift`` (12100 * 3 = 36300); the transient exp(-(2 eta_hat mu/(9(1 + gamma mu C_0))) T) E[L_0] equals eps/3 at
    T = ``rounds_for_transient``. With eta_hat the smaller of the variance step and the m = 1 cap (eta_s free, so the drift costs no
    rounds), the rounds are ``complexity``."""
    M = fn.window_real
    variance_at_half_window = fn.theorem8_variance.subs(m, M / 2)  # m_max = floor(M) >= M/2
    parts = [_zero("variance term (m = M/2) = eps/3 at eta_hat_for_variance",
                   variance_at_half_window.subs(eta_hat, eta_hat_for_variance) - epsilon / 3)]
    parts.append(_nonneg("... and increasing in eta_hat (so smaller steps keep it below eps/3)", sp.diff(variance_at_half_window, eta_hat)
                         .subs(rho, _unit_open("s_gr")[0] / gamma)))
    parts.append(_zero("drift term = eps/3 at eta_a_for_drift", fn.theorem8_drift.subs(eta_a, eta_a_for_drift) - epsilon / 3))
    parts.append(_zero("transient = eps/3 at T = rounds_for_transient",
                       sp.simplify(fn.theorem8_transient.subs(T, rounds_for_transient) - epsilon / 3)))
    step = 1 / sp.Max(1 / eta_hat_for_variance, 1 / fn.eta_hat_max_window1)  # min of the two caps
    parts.append(_zero("complexity = rounds_for_transient at eta_hat = min(variance step, m = 1 cap)",
                       complexity - rounds_for_transient.subs(eta_hat, step)))
    return tuple(parts)


@_step("FedNMap PL complexity: the printed second term's eps and Q powers are reproduced with eta_s = Q^(-1/2); its mu and "
       "(L + rho + mu) dependence is not")
def fednmap_pl_complexity(drift_term: sp.Expr = fn.theorem8_complexity_drift_term_Q_half) -> tuple[Part, ...]:
    """With m = m_max(eta_hat) and eta_s free, the bound needs T of order (1 + gamma mu C_0)/mu * max(S sigma^2/(n Q mu eps), S)
    log(1/eps) (eps powers -1 and 0; no eps^(-1/2) term is needed). With eta_s = Q^(-1/2) (admissible: claim
    fednmap.theorem5.eta_s_free) the drift term forces eta_hat = eta_a sqrt(Q) <= (1 - gamma rho) sqrt(eps mu/(36300 L^2 sigma^2)),
    and the rounds ``drift_term`` are proportional to sqrt(L^2 sigma^2/(eps mu^3)): eps^(-1/2) and Q-free like the printed
    sqrt(L^2 sigma^2/(eps mu (L + rho + mu)^2)); they differ in mu and (L + rho + mu) only, by the factor (L + rho + mu)/mu >= 1."""
    parts = []
    maxes = [a for a in sp.preorder_traversal(fn.theorem8_complexity_derived) if isinstance(a, sp.Max)]
    by_power = {_exponent(b, epsilon): b for b in maxes[0].args}
    parts.append(_true("eta_s free: eps powers {-1, 0}", sorted(by_power) == [-1, 0], sp.Tuple(*by_power)))
    variance_branch = by_power.get(-1, sp.S.One)
    parts.append(_zero("the eps^-1 branch scales as 1/n (linear speedup)", _exponent(variance_branch, n) + 1))
    parts.append(_zero("the eps^-1 branch scales as 1/Q (linear speedup)", _exponent(variance_branch, Q) + 1))
    parts.append(_zero("eta_s = Q^(-1/2) gives eta_hat = eta_a sqrt(Q)",
                       fn.eta_hat_definition.subs(eta_s, 1 / sp.sqrt(Q)) - eta_a * sp.sqrt(Q)))
    parts.append(_zero("... and the drift term equals eps/3 at eta_a = eta_hat_for_drift/sqrt(Q)",
                       fn.theorem8_drift.subs(eta_a, fn.theorem8_eta_hat_for_drift_Q_half / sp.sqrt(Q)) - epsilon / 3))
    parts.append(_zero("eta_s = 1 (for comparison): the drift term equals eps/3 at eta_a = eta_hat_for_drift_eta_s1/Q",
                       fn.theorem8_drift.subs(eta_a, fn.theorem8_eta_hat_for_drift_eta_s1 / Q) - epsilon / 3))
    parts.append(_zero("the rounds are the transient's at that eta_hat", drift_term - fn.theorem8_rounds_for_transient.subs(
        eta_hat, fn.theorem8_eta_hat_for_drift_Q_half)))
    derivable = sp.sqrt(L**2 * sigma2 / (epsilon * mu**3))
    ratio = sp.simplify(drift_term / sp.log(3 * EL_0 / epsilon) / derivable)
    parts.append(_zero("eta_s = Q^(-1/2): drift rounds = const * (1 + gamma mu C_0)/(1 - gamma rho) * sqrt(L^2 sigma^2/(eps mu^3)) * log",
                       ratio - sp.Rational(9, 2) * sp.sqrt(36300) * (1 + gamma * mu * C_0) / (1 - gamma * rho)))
    for v in (epsilon, Q, L, sigma2):  # (mu: through the ratio above, up to the factor (1 + gamma mu C_0))
        parts.append(_zero(f"... so its power of {v} is that of sqrt(L^2 sigma^2/(eps mu^3))",
                           _exponent(drift_term / sp.log(3 * EL_0 / epsilon), v) - _exponent(derivable, v)))
    printed_second = sp.sqrt(L**2 * sigma2 / (epsilon * mu * (L + rho + mu) ** 2))
    parts.append(_zero("printed second term is the printed complexity's second summand", fn.theorem8_complexity - (
        (L + rho) * sigma2 / (n * Q * epsilon * mu**2) + printed_second)))
    for v in (epsilon, Q, sigma2):
        parts.append(_zero(f"printed and derivable agree in the power of {v}", _exponent(printed_second, v) - _exponent(derivable, v)))
    parts.append(_zero("they differ by the factor (L + rho + mu)/mu", sp.simplify(derivable / printed_second - (L + rho + mu) / mu)))
    parts.append(_nonneg("... which is >= 1: the printed term is the smaller one", (L + rho + mu) / mu - 1))
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
