"""FedNMap's per-round descent at (n, Q) = (2, 1), C_0 = C_c = 1, proved over eta_hat in (0, Theorem 5's maximum] by
a parametric certificate (fedbounds.checks.fednmap.pep.parametric; docs/parametric-proofs.md)."""

from __future__ import annotations

import pytest
import sympy as sp
from fedbounds.checks.fednmap.pep import parametric as F
from fedbounds.checks.pep.parametric import ParametricError, verify
from fedbounds.theory.core.evaluate import evaluate
from fedbounds.theory.core.symbols import eta_hat
from fedbounds.theory.fednmap import formulas as fm


def test_the_range_is_theorem_5s_printed_maximum() -> None:
    v = {"L": 1.0, "rho": float(F.RHO), "m": 1}
    assert float(F.GAMMA) == pytest.approx(evaluate(fm.theorem5_gamma_max, v), rel=1e-15)
    assert float(F.ETA_HAT_MAX) == pytest.approx(evaluate(fm.theorem5_eta_hat_max, {**v, "gamma": float(F.GAMMA)}), rel=1e-15)
    assert F.ETA_HAT_MAX == sp.Rational(649, 366000)
    assert sp.simplify(F.DESCENT - fm.lyapunov_descent_per_round.subs(fm.Fnor2, 1)) == 0


def test_descent_is_proved_over_the_printed_range() -> None:
    proof = verify(F.certificate(), F.KERNEL)
    assert sum("leading minor" in f for f in proof.facts) == 4


def test_a_descent_of_nine_tenths_eta_hat_fails_to_verify() -> None:
    """The PEP's worst descent at the printed maximum is about 0.814 eta_hat: 9/10 is false there, and the certificate
    fails at its 2 x 2 leading minor."""
    with pytest.raises(ParametricError, match=r"leading minor\[u,g20\].*negative"):
        verify(F.certificate(descent=sp.Rational(9, 10) * eta_hat), F.KERNEL)


def test_a_wrong_kernel_is_refused() -> None:
    with pytest.raises(ParametricError, match="S w != 0"):
        verify(F.certificate(), ((1, 0, 0, 0, 0, 0),))
