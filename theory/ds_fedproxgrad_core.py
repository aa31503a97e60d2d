"""DS FedProxGrad's formulas (arXiv 2512.08671), each written once as sympy.

[A] from the paper (verbatim), [INF] derived in ../shared/papers/fedproxgrad-notes.md (status derived,
each proved by a test).
"""

from __future__ import annotations

import sympy as sp

from theory.symbols import L_F, B, G, G_r, L_f, L_r, R, c, c_gamma, eta, gamma_r, lam, rho_f, sigma2

#: [A] A1(i): L_F = L_f + lambda L_r
L_F_definition = L_f + lam * L_r

#: [A] step-size and inexactness conditions (A4(ii), A4(iv), (10)): parameter <= bound
eta_max_smooth = 1 / (6 * L_F)          # A4(iv)
eta_max_weak = 1 / (2 * rho_f)          # A4(ii)
gamma_r_max = c_gamma * eta             # (10)

#: [A] eq. (16)
C_e = 2 * B**2
K_e2 = G**2 / (2 * B**2) + lam**2 * G_r**2

#: [A] eq. (20): coefficient of ||grad F||^2 before absorption
coefficient20 = -eta + eta / 4 + sp.Rational(3, 2) * L_F * eta**2 + eta * (1 + sp.Rational(3, 2) * L_F * eta) * C_e * gamma_r**2

#: [INF] absorption threshold: coefficient (20) <= -eta/4 once gamma_r <= 1/(sqrt(10) B)
absorption_gamma_max = 1 / (sp.sqrt(10) * B)

#: [A] Phi_r after absorption (r >= r_0)
Phi = sp.Rational(1, 4)

#: [A] eq. (22)
Xi = eta * (1 + sp.Rational(3, 2) * L_F * eta) * C_e * gamma_r**2 * K_e2 + sp.Rational(3, 2) * L_F * eta**2 * sigma2
#: [INF] explicit O(eta^2) bound on Xi_r using eta <= 1/(6 L_F) and gamma_r <= c_gamma eta
Xi_explicit = sp.Rational(5, 4) * c_gamma**2 * (G**2 + 2 * B**2 * lam**2 * G_r**2) * eta**3 + sp.Rational(3, 2) * L_F * sigma2 * eta**2

#: [INF] section 1.6: constant eta and constant gamma (noise-floor form), bound on (1/R) sum E||grad F||^2
def constant_step_bound(Delta_0: sp.Expr, eta_: sp.Expr = eta, gamma_: sp.Expr = gamma_r, R_: sp.Expr = R) -> sp.Expr:
    return 4 * Delta_0 / (eta_ * R_) + 6 * L_F * sigma2 * eta_ + 5 * C_e * K_e2 * gamma_**2


#: [INF] section 1.6: finite horizon eta = c/sqrt(R), gamma = c_gamma eta
def corollary_ii_bound(Delta_0: sp.Expr, R_: sp.Expr = R) -> sp.Expr:
    return 4 * Delta_0 / (c * sp.sqrt(R_)) + 6 * L_F * sigma2 * c / sp.sqrt(R_) + 5 * C_e * K_e2 * c_gamma**2 * c**2 / R_
