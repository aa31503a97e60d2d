"""The papers' symbols, defined once. Names follow the papers (design.md, principle 6).

All constants are positive reals unless stated; counts are positive integers.
"""

from __future__ import annotations

import sympy as sp

_pos = {"positive": True, "real": True}
_nonneg = {"nonnegative": True, "real": True}
_int = {"positive": True, "integer": True}

# ---- FedNMap (arXiv 2602.03357) ----
L = sp.Symbol("L", **_pos)                      # smoothness of every f_i (Assumption 2)
rho = sp.Symbol("rho", **_nonneg)               # weak-convexity modulus of phi (Assumption 3)
sigma2 = sp.Symbol("sigma^2", **_nonneg)        # gradient variance (Assumption 1)
sigma = sp.Symbol("sigma", **_nonneg)
mu = sp.Symbol("mu", **_pos)                    # proximal-PL constant (Assumption 4)
n = sp.Symbol("n", **_int)                      # clients
Q = sp.Symbol("Q", **_int)                      # local steps
T = sp.Symbol("T", **_int)                      # communication rounds
m = sp.Symbol("m", **_int)                      # multistep window (analysis only)
gamma = sp.Symbol("gamma", **_pos)              # prox / normal-map parameter
eta_a = sp.Symbol("eta_a", **_pos)              # client step
eta_s = sp.Symbol("eta_s", **_pos)              # server step
eta_hat = sp.Symbol("etahat", **_pos)           # effective step eta_s * eta_a * Q
C_0 = sp.Symbol("C_0", **_nonneg)               # Lyapunov constant, lost with the text
EL_0 = sp.Symbol("E[L_0]", **_nonneg)           # E[Lyapunov function at t = 0], lost with the text
epsilon = sp.Symbol("epsilon", **_pos)          # target accuracy
Delta_f = sp.Symbol("Delta_f", **_nonneg)       # f(x_0) - f^* (sic; see the errata)
grad0_sq = sp.Symbol("G_0^2", **_nonneg)        # (1/n) sum_i ||grad f_i(x_0)||^2
zeta2 = sp.Symbol("zeta^2", **_nonneg)          # heterogeneity (Table 1)

# ---- DS FedProxGrad (arXiv 2512.08671) ----
L_f = sp.Symbol("L_f", **_pos)                  # smoothness of each f_i (A1(i))
L_r = sp.Symbol("L_r", **_nonneg)               # smoothness of r (A1(i))
lam = sp.Symbol("lambda", **_nonneg)            # fairness weight
L_F = sp.Symbol("L_F", **_pos)                  # smoothness of F = f + lambda r
rho_f = sp.Symbol("rho_f", **_nonneg)           # weak convexity of f_i (A1(ii))
G = sp.Symbol("G", **_pos)                      # dissimilarity (8)
B = sp.Symbol("B", **_pos)                      # dissimilarity (8)
G_r = sp.Symbol("G_r", **_nonneg)               # ||grad r|| <= G_r (A3)
eta = sp.Symbol("eta", **_pos)                  # step size eta_r at round r
gamma_r = sp.Symbol("gamma_r", **_nonneg)       # inexactness at round r (10)
c_gamma = sp.Symbol("c_gamma", **_nonneg)       # gamma_r <= c_gamma eta_r (10)
c = sp.Symbol("c", **_pos)                      # schedule constant, eta_r = c/(r+1)^alpha or c/sqrt(R)
alpha = sp.Symbol("alpha", **_pos)              # schedule exponent
r = sp.Symbol("r", nonnegative=True, integer=True)  # round index
R = sp.Symbol("R", **_int)                      # horizon
Delta_0 = sp.Symbol("Delta_0", **_nonneg)       # F(x^0) - F*
g2 = sp.Symbol("||g||^2", **_nonneg)            # ||grad F(x^r)||^2
