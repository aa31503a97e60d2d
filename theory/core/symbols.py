"""The papers' symbols, defined once. Names follow the papers (design.md, principle 6).

All constants are positive reals unless stated; counts are positive integers.

Every module-level symbol can be looked up by its Python name or by its sympy name through
:data:`BY_NAME` (``fedbounds.theory.core.evaluate.substitute`` uses it), so ``{"sigma2": 1.0}`` and ``{"sigma^2": 1.0}``
mean the same. :data:`LATEX_NAMES` gives the LaTeX of the few names sympy would render badly.
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
zeta = sp.Symbol("zeta", **_nonneg)             # Table 1: ||grad f_i(x) - grad f(x)||^2 <= zeta^2
B_psi = sp.Symbol("B_psi", **_nonneg)           # Table 1: bounded subgradient of psi
B_bi = sp.Symbol("B_BI", **_nonneg)             # Table 1 (Fast-FedDA row): the "B" of bounded iterates; not DS's B

# quantities measured along a FedNMap trajectory (the Lyapunov reconstruction, the F_nat / F_nor relation)
psi_gap = sp.Symbol("psi_gap", **_nonneg)       # psi(x_t) - psi*
Fnor2 = sp.Symbol("||F_nor||^2", **_nonneg)     # ||F_nor^gamma(z_t)||^2
Fnat2 = sp.Symbol("||F_nat||^2", **_nonneg)     # ||F_nat^gamma(prox(z_t))||^2
corr_err = sp.Symbol("corr_err", **_nonneg)     # (1/n) sum_i ||c_{i,t} + grad f_i(x_t) - grad f(x_t)||^2
C_c = sp.Symbol("C_c", **_nonneg)               # weight of the correction error in the Lyapunov function (unknown)
L_t = sp.Symbol("L_t", **_nonneg)               # Lyapunov value at the start of a window

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
gradf2 = sp.Symbol("||grad f||^2", **_nonneg)   # ||grad f(x^r)||^2
ef2 = sp.Symbol("||e_f||^2", **_nonneg)         # ||e_f^r||^2 (aggregated deterministic prox error)
grad_fi_norm = sp.Symbol("||grad f_i||", **_nonneg)  # ||grad f_i(x^r)|| (one client)
r_0 = sp.Symbol("r_0", nonnegative=True, integer=True)  # first round of absorption
Delta_r0 = sp.Symbol("Delta_r0", **_nonneg)     # E F(x^{r_0}) - F*
Xi_sum = sp.Symbol("Xi_sum", **_nonneg)         # sum_{r >= r_0} Xi_r

#: LaTeX for the symbols whose sympy names do not render well.
LATEX_NAMES: dict[sp.Symbol, str] = {
    eta_hat: r"\hat{\eta}",
    C_0: r"\mathcal{C}_0",
    EL_0: r"\mathbb{E}[\mathcal{L}_0]",
    grad0_sq: r"\tfrac{1}{n}\textstyle\sum_{i}\|\nabla f_i(x_0)\|^2",
    B_psi: r"B_{\psi}",
    B_bi: r"B",
    psi_gap: r"\psi(x_t)-\psi^*",
    Fnor2: r"\|\mathrm{F}^{\gamma}_{\rm nor}(z_t)\|^2",
    Fnat2: r"\|\mathrm{F}^{\gamma}_{\rm nat}(\mathrm{prox}_{\gamma\varphi}(z_t))\|^2",
    corr_err: r"\tfrac{1}{n}\textstyle\sum_i\|c_{i,t}+\nabla f_i(x_t)-\nabla f(x_t)\|^2",
    C_c: r"\mathcal{C}_c",
    L_t: r"\mathcal{L}_t",
    g2: r"\|\nabla F(\mathbf{x}^r)\|^2",
    gradf2: r"\|\nabla f(\mathbf{x}^r)\|^2",
    ef2: r"\|\mathbf{e}_f^r\|^2",
    grad_fi_norm: r"\|\nabla f_i(\mathbf{x}^r)\|",
    Delta_r0: r"\left(\mathbb{E}F(\mathbf{x}^{r_0})-F^\star\right)",
    Xi_sum: r"\textstyle\sum_{r\ge r_0}\Xi_r",
}


def _collect() -> dict[str, sp.Symbol]:
    table: dict[str, sp.Symbol] = {}
    for py_name, value in list(globals().items()):
        if isinstance(value, sp.Symbol) and not py_name.startswith("_"):
            table[py_name] = value
            table.setdefault(value.name, value)
    return table


#: Python name or sympy name -> symbol (both spellings are accepted wherever a name is).
BY_NAME: dict[str, sp.Symbol] = _collect()
