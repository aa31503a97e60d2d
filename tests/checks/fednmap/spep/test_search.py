"""The searched Lyapunov function (checks/fednmap/spep/search.py) and Theorem 8's existence verdicts at the printed
steps (checks/fednmap/spep/existence.py); docs/fednmap-reconstruction.md §10.9."""

from __future__ import annotations

import pytest
from fedbounds.checks.fednmap.spep.constants import MU, RHO, L, point_steps
from fedbounds.checks.fednmap.spep.encoding import noise_coefficient
from fedbounds.checks.fednmap.spep.search import build_search_spep, searched_noise


def _solved(n: int, Q: int, k: float, tau: float, family: str = "merit") -> tuple[float, dict[str, float], dict[str, float]]:
    p = point_steps(n, Q, k)
    pep, named = build_search_spep(L, RHO, p["gamma"], p["eta_a"], p["eta_s"], n, Q, tau, MU, family)()
    value = pep.solve(wrapper="cvxpy", solver="CLARABEL", verbose=0)
    # the rows are scaled by 1/eta_hat: the weights p_j of the Lyapunov function are the duals times that
    return value, {k: row.eval_dual() / p["eta_hat"] for k, row in named["rows"].items()}, p


def test_the_search_optimum_is_the_fixed_shape_at_its_weights() -> None:
    """Lagrange duality, both ways: the weights (p, alpha) the search returns, put into the fixed reconstructed shape
    (C_0 = 2p/gamma, C_c = alpha) with its descent d = r (1 + gamma mu C_0)/(2 mu) and d_c = r, give the same K as the
    search (n = 2, Q = 1, 16x printed steps, r = 0.15 eta_hat). A wrong sign of a family row, a missing (1 - r), a PL
    row with a multiplier other than r, or a row scale not undone, each breaks the equality."""
    tau = 0.15  # near the family's largest rate (between 0.15 and 0.18 here), where the deterministic part binds
    K, w, p = _solved(2, 1, 16.0, tau)
    r = tau * p["eta_hat"]
    C_0 = 2 * w["Fnor2"] / p["gamma"]
    fixed = noise_coefficient(L, RHO, p["gamma"], p["eta_a"], p["eta_s"], 2, 1, C_0, max(w["corr"], 0.0),
                              r * (1 + p["gamma"] * MU * C_0) / (2 * MU), r, solvers=("CLARABEL",))
    assert fixed.certified
    assert fixed.value == pytest.approx(K, rel=1e-4)


def test_the_search_beats_the_chosen_shape() -> None:
    """At Theorem 8's rate with C_0 = 1 the searched K is at most the chosen shape's (C_0 = 1, C_c = 1e-3, the
    committed grid's verdict point), and strictly below it: the chosen shape is one member of the family, not its best
    (measured 0.000849 against 0.00162 at n = 2, Q = 1, 16x printed)."""
    from fedbounds.checks.fednmap.pep.encoding import theorem8_exponent
    from fedbounds.checks.fednmap.spep.constants import round_noise

    p = point_steps(2, 1, 16.0)
    tau = theorem8_exponent(p["eta_hat"], MU, p["gamma"], 1.0) / p["eta_hat"]
    found = searched_noise(L, RHO, p["gamma"], p["eta_a"], p["eta_s"], 2, 1, tau, MU, symmetric=True)
    chosen = round_noise(2, 1, 1.0, 1e-3, symmetric=True)
    assert found.certified and chosen.certified
    assert found.value < 0.6 * chosen.value


def test_a_rate_beyond_the_family_is_unbounded_and_the_wide_family_contains_merit() -> None:
    """Negative control on the rate: at tau = 1 (r = eta_hat, far above 2 mu/9) no member contracts, both solvers
    unbounded; at tau = 0.02 the wider family's K is at most the merit family's (it contains it)."""
    p = point_steps(1, 1, 16.0)
    far = searched_noise(L, RHO, p["gamma"], p["eta_a"], p["eta_s"], 1, 1, 1.0, MU)
    assert far.unbounded
    merit, _, _ = _solved(1, 1, 16.0, 0.02)
    wide, w, _ = _solved(1, 1, 16.0, 0.02, "wide")
    assert wide <= merit * (1 + 1e-6)
    assert set(w) == {"Fnor2", "grad2", "v2", "gminusv2"}  # n = 1: no correction row


def test_printed_steps_are_proved_from_clarabel() -> None:
    """k = 1 (Theorem 5's printed steps), n = 2, Q = 1, the theorem's rate at C_0 = 0: SCS is inaccurate there, so
    the verdict rests on the stored exact certificate built from Clarabel's multipliers; re-verified here, its bound
    within 1e-6 relative of Clarabel's value and its floor far inside the printed one."""
    from fedbounds.checks.fednmap.spep.existence import printed_floor, rate, solve, steps

    r = rate(1, 1, 0.1, 0.0)
    rec = solve(2, 1, r / steps(1)["eta_hat"])
    assert rec["status"] == "proved", rec
    assert rec["proof"]["bound"] == pytest.approx(rec["values"]["CLARABEL"], rel=2e-3)
    assert rec["proof"]["min_pivot"] > 0
    assert rec["K"] / r < 0.01 * printed_floor(2, 1, 1, 0.1)


def test_existence_verdict_rests_on_the_rebuilt_pep() -> None:
    """The check re-verifies a committed proved row against the PEP it rebuilds (0.3 s): the (2, 1, 1, 0.1) row is
    proved with its floor ratio far below 1. Negative control (changed: the row's tau, 1% up): the rebuilt PEP is
    another problem, no certificate file is its, and the row is ``unknown``, never ``holds``."""
    from fedbounds.checks.fednmap.spep.existence_check import _reverify
    from fedbounds.theory.fednmap.theorem8_c0 import table

    row = next(r for r in table()["rows"] if (r["n"], r["Q"], r["m"], r["rho"]) == (2, 1, 1, 0.1))
    ev, ratio, det = _reverify(row)
    assert ev == "proved" and ratio is not None and ratio < 0.01, det
    moved = {**row, "probes": [{**p, "tau": p["tau"] * 1.01} for p in row["probes"]]}
    ev2, ratio2, _ = _reverify(moved)
    assert ev2 == "unknown" and ratio2 is None

