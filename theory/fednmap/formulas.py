"""FedNMap's formulas (arXiv 2602.03357), each written once as sympy.

Status of each expression is in its comment and in the claims built from it (``fedbounds.theory.fednmap.claims``):
[V] verbatim, [D] derived, [I] reconstructed (see docs/fednmap-reconstruction.md).
"""

from __future__ import annotations

import sympy as sp
from fedbounds.theory.core.symbols import (
    C_0,
    EL_0,
    C_c,
    Delta_f,
    Fnor2,
    L,
    L_t,
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

#: [D] the eta_hat condition solved for the window m: m <= window_real, so the largest admissible window is
#: m_max = floor(window_real) (needs window_real >= 1, i.e. eta_hat <= (1 - gamma rho)/(100 sqrt(L^2 + 1/gamma^2)))
window_real = (1 - gamma * rho) / (100 * eta_hat * lipschitz_scale)
m_max = sp.floor(window_real)
#: [D] the eta_hat bound of Theorem 5 at m = 1 (no window is admissible above it)
eta_hat_max_window1 = theorem5_eta_hat_max.subs(m, 1)

#: [D] at both maxima of Theorem 5, eta_s = eta_hat / (eta_a Q) = 1/sqrt(m): eta_s itself is not constrained
eta_s_at_maxima = sp.simplify(theorem5_eta_hat_max / (Q * theorem5_eta_a_max))

#: [V] Theorem 8 bound on E[psi(x_T)] - psi*, with C_0 and E[L_0] unknown (lost with the text)
theorem8_rate_exponent = 2 * eta_hat * mu / (9 * (1 + gamma * mu * C_0))
theorem8_transient = sp.exp(-theorem8_rate_exponent * T) * EL_0
theorem8_variance = 36 * sigma2 / (m * n * mu * Q)
theorem8_drift = 12100 * eta_a**2 * Q * L**2 * sigma2 / (mu * (1 - gamma * rho) ** 2)
theorem8_bound = theorem8_transient + theorem8_variance + theorem8_drift
#: [D] what remains as T -> infinity
theorem8_floor = theorem8_variance + theorem8_drift
#: [D] each noise term as its printed constant times a unit: theorem8_variance = 36 variance_unit, theorem8_drift =
#: 12100 drift_unit (split off the expressions above, not retyped)
theorem8_constant_36, theorem8_variance_unit = theorem8_variance.as_coeff_Mul()
theorem8_constant_12100, theorem8_drift_unit = theorem8_drift.as_coeff_Mul()
#: a floor some certificate implies (K sigma^2 / r for a Lyapunov function with E V_1 <= (1 - r) V_0 + K sigma^2)
certified_floor_value = sp.Symbol("F_cert", nonnegative=True)
#: the two constants as parameters (printed: theorem8_constant_36, theorem8_constant_12100; a check may plant others)
constant_36, constant_12100 = sp.Symbol("c_36", nonnegative=True), sp.Symbol("c_12100", nonnegative=True)
#: [D] the smallest 36 with which the floor still covers F_cert, the 12100-term (constant c_12100) paying first:
#: (F_cert - 12100-term)/variance_unit, and 0 where the 12100-term alone pays (docs/fednmap-reconstruction.md §10.9)
theorem8_needed_36 = sp.Max(0, (certified_floor_value - constant_12100 * theorem8_drift_unit) / theorem8_variance_unit)
#: [D] the smallest 12100 likewise, the 36-term (constant c_36) paying first
theorem8_needed_12100 = sp.Max(0, (certified_floor_value - constant_36 * theorem8_variance_unit) / theorem8_drift_unit)
#: [D] the floor with the window tied to the step: m = m_max(eta_hat)
theorem8_floor_coupled = theorem8_floor.subs(m, m_max)
#: [D] an O(eta_hat) upper bound on it (floor(M) >= M/2 for M >= 1): the variance part is 7200 eta_hat S sigma^2/((1-gamma rho) n mu Q)
theorem8_floor_coupled_upper = 72 * sigma2 / (window_real * n * mu * Q) + theorem8_drift

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

# ---- [D] what Theorem 8's bound gives for E[psi(x_T)] - psi* <= epsilon (each of its three terms <= epsilon/3) ----
#: rounds needed by the transient term at a given eta_hat
theorem8_rounds_for_transient = 9 * (1 + gamma * mu * C_0) / (2 * eta_hat * mu) * sp.log(3 * EL_0 / epsilon)
#: largest eta_hat for which the variance term with m = m_max(eta_hat) is <= epsilon/3 (uses floor(M) >= M/2)
theorem8_eta_hat_for_variance = (1 - gamma * rho) * n * mu * Q * epsilon / (21600 * lipschitz_scale * sigma2)
#: largest eta_a for which the drift term is <= epsilon/3 (no constraint on T: eta_s is free)
theorem8_eta_a_for_drift = (1 - gamma * rho) * sp.sqrt(epsilon * mu / (36300 * Q * L**2 * sigma2))
#: communication complexity the bound gives (eta_s free): O~((1 + gamma mu C_0)/mu * max(S sigma^2/(n Q mu eps), S))
theorem8_complexity_derived = theorem8_rounds_for_transient.subs(eta_hat, 1) * sp.Max(
    1 / theorem8_eta_hat_for_variance, 1 / eta_hat_max_window1
)
#: the same with eta_s = 1 (eta_a = eta_hat / Q): the drift term then forces eta_hat <= this
theorem8_eta_hat_for_drift_eta_s1 = (1 - gamma * rho) * sp.sqrt(Q * mu * epsilon / 36300) / (L * sp.sqrt(sigma2))
#: the complexity term it gives: proportional to sqrt(L^2 sigma^2/(eps mu^3 Q)), not Q-free
theorem8_complexity_drift_term_eta_s1 = theorem8_rounds_for_transient.subs(eta_hat, theorem8_eta_hat_for_drift_eta_s1)
#: the same with eta_s = Q^(-1/2) (admissible: eta_s is free): eta_hat = eta_a sqrt(Q), and the drift term forces eta_hat <= this
theorem8_eta_hat_for_drift_Q_half = theorem8_eta_a_for_drift * sp.sqrt(Q)
#: the complexity term it gives: proportional to sqrt(L^2 sigma^2/(eps mu^3)), Q-free like the printed second term
theorem8_complexity_drift_term_Q_half = theorem8_rounds_for_transient.subs(eta_hat, theorem8_eta_hat_for_drift_Q_half)

# ---- [D] natural residual / normal map (note, section 3) ----
#: ||F_nat(prox(z))|| <= nat_nor_factor ||F_nor(z)||, i.e. (1 - gamma rho) ||F_nat|| <= gamma ||F_nor||
nat_nor_factor = gamma / (1 - gamma * rho)
#: the same, squared, in the metric symbols: ||F_nat||^2 <= this
nat_nor_sq_bound = nat_nor_factor**2 * Fnor2
#: reverse direction at z = x - gamma grad f(x): ||F_nor(z)|| <= (L + 1/gamma) ||F_nat(x)||
nor_nat_reverse_factor = L + 1 / gamma

# ---- [I] Lyapunov function (note, sections 4 and 5); C_0 and C_c unknown ----
#: L_t = psi(x_t) - psi* + (gamma C_0/2) ||F_nor(z_t)||^2 + C_c (1/n) sum_i ||c_{i,t} + grad f_i(x_t) - grad f(x_t)||^2
lyapunov = psi_gap + gamma * C_0 / 2 * Fnor2 + C_c * corr_err
#: the merit part alone, and its PL upper bound (psi - psi* <= ||F_nor||^2/(2 mu), since F_nor(z) is in d psi(prox z))
lyapunov_merit = psi_gap + gamma * C_0 / 2 * Fnor2
lyapunov_merit_pl_upper = (1 + gamma * mu * C_0) / (2 * mu) * Fnor2
#: per-round descent the reconstruction needs: L_{t+1} <= L_t - (eta_hat/9) ||F_nor(z_t)||^2 + noise
lyapunov_descent_per_round = eta_hat / 9 * Fnor2
#: per-round contraction factor q that produces Theorem 8's exponent: 1 - q = theorem8_rate_exponent
lyapunov_round_factor = 1 - theorem8_rate_exponent
#: per-window (m rounds) factor and noise: L_{t+m} <= window_factor L_t + window_noise
lyapunov_window_factor = 1 - m * theorem8_rate_exponent
lyapunov_window_noise = m * theorem8_rate_exponent * theorem8_floor
#: the right-hand side of the per-window decrease, in the symbol L_t (what the checks compare L_{t+m} with)
lyapunov_window_bound = lyapunov_window_factor * L_t + lyapunov_window_noise
