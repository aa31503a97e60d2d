"""DS FedProxGrad's formulas (arXiv 2512.08671), each written once as sympy.

[A] from the paper (verbatim), [INF] derived in docs/ds-fedproxgrad-notes.md (status derived,
each proved by a step of :mod:`fedbounds.theory.core.proofs`).
"""

from __future__ import annotations

import sympy as sp
from fedbounds.theory.core.symbols import (
    L_F,
    B,
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

#: [A] A1(i): L_F = L_f + lambda L_r
L_F_definition = L_f + lam * L_r

#: [A] step-size and inexactness conditions (A4(ii), A4(iv), (10)): parameter <= bound
eta_max_smooth = 1 / (6 * L_F)          # A4(iv)
eta_max_weak = 1 / (2 * rho_f)          # A4(ii)
gamma_r_max = c_gamma * eta             # (10)

#: [INF] A4(ii): the local objective h_i = f_i + ||w - x||^2/(2 eta) is (1/eta - rho)-strongly convex (mu_r is never given)
mu_r = 1 / eta - rho_f

#: [A] Lemma 5.1, eq. (11): ||e_f^r||^2 <= gamma_r^2 (G^2 + B^2 ||grad f(x^r)||^2)
lemma5_1_bound = gamma_r**2 * (G**2 + B**2 * gradf2)
#: [A] eq. (13): ||grad f||^2 <= 2 ||grad F||^2 + 2 lambda^2 G_r^2
eq13_bound = 2 * g2 + 2 * lam**2 * G_r**2

#: [A] eq. (16)
C_e = 2 * B**2
K_e2 = G**2 / (2 * B**2) + lam**2 * G_r**2
eq16_bound = C_e * gamma_r**2 * (g2 + K_e2)

#: [A] eq. (20): coefficient of ||grad F||^2 before absorption
coefficient20 = -eta + eta / 4 + sp.Rational(3, 2) * L_F * eta**2 + eta * (1 + sp.Rational(3, 2) * L_F * eta) * C_e * gamma_r**2

#: [INF] absorption threshold: coefficient (20) <= -eta/4 once gamma_r <= 1/(sqrt(10) B), for every eta <= 1/(6 L_F);
#: sufficient, and necessary only at eta = 1/(6 L_F) (below it the exact threshold absorption_gamma_exact is larger)
absorption_gamma_max = 1 / (sp.sqrt(10) * B)
#: [INF] the exact threshold at a given eta: coefficient (20) <= -eta/4 iff gamma_r <= this (needs eta <= 1/(3 L_F));
#: it equals absorption_gamma_max at eta = 1/(6 L_F) and exceeds it for smaller eta
absorption_gamma_exact = sp.sqrt((sp.Rational(1, 2) - sp.Rational(3, 2) * L_F * eta) / ((1 + sp.Rational(3, 2) * L_F * eta) * C_e))

#: [INF] r_0 for eta_r = c/(r+1)^alpha with the worst admissible inexactness gamma_r = c_gamma eta_r:
#: the first round from which c_gamma eta_r <= 1/(sqrt(10) B) (eta_r decreases, so it then holds for all later rounds)
r0_power = sp.Max(0, sp.ceiling((c * c_gamma * sp.sqrt(10) * B) ** (1 / alpha) - 1))

#: [A] Phi_r after absorption (r >= r_0)
Phi = sp.Rational(1, 4)
#: [INF] the Phi_r the proof gives before absorption: -coefficient(20)/eta (>= 1/4 iff gamma_r is absorbed)
Phi_r = sp.Rational(3, 4) - sp.Rational(3, 2) * L_F * eta - (1 + sp.Rational(3, 2) * L_F * eta) * C_e * gamma_r**2

#: [A] eq. (22)
Xi = eta * (1 + sp.Rational(3, 2) * L_F * eta) * C_e * gamma_r**2 * K_e2 + sp.Rational(3, 2) * L_F * eta**2 * sigma2
#: [INF] explicit O(eta^2) bound on Xi_r using eta <= 1/(6 L_F) and gamma_r <= c_gamma eta
Xi_explicit = sp.Rational(5, 4) * c_gamma**2 * (G**2 + 2 * B**2 * lam**2 * G_r**2) * eta**3 + sp.Rational(3, 2) * L_F * sigma2 * eta**2

#: [A] Lemma 5.2, eq. (14): E F(x^{r+1}) - E F(x^r) <= -eta_r Phi_r E||grad F||^2 + Xi_r (Phi_r = 1/4, valid for r >= r_0)
lemma5_2_bound = -eta * Phi * g2 + Xi
#: [INF] what the proof gives in every round, absorbed or not: coefficient (20) times E||grad F||^2 plus Xi_r
descent_unabsorbed_bound = coefficient20 * g2 + Xi

#: [A] Lemma A.1, eq. (27): ||y_i^r - x^r|| <= eta_r (1 + gamma_r) ||grad f_i(x^r)|| (factor of ||grad f_i||)
lemmaA1_factor = eta * (1 + gamma_r)

#: [A] Robbins-Monro region of the power family eta_r = c/(r+1)^alpha (p-series rule)
robbins_monro_power_region = sp.And(alpha > sp.Rational(1, 2), alpha <= 1)
#: [A] Corollary (i) schedule as printed (undefined at r = 0, see the errata) and as corrected
schedule_power_printed = c / r**alpha
schedule_power = c / (r + 1) ** alpha


#: [INF] section 1.6: constant eta and constant gamma (noise-floor form), bound on (1/R) sum E||grad F||^2
def constant_step_bound(Delta_0: sp.Expr, eta_: sp.Expr = eta, gamma_: sp.Expr = gamma_r, R_: sp.Expr = R) -> sp.Expr:
    """(1/R) sum_{r<R} E||grad F(x^r)||^2 <= 4 Delta_0/(eta R) + 6 L_F sigma^2 eta + 5 C_e K_e^2 gamma^2 (notes 1.6).

    Valid when eta <= 1/(6 L_F) and C_e gamma^2 <= 1/5 (every round absorbed).
    """
    return 4 * Delta_0 / (eta_ * R_) + 6 * L_F * sigma2 * eta_ + 5 * C_e * K_e2 * gamma_**2


#: [INF] section 1.6: finite horizon eta = c/sqrt(R), gamma = c_gamma eta
def corollary_ii_bound(Delta_0: sp.Expr, R_: sp.Expr = R) -> sp.Expr:
    """Corollary (ii), eq. (26), with every constant: 4 Delta_0/(c sqrt R) + 6 L_F sigma^2 c/sqrt R + 5 C_e K_e^2 c_gamma^2 c^2/R."""
    return 4 * Delta_0 / (c * sp.sqrt(R_)) + 6 * L_F * sigma2 * c / sp.sqrt(R_) + 5 * C_e * K_e2 * c_gamma**2 * c**2 / R_


#: [INF] Corollary (ii) holds once R >= this: c/sqrt(R) <= 1/(6 L_F) and c_gamma c/sqrt(R) <= 1/(sqrt(10) B)
corollary_ii_horizon_min = sp.Max(36 * L_F**2 * c**2, 10 * B**2 * c_gamma**2 * c**2)

#: [INF] constant-gamma floor: the part of constant_step_bound that no step size removes (5 C_e K_e^2 gamma^2)
constant_gamma_floor = 5 * C_e * K_e2 * gamma_r**2

#: [INF] decaying schedules (notes 1.6): min_{r_0<=r<=R} E||grad F||^2 <= 4 (E F(x^{r_0}) - F* + sum Xi)/sum_{r=r_0}^R eta_r
decaying_bound = 4 * (Delta_r0 + Xi_sum) / sp.Sum(schedule_power, (r, r_0, R))
#: [INF] integral lower bounds on sum_{r=r_0}^R c/(r+1)^alpha: alpha in (1/2, 1) and alpha = 1
decaying_sum_lower = c * ((R + 2) ** (1 - alpha) - (r_0 + 1) ** (1 - alpha)) / (1 - alpha)
decaying_sum_lower_alpha1 = c * sp.log((R + 2) / (r_0 + 1))
#: [INF] integral upper bounds on the same sum: its first term plus the integral from r_0 to R
decaying_sum_upper = c / (r_0 + 1) ** alpha + c * ((R + 1) ** (1 - alpha) - (r_0 + 1) ** (1 - alpha)) / (1 - alpha)
decaying_sum_upper_alpha1 = c / (r_0 + 1) + c * sp.log((R + 1) / (r_0 + 1))

#: [INF] the exact prox satisfies (10) with gamma = L_f eta/(1 - L_f eta) (<= (6/5) L_f eta when L_f eta <= 1/6)
exact_prox_gamma = L_f * eta / (1 - L_f * eta)

#: [INF] tighter (19): if e_f^r is fixed before e^stoch is drawn, E||x^{r+1} - x^r||^2 <= 2 eta^2 (||g||^2 + ||e_f||^2) + eta^2 sigma^2,
#: and the coefficient of ||g||^2 becomes this instead of (20)
coefficient20_tight = -eta + eta / 4 + L_F * eta**2 + eta * (1 + L_F * eta) * C_e * gamma_r**2
Xi_tight = eta * (1 + L_F * eta) * C_e * gamma_r**2 * K_e2 + L_F * eta**2 * sigma2 / 2

#: the proof's bound before (16) is applied: descent lemma + Young (eps = 1/2) + (19), in ||g||^2 and ||e_f||^2
descent_before_16 = (-eta + eta / 4 + sp.Rational(3, 2) * L_F * eta**2) * g2 + (eta + sp.Rational(3, 2) * L_F * eta**2) * ef2 + (
    sp.Rational(3, 2) * L_F * eta**2 * sigma2
)

#: [A] Corollary (ii) schedule: the constant step eta = c/sqrt(R) over a horizon of R rounds
schedule_sqrt_horizon = c / sp.sqrt(R)

#: [INF] the sigma^2 and G^2 coefficients of the printed remainder (22) (C_e K_e^2 = G^2 + 2 B^2 lambda^2 G_r^2):
#: (3/2) L_F eta^2 and eta (1 + 3 L_F eta/2) gamma_r^2; and the sigma^2 coefficient of the tighter (19), L_F eta^2/2
Xi_sigma2_coefficient = sp.diff(Xi, sigma2)
Xi_G2_coefficient = sp.simplify(sp.expand(Xi).coeff(G, 2))
Xi_tight_sigma2_coefficient = sp.diff(Xi_tight, sigma2)
