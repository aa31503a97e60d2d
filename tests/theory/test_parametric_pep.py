"""The parametric PEP certificate (proof step ds_pep_descent_parametric): DS Lemma 5.2's class-wide Phi at gamma_r = 0
is 1 - L_F eta/2 for every eta in (0, 1/(6 L_F)]; a larger Phi cannot be certified, and the numeric point certificate
agrees."""

from __future__ import annotations

import pytest
import sympy as sp
from fedbounds.theory.ds_fedproxgrad.proofs import ds_pep_descent_parametric

eta = sp.Symbol("eta")


@pytest.mark.slow  # 33 s at load 5-7 (pytest --durations, 2026-12-04)
def test_parametric_certificate_is_proved() -> None:
    r = ds_pep_descent_parametric()
    assert all(p.proved for p in r.parts), [p.name for p in r.parts if not p.proved]


@pytest.mark.slow  # 33 s at load 5-7 (pytest --durations, 2026-12-04)
def test_a_larger_phi_fails_the_psd_condition() -> None:
    # Phi raised by eta/100 (still < 1 on the interval): the residual is no longer PSD somewhere in (0, 1/9]
    r = ds_pep_descent_parametric(phi=1 - sp.Rational(3, 4) * eta + eta / 100)
    psd = next(p for p in r.parts if p.name.startswith("S(eta) >= 0"))
    assert not psd.proved
