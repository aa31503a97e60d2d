"""PEP of DS FedProxGrad's Lemma 5.2 (one round, deterministic part): Phi over the class, absorption threshold."""

from __future__ import annotations

import pytest

pytest.importorskip("PEPit")

from fedbounds.checks.ds_fedproxgrad.pep.encoding import (
    largest_absorbed_gamma,
    largest_phi,
    lemma52_margin_pep,
    theory_values,
)
from fedbounds.checks.pep.solve import verdict

L_f, L_r, LAM, B = 1.0, 1.0, 0.5, 1.0


def _eta_max() -> float:
    return theory_values(L_f, L_r, LAM, B, 0.1, 0.0)["eta_max"]


@pytest.mark.parametrize("frac", [1.0, 0.3])
def test_exact_local_steps_give_the_descent_lemma(frac):
    # gamma_r = 0: x+ = x - eta grad F(x), an exact gradient step on the L_F-smooth F; the worst case is the
    # descent lemma's, Phi = 1 - L_F eta / 2 (tight: a quadratic with curvature L_F attains it)
    eta = frac * _eta_max()
    res = largest_phi(L_f, L_r, LAM, B, eta, 0.0)
    L_F = theory_values(L_f, L_r, LAM, B, eta, 0.0)["L_F"]
    assert res.certificate.certified
    assert res.Phi == pytest.approx(1 - L_F * eta / 2, rel=1e-4)


def test_lemma52_phi_holds_at_the_absorption_threshold():
    eta = _eta_max()
    thr = theory_values(L_f, L_r, LAM, B, eta, 0.0)["gamma_absorb"]
    res = largest_phi(L_f, L_r, LAM, B, eta, thr)
    assert res.certificate.certified and res.Phi_paper == 0.25
    assert res.Phi >= res.Phi_paper  # the paper's claim holds over the whole class...
    assert res.Phi == pytest.approx(0.5636, abs=2e-3)  # ...with room to spare (measured)
    # and the margin form agrees: the descent with Phi = 1/4 holds, with Phi = 0.7 it fails
    xi = theory_values(L_f, L_r, LAM, B, eta, thr)["xi"]
    assert verdict(lemma52_margin_pep(L_f, L_r, LAM, B, eta, thr, xi, 0.25), 0.0) == "holds"
    assert verdict(lemma52_margin_pep(L_f, L_r, LAM, B, eta, thr, xi, 0.7), 0.0) == "violated"


def test_inexactness_past_the_threshold_breaks_the_descent():
    # negative control: gamma_r = 1 (about 3.2 times the threshold) leaves no positive Phi at all
    res = largest_phi(L_f, L_r, LAM, B, _eta_max(), 1.0)
    assert res.certificate.certified and res.Phi < 0


def test_without_dissimilarity_the_relative_error_is_unbounded():
    # drop (8): grad f_i can be huge while grad f is small, and (10) then allows a huge error
    res = largest_phi(L_f, L_r, LAM, None, _eta_max(), 0.3)
    assert res.Phi is None or res.Phi == float("-inf")
    assert res.certificate.run("SCS").unbounded


@pytest.mark.slow
def test_absorbed_gamma_is_about_twice_the_printed_threshold():
    g, thr, _ = largest_absorbed_gamma(L_f, L_r, LAM, B, _eta_max(), gamma_max=4.0, tol=1e-2)
    assert g is not None and 1.8 * thr <= g <= 2.2 * thr
