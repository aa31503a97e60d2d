"""DS FedProxGrad Lemma 5.2 (N = 1, lambda = 0 slice), proved over a box of (gamma_r, eta) by a parametric certificate
(fedbounds.checks.ds_fedproxgrad.pep.parametric; docs/parametric-proofs.md), and where the proof meets the erratum's
counterexample."""

from __future__ import annotations

import pytest
import sympy as sp
from fedbounds.checks.ds_fedproxgrad.pep import parametric as P
from fedbounds.checks.pep.parametric import ParametricError, verify
from fedbounds.theory.core.symbols import eta, gamma_r
from fedbounds.theory.ds_fedproxgrad.errata import DS_PHI_PREFIX


def test_multipliers_follow_from_the_worst_case() -> None:
    assert {k: sp.simplify(v - P.MULTIPLIERS[k]) for k, v in P.derive().items()} == {k: 0 for k in P.MULTIPLIERS}


def test_tight_phi_is_proved_over_the_box() -> None:
    proof = verify(P.tight_certificate())
    assert proof.remainder.det() == 0  # attained: the quadratic with the uphill error


def test_lemma_5_2_is_proved_up_to_the_threshold() -> None:
    proof = verify(P.lemma_certificate(), definite=True)
    assert any("leading minor[g,e,h]" in f for f in proof.facts)


def test_widening_the_range_past_the_threshold_fails_at_the_threshold_factor() -> None:
    with pytest.raises(ParametricError, match=r"leading minor\[g,e,h\].*4\*gamma_r - 3 changes sign"):
        verify(P.lemma_certificate(gamma_max=P.THRESHOLD + sp.Rational(1, 1000)), definite=True)


def test_a_larger_phi_fails_to_verify() -> None:
    with pytest.raises(ParametricError, match=r"leading minor\[g,e,h\].*changes sign"):
        verify(P.lemma_certificate(Phi=sp.Rational(1, 4) + sp.Rational(1, 1000)), definite=True)


def test_proof_and_counterexample_meet_at_the_threshold() -> None:
    """The erratum's instance (theory layer) has Phi = 1/4 exactly at sqrt(33) - 5 and eta = 1/(6 L_F), below beyond it."""
    phi = DS_PHI_PREFIX.conclusion
    assert sp.expand(phi.subs(gamma_r, P.THRESHOLD) - sp.Rational(1, 4)) == 0
    assert phi.subs(gamma_r, P.THRESHOLD + sp.Rational(1, 1000)) < sp.Rational(1, 4)
    assert sp.expand(P.phi_star.subs(eta, P.ETA_MAX) - phi) == 0  # the certificate's worst case is that instance


@pytest.mark.slow
def test_the_projects_pep_agrees_with_the_certificates_worst_case() -> None:
    """The PEP of checks.ds_fedproxgrad.pep.encoding (PEPit, two solvers) at N = 1, lambda = 0, gamma_r = 1/2,
    eta = 1/6: its worst Phi is the certificate's Phi* = 23/48 (an independent encoding of the same slice)."""
    from fedbounds.checks.ds_fedproxgrad.pep.encoding import lemma52_pep

    cert = lemma52_pep(1.0, 1.0, 0.0, None, 1 / 6, 0.5, 0.0, N=1)
    assert cert.certified
    expected = P.phi_star.subs({gamma_r: sp.Rational(1, 2), eta: P.ETA_MAX})
    assert expected == sp.Rational(23, 48)
    assert -cert.value / (1 / 6) == pytest.approx(float(expected), rel=1e-5)
