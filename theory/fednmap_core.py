"""FedNMap's formulas (arXiv 2602.03357), each written once as sympy.

Status of each expression is in its comment and in the claims built from it (``theory.fednmap``):
[V] verbatim, [D] derived, [I] reconstructed (see ../shared/papers/fednmap-reconstruction.md).
"""

from __future__ import annotations

import sympy as sp

from theory.symbols import (
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
)

#: [I, high confidence] effective step (reconstruction note, section 2.4)
eta_hat_definition = eta_s * eta_a * Q

#: sqrt(L^2 + 1/gamma^2), the scale in both step-size conditions of Theorem 5
lipschitz_scale = sp.sqrt(L**2 + 1 / gamma**2)

#: [V] Theorem 5, the three step-size conditions: parameter <= bound
theorem5_gamma_max = 1 / (5 * (rho + L))
theorem5_eta_hat_max = (1 - gamma * rho) / (100 * m * lipschitz_scale)
theorem5_eta_a_max = (1 - gamma * rho) / (100 * Q * sp.sqrt(m * (L**2 + 1 / gamma**2)))

theorem5_conditions: dict[sp.Symbol, sp.Expr] = {
    gamma: theorem5_gamma_max,
    eta_hat: theorem5_eta_hat_max,
    eta_a: theorem5_eta_a_max,
}

#: [V] Theorem 8 bound on E[psi(x_T)] - psi*, with C_0 and E[L_0] unknown (lost with the text)
theorem8_transient = sp.exp(-2 * eta_hat * mu * T / (9 * (1 + gamma * mu * C_0))) * EL_0
theorem8_variance = 36 * sigma2 / (m * n * mu * Q)
theorem8_drift = 12100 * eta_a**2 * Q * L**2 * sigma2 / (mu * (1 - gamma * rho) ** 2)
theorem8_bound = theorem8_transient + theorem8_variance + theorem8_drift
#: [D] what remains as T -> infinity
theorem8_floor = theorem8_variance + theorem8_drift

#: [V] Table 1 / Theorem 5 rate, as an O-expression in T
theorem5_rate = sp.sqrt(sigma2 / (n * Q * T)) + 1 / T
#: [V] Theorem 5 communication complexity (O-expression); Delta_f as printed (see errata)
theorem5_complexity = L * Delta_f * sigma2 / (n * Q * epsilon**4) + L * Delta_f / epsilon**2 + grad0_sq / epsilon**2
#: [V] Theorem 8 / PL communication complexity (O~-expression)
theorem8_complexity = (L + rho) * sigma2 / (n * Q * epsilon * mu**2) + sp.sqrt(
    L**2 * sigma2 / (epsilon * mu * (L + rho + mu) ** 2)
)
#: [V] Table 1 PL rate
theorem8_rate = sigma2 / (n * Q * T) + sigma2 / T**2
