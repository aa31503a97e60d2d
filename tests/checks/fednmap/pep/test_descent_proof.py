"""The deterministic descent at (n, Q) = (2, 1) below Theorem 5's printed step, where the solvers cannot read it
(checks/fednmap/pep/encoding.py, ``descent_proof``; docs/fednmap-reconstruction.md §10)."""

from __future__ import annotations

import pytest
from fedbounds.checks.fednmap.pep.encoding import descent_coefficient, descent_proof, theorem5_steps

ONE = ("CLARABEL",)
RHO = 1 / 11  # the parametric proof's point (fedbounds.checks.fednmap.pep.parametric): gamma = 11/60


def _at(k: float) -> tuple[dict[str, float], float]:
    st = theorem5_steps(1.0, RHO, 1)
    eta_hat = st["eta_s"] * k * st["eta_a"]
    return {"L": 1.0, "rho": RHO, "gamma": st["gamma"], "eta_a": k * st["eta_a"], "eta_s": st["eta_s"], "n": 2, "Q": 1,
            "T": 1, "C_0": 1.0, "C_c": 1.0}, eta_hat


@pytest.mark.parametrize("k", [0.01, 0.001])
def test_the_descent_is_proved_where_the_solvers_read_unbounded(k: float) -> None:
    """At 0.01x and 0.001x the printed step, descent_check's solvers fail or read unbounded; the exact certificate at a
    bound with room proves w d T <= 1/2, i.e. the descent eta_hat/9 holds (d = eta_hat/9 from the theory layer)."""
    args, eta_hat = _at(k)
    out = descent_proof(**args, descent_coef=descent_coefficient(eta_hat), claim=0.5)
    assert out["status"] == "proved" and out["bound"] <= 0.5 + 1e-6
    assert out["min_pivot"] > 1e-3  # conditioned: the pivot does not shrink with eta_hat


@pytest.mark.slow  # 8-10 CPU-s; the printed-step route's false descent (test_printed.py) stays in the default run
def test_a_false_descent_is_not_proved() -> None:
    """Control, changed: the descent coefficient. The worst descent at 0.01x is about 0.8 eta_hat (Clarabel at 0.1x:
    w d T = 0.1389 for d = eta_hat/9), so a claimed descent of eta_hat has w d T about 1.25: a proof of <= 1 must not
    exist, and none is found."""
    args, eta_hat = _at(0.01)
    assert descent_proof(**args, descent_coef=eta_hat, claim=1.0)["status"] == "not proved"
    assert descent_proof(**args, descent_coef=eta_hat / 2, claim=1.0)["status"] == "proved"  # 0.5 eta_hat: room again


def test_descent_check_reports_the_proof_where_its_solvers_read_a_false_unbounded() -> None:
    """At 0.001x the printed step both solvers read ``unbounded`` (a false reading: the descent holds there, the
    proof above). descent_check now tries the proof and reports ``proved`` with its exact bound, so the verdict at
    bound 1 holds instead of reading violated (it read ``unbounded`` / violated before). Clarabel alone reads the same
    ``unbounded`` as both solvers do, and keeps the test cheap (SCS runs to its iteration cap here: 6 s)."""
    from fedbounds.checks.fednmap.pep.encoding import _probe_outcome, descent_check
    from fedbounds.checks.pep.solve import proof_decides, verdict
    from fedbounds.checks.verdicts.threshold import MEETS

    args, eta_hat = _at(0.001)
    cert = descent_check(**args, descent_coef=descent_coefficient(eta_hat), solvers=ONE)
    assert cert.status == "proved" and not cert.unbounded and not cert.certified  # no solver's optimum behind it
    assert cert.proof["solver_free"] and cert.proof["solvers_read"] == "unbounded"
    assert cert.value <= 0.5 + 1e-6 and proof_decides(cert, 1.0)
    assert verdict(cert, 1.0) == "holds"
    assert _probe_outcome(cert) == MEETS  # a threshold search counts it (it read "fails" on the false unbounded)
    assert descent_check(**args, descent_coef=descent_coefficient(eta_hat), solvers=ONE, prove_small=False).status == "unbounded"


@pytest.mark.slow  # 6.8 s alone (-n 0, load 1.5, 2026-12-04)
def test_descent_check_never_turns_an_unproved_probe_into_a_failure() -> None:
    """Control, changed: the descent coefficient (eta_hat: false at 0.01x, w d T about 1.25). No proof exists, so
    descent_check returns the solvers' own certificate, unchanged, and it carries no proof."""
    from fedbounds.checks.fednmap.pep.encoding import descent_check

    args, eta_hat = _at(0.01)
    with_proof = descent_check(**args, descent_coef=eta_hat, solvers=ONE)
    without = descent_check(**args, descent_coef=eta_hat, solvers=ONE, prove_small=False)
    assert with_proof.status == without.status != "proved" and with_proof.proof is None
