"""erratum.ds_phi_prefix: the real counterexample (one client, f = L x^2/2, uphill error) in sympy and run by the
algorithm; the old evidence point (gamma_r = 1/2, coefficient (20) = +1/48) refutes the proof, not the lemma."""

from __future__ import annotations

import math

import pytest
import sympy as sp
from fedbounds.checks.ds_fedproxgrad.errata import one_client_counterexample
from fedbounds.theory.core.symbols import gamma_r
from fedbounds.theory.ds_fedproxgrad.errata import DS_PHI_PREFIX
from fedbounds.theory.ds_fedproxgrad.proofs import ds_phi_prefix


def test_claim_is_the_instance_phi_not_the_proofs_coefficient() -> None:
    phi = DS_PHI_PREFIX.conclusion
    assert phi.subs(gamma_r, sp.Rational(4, 5)) == sp.Rational(59, 300)  # the old conclusion gave (5/4) eta (...)
    assert phi.subs(gamma_r, sp.Rational(1, 2)) == sp.Rational(23, 48)  # > 1/4: the old point is no counterexample
    assert sp.simplify(phi.subs(gamma_r, sp.sqrt(33) - 5) - sp.Rational(1, 4)) == 0


def test_proof_step_proves_every_part() -> None:
    r = ds_phi_prefix()
    assert r.parts and all(p.proved for p in r.parts), [p.name for p in r.parts if not p.proved]


@pytest.mark.parametrize(("gamma", "status"), [(0.8, "violated"), (0.76, "violated"), (0.73, "holds"), (0.5, "holds")])
def test_algorithm_run_matches_the_closed_form_and_the_threshold(gamma: float, status: str) -> None:
    v = one_client_counterexample(0, gamma)
    assert v.status == status  # sqrt(33) - 5 = 0.7446 separates 0.73 from 0.76
    assert math.isclose(v.details["Phi_measured"], v.details["Phi_theory"], rel_tol=1e-12)
