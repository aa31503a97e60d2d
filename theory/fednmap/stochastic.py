"""[D] From a certified per-round noise coefficient to Theorem 8's floor (FedNMap, arXiv 2602.03357, Theorem 8).

The stochastic PEP (``fedbounds.checks.fednmap.spep.encoding``) certifies, over the whole class and every admissible noise law,
one round from any correction state:

    E[L_1] <= L_0 - d ||F_nor(z_0)||^2 - d_c C_c corr_err_0 + K sigma^2,          (R)

with L the reconstructed Lyapunov function (docs/fednmap-reconstruction.md §4.2 [I]). Take d = eta_hat/9 (the
reconstructed descent) and d_c = e8, Theorem 8's exponent e8 = 2 eta_hat mu/(9 (1 + gamma mu C_0)). Under proximal PL,
psi - psi* <= ||F_nor||^2/(2 mu), so L_0 <= (1 + gamma mu C_0)/(2 mu) ||F_nor||^2 + C_c corr_err_0, and (R) gives

    E[L_1] <= (1 - e8) L_0 + K sigma^2,   hence   E[psi(x_T)] - psi* <= E[L_T] <= (1 - e8)^T L_0 + K sigma^2 / e8.

The window argument of §5 with windows of m = 1 round (what a T = 1 certificate covers; larger windows need the
noise to add up over m rounds as martingale differences, which one round does not contain) makes the comparison
with Theorem 8's floor at m = 1: the printed floor holds on this shape where

    K sigma^2 / e8 <= 36 sigma^2/(n mu Q) + 12100 eta_a^2 Q L^2 sigma^2/(mu (1 - gamma rho)^2),

i.e. K <= K_8 = e8 (floor at m = 1)/sigma^2 (the per-round allowance; mu cancels but for the factor
1/(1 + gamma mu C_0)). On this shape (a study at constants we chose, docs/fednmap-reconstruction.md §10.8; Theorem
8's own rooms are measured on the searched function, :func:`fedbounds.theory.fednmap.theorem8_c0.needed`) each
printed constant's room is read by charging it the part of K of its shape: the PEP
measures K = K_var + kappa C_c (linear in C_c, checked), K_var of the shape eta_hat^2/(gamma n Q) (the sampling noise
the 36-term pays for) and kappa C_c with kappa ~ (1 - 1/n)/Q (the correction state's noise; with C_c of order
eta_hat eta_a^2 Q^2 L^2 it has the eta_a^2 Q L^2 shape the 12100-term pays for). The *room* of 36 is
e8 (36-term)/K_var, of 12100 it is e8 (12100-term)/(kappa C_c): the factor by which that constant could be divided
with its term still paying for its part. Both rooms >= 1 is sufficient for the floor. This attribution is ours
(a remark, not the paper's proof).
Every expression here is sympy, built from :mod:`fedbounds.theory.fednmap.formulas` (nothing retyped).
"""

from __future__ import annotations

import sympy as sp
from fedbounds.theory.core.symbols import C_c, m, sigma2
from fedbounds.theory.fednmap import formulas as core

__all__ = [
    "K_sigma",
    "K_var",
    "certified_floor",
    "floor_ratio",
    "kappa",
    "room_drift",
    "room_variance",
    "round_noise_allowance",
    "variance_scale",
]

#: the certified per-round noise coefficient K of (R) (a number from the stochastic PEP)
K_sigma = sp.Symbol("K_sigma", nonnegative=True)
#: a factor multiplying one printed noise term (1 = as printed; the control divides by twice the room)
variance_scale = sp.Symbol("s_var", positive=True)
drift_scale = sp.Symbol("s_drift", positive=True)

#: [D] Theorem 8's floor at m = 1, with its two noise terms scaled by s_var and s_drift (1, 1 = as printed)
floor_m1 = (variance_scale * core.theorem8_variance + drift_scale * core.theorem8_drift).subs(m, 1)
#: [D] the per-round noise coefficient Theorem 8's floor allows: K_8 = e8 floor(m = 1)/sigma^2
round_noise_allowance = sp.simplify(core.theorem8_rate_exponent * floor_m1 / sigma2)
#: [D] the floor a certified (R) implies: K sigma^2/e8
certified_floor = K_sigma * sigma2 / core.theorem8_rate_exponent
#: [D] certified floor / printed floor (m = 1): <= 1 means the printed floor holds on the reconstructed shape
floor_ratio = sp.simplify(certified_floor / floor_m1)
#: the two parts of K measured by the PEP, K = K_var + kappa C_c: the part that does not move with C_c (the server
#: step's sampling noise, shape eta_hat^2/(gamma n Q)) and the slope in C_c (the correction state's noise, about
#: (1 - 1/n)/Q): measured, not assumed (two solves at two C_c; the evidence records the linearity)
K_var = sp.Symbol("K_var", nonnegative=True)
kappa = sp.Symbol("kappa", nonnegative=True)
#: [D] the room of 36: the factor by which the 36-term could be divided and still pay for K_var (e8 * term >= K_var)
room_variance = core.theorem8_rate_exponent * (variance_scale * core.theorem8_variance).subs(m, 1) / (K_var * sigma2)
#: [D] the room of 12100: the factor by which the 12100-term could be divided and still pay for kappa C_c
room_drift = core.theorem8_rate_exponent * drift_scale * core.theorem8_drift / (kappa * C_c * sigma2)

PRINTED = {variance_scale: 1, drift_scale: 1}


def _check_algebra() -> None:
    """[D] K <= K_8  <=>  certified floor <= printed floor (m = 1): the allowance is the floor times e8."""
    diff = sp.simplify(round_noise_allowance * sigma2 / core.theorem8_rate_exponent - floor_m1)
    if diff != 0:  # pragma: no cover - a broken formula, caught by the tests
        raise AssertionError(f"allowance and floor disagree: {diff}")


_check_algebra()
