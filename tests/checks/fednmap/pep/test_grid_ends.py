"""The committed threshold windows of FedNMap's PEP grid, re-probed at their ends (issue 21).

A window end is a claim about one probe: the smallest-C_0 row's ``C_0_low`` and the step row's ``k_high`` were
*decided to fail* by the search solver (Clarabel), never undecided. Re-solving those probes here (a few small SDPs)
checks the committed numbers against the solver, not against the code that wrote them.
"""

from __future__ import annotations

from typing import Any

import pytest
from fedbounds.checks.fednmap.pep.encoding import _probe_outcome, descent_check, theorem5_steps
from fedbounds.checks.fednmap.pep.grid import STEP_CONSTANTS
from fedbounds.checks.verdicts.threshold import FAILS, MEETS
from fedbounds.theory.fednmap import pep_evidence as ev


def _row(table: list[dict[str, Any]], **at: Any) -> dict[str, Any]:
    (r,) = [r for r in table if all(r[k] == v for k, v in at.items())]
    return r


def _c0_probe(r: dict[str, Any], C_0: float) -> str:
    cert = descent_check(r["L"], r["rho"], r["gamma"], r["eta_a"], r["eta_s"], r["n"], r["Q"], r["T"], C_0, r["C_c"],
                         r["descent_coef"], solvers=("CLARABEL",))
    return _probe_outcome(cert)


@pytest.mark.parametrize("n", [1, 2])
def test_smallest_c0_window_ends_reprobe(n: int) -> None:
    """(Q, T, k) = (1, 1, 16), C_c = 1: C_0_low fails and C_0 meets when probed again."""
    r = _row(ev.SMALLEST_C0, rho=0.1, n=n, Q=1, T=1, k=16.0, C_c=1.0)
    assert ev.is_evidence(r) and r["C_0_low"] is not None, r
    assert _c0_probe(r, r["C_0_low"]) == FAILS
    assert _c0_probe(r, r["C_0"]) == MEETS


def test_step_window_upper_end_fails_for_every_pair() -> None:
    """rho = 0.1, n = Q = T = 1: at k_high every (C_0, C_c) of the grid is decided to fail; at k one meets."""
    r = _row(ev.STEPS, rho=0.1, n=1, Q=1, T=1)
    assert ev.is_evidence(r) and r["k_high"] is not None, r
    p = theorem5_steps(r["L"], r["rho"], r["Q"])  # the grid's parameters at k = 1 (pep_grid._step_row)
    assert p["eta_a"] == r["eta_a_printed"] and p["gamma"] == r["gamma"]

    def probe(k: float, C_0: float, C_c: float) -> str:
        cert = descent_check(r["L"], r["rho"], p["gamma"], k * p["eta_a"], p["eta_s"], 1, 1, 1, C_0, C_c,
                             k * p["descent_coef"], solvers=("CLARABEL",))
        return _probe_outcome(cert)

    assert all(probe(r["k_high"], C_0, C_c) == FAILS for C_0, C_c in STEP_CONSTANTS)
    assert probe(r["k"], r["C_0"], r["C_c"]) == MEETS
