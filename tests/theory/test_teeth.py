"""Teeth: change one constant of a proof step and the step must fail, with admissible values violating it.

Each case perturbs a constant the paper (or our derivation) uses; the perturbed step is not proved, and
fedbounds.theory.core.proofs.counterexample finds admissible values at which the perturbed statement is false.
"""

from __future__ import annotations

import pytest
import sympy as sp
from fedbounds.theory.core import proofs
from fedbounds.theory.core.symbols import L_F, B, Delta_0, L, R, c, c_gamma, eta, gamma_r, r_0, rho, rho_f, sigma2
from fedbounds.theory.ds_fedproxgrad import formulas as ds
from fedbounds.theory.fednmap import formulas as fn

TEETH = [
    ("ds_eq16", {"C_e": 3 * B**2}, "C_e = 3B^2: (16) no longer an identity"),
    ("ds_eq16_bound", {"C_e": B**2}, "C_e = B^2: (16) no longer an upper bound"),
    ("ds_young", {"quarter": sp.Rational(1, 5)}, "Young with 1/5 instead of 1/4"),
    ("ds_eq21", {"six": 5}, "eta <= 1/(5 L_F) instead of 1/(6 L_F)"),
    ("ds_eq21", {"quarter": sp.Rational(1, 5)}, "(3 L_F/2) eta^2 <= eta/5"),
    ("ds_eq19", {"three": 2}, "||a+b+c||^2 <= 2(...)"),
    ("ds_eq13", {"two": sp.Rational(3, 2)}, "(a+b)^2 <= (3/2)(a^2+b^2)"),
    ("ds_absorption", {"threshold": 1 / (sp.sqrt(8) * B)}, "threshold 1/(sqrt(8) B)"),
    ("ds_absorption", {"six": 5}, "absorption under eta <= 1/(5 L_F)"),
    ("ds_xi_explicit", {"five_quarters": 1}, "1 + 3 L_F eta/2 <= 1"),
    ("ds_corollary_ii", {"horizon_min": sp.Max(sp.Rational(18, 5) * L_F**2 * c**2, 10 * B**2 * c_gamma**2 * c**2)}, "R >= 3.6 L_F^2 c^2"),
    ("ds_corollary_ii", {"horizon_min": sp.Max(36 * L_F**2 * c**2, 8 * B**2 * c_gamma**2 * c**2)}, "R >= 8 B^2 c_gamma^2 c^2"),
    ("ds_eq20", {"printed_coefficient": ds.coefficient20.subs(eta / 4, eta / 5)}, "(20) printed with eta/5"),
    ("ds_eq20", {"printed_Xi": ds.Xi.subs(sp.Rational(3, 2), 1)}, "(22) printed with L_F eta^2 sigma^2"),
    ("ds_eq20", {"three": 2}, "(19) with 2: the pieces no longer give the printed (20)"),
    ("ds_exact_prox_gamma", {"six_fifths": sp.Rational(11, 10)}, "exact prox gamma <= 1.1 L eta"),
    ("ds_r0_power", {"sqrt10": sp.sqrt(8)}, "r_0 with sqrt(8)"),
    ("ds_constant_step_bound", {"bound": ds.constant_step_bound(Delta_0).subs(6 * L_F, 5 * L_F)}, "sigma-floor 5 L_F sigma^2 eta"),
    ("ds_constant_step_bound", {"bound": 4 * Delta_0 / (eta * R) + 6 * L_F * sigma2 * eta + 4 * ds.C_e * ds.K_e2 * gamma_r**2},
     "gamma-floor 4 C_e K_e^2 gamma^2"),
    ("ds_weak_convexity_implied", {"eta_max_weak": 1 / (4 * rho_f)}, "A4(ii) cap 1/(4 rho): no longer 3x A4(iv)"),
    ("ds_decaying_rate", {"sum_lower_alpha1": c * sp.log((R + 2) / (r_0 + 1)) * 2}, "alpha = 1 sum lower bound doubled"),
    ("fednmap_one_minus_gamma_rho", {"gamma_max": 1 / (4 * (rho + L))}, "gamma <= 1/(4(rho+L)) does not give 4/5"),
    ("fednmap_one_minus_gamma_rho", {"four_fifths": sp.Rational(5, 6)}, "1 - gamma rho >= 5/6"),
    ("fednmap_m_max", {"hundred": 10}, "m_max with 10 instead of 100"),
    ("fednmap_pl_complexity_derived", {"eta_hat_for_variance": fn.theorem8_eta_hat_for_variance * 10}, "21600 -> 2160"),
    ("fednmap_pl_complexity_derived", {"eta_a_for_drift": fn.theorem8_eta_a_for_drift / sp.sqrt(10)}, "36300 -> 363000"),
    ("fednmap_lyapunov_contraction", {"round_factor": 1 - fn.theorem8_rate_exponent / 2}, "exponent halved: not the largest"),
    ("fednmap_floor_coupled", {"half": 1}, "floor(M) >= M"),
    ("fednmap_nat_nor_tight", {"factor": sp.S.One}, "||F_nat|| <= gamma ||F_nor|| without (1 - gamma rho)"),
    ("fednmap_lyapunov_contraction", {"descent_den": 10}, "descent eta_hat/10 cannot give exponent 2/9"),
]


@pytest.mark.parametrize(("name", "kwargs", "why"), TEETH, ids=[f"{t[0]}:{t[2]}" for t in TEETH])
def test_perturbed_step_fails(name: str, kwargs: dict, why: str) -> None:
    assert proofs.steps()[name]().proved, f"{name} must hold with the paper's constants"
    result = proofs.steps()[name](**kwargs)
    assert not result.proved, f"{why}: still proved"
    witness = proofs.counterexample(result)
    assert witness is not None, f"{why}: no admissible counterexample found"
