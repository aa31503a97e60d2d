"""Teeth: change one constant of a proof step and the step must fail, with admissible values violating it.

Each case perturbs a constant the paper (or our derivation) uses; the perturbed step is not proved, and
fedbounds.theory.core.proofs.counterexample finds admissible values at which the perturbed statement is false.
"""

from __future__ import annotations

import pytest
import sympy as sp
from fedbounds.theory.core import proofs
from fedbounds.theory.core.symbols import B, eta
from fedbounds.theory.ds_fedproxgrad import formulas as ds

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
    ("ds_corollary_ii", {"thirty_six": sp.Rational(18, 5)}, "R >= 3.6 L_F^2 c^2"),
    ("ds_corollary_ii", {"ten": 8}, "R >= 8 B^2 c_gamma^2 c^2"),
    ("ds_eq20", {"printed_coefficient": ds.coefficient20.subs(eta / 4, eta / 5)}, "(20) printed with eta/5"),
    ("ds_eq20", {"printed_Xi": ds.Xi.subs(sp.Rational(3, 2), 1)}, "(22) printed with L_F eta^2 sigma^2"),
    ("ds_eq20", {"three": 2}, "(19) with 2: the pieces no longer give the printed (20)"),
    ("ds_exact_prox_gamma", {"six_fifths": sp.Rational(11, 10)}, "exact prox gamma <= 1.1 L eta"),
    ("ds_r0_power", {"sqrt10": sp.sqrt(8)}, "r_0 with sqrt(8)"),
    ("ds_constant_step_bound", {"six": 5}, "sigma-floor 5 L_F sigma^2 eta"),
    ("ds_constant_step_bound", {"five": 4}, "gamma-floor 4 C_e K_e^2 gamma^2"),
    ("fednmap_one_minus_gamma_rho", {"five": 4}, "gamma <= 1/(4(rho+L)) does not give 4/5"),
    ("fednmap_one_minus_gamma_rho", {"four_fifths": sp.Rational(5, 6)}, "1 - gamma rho >= 5/6"),
    ("fednmap_m_max", {"hundred": 10}, "m_max with 10 instead of 100"),
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
