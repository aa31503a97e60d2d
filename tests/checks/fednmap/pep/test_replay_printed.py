"""The worst case at Theorem 5's printed steps with Q = 2, from the continuation solve, replayed through the engine
(checks/fednmap/pep/replay.py: printed_evaluations, replay_printed; docs/fednmap-reconstruction.md §10.5)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from fedbounds.checks.fednmap.pep import family as pep_checks
from fedbounds.checks.fednmap.pep import replay as rp
from fedbounds.checks.fednmap.pep.encoding import theorem5_steps
from fedbounds.checks.fednmap.pep.printed import build_printed
from fedbounds.checks.pep.precondition import _scaling, named_evaluations

POINT = (0.1, 2, 2, 2, 1.0)  # (rho, n, Q, T, k): the quick profile's replay point at the printed steps


@pytest.fixture(scope="module")
def solved() -> rp.PrintedSolve:
    """The continuation solve at the printed steps (16, 8, 4, 2, 1 x), its named evaluations at the numerical rank."""
    return rp.printed_evaluations(*POINT)


def _replay(sol: rp.PrintedSolve, eta_factor: float = 1.0) -> rp.Replay:
    rho, n, Q, T, k = POINT
    st = theorem5_steps(1.0, rho, Q)
    return rp.replay_evaluations(sol.ev, float(sol.run.dual), sol.run.status, 1.0, rho, st["gamma"],
                                 eta_factor * k * st["eta_a"], st["eta_s"], n, Q, T, 1.0, 1.0, budget=sol.budget)


def test_the_printed_worst_case_replays_to_the_pep_value(solved) -> None:
    rep = rp.replay_printed(*POINT, solved=solved)
    # the PEP value is the path's final Clarabel reading, optimal, and SCS in its basis agrees
    assert rep.solver_status == "optimal" and rep.pep_value == pytest.approx(rep.details["scs"], rel=1e-5)
    # the engine's ratio on the realised instance meets it within the check's tolerance
    assert rep.rel_error <= rp.TERM_TOL and rep.exact
    # the scale that makes this a real test: the decrease is a small difference of the terms (eta_hat/9 per round)
    assert 30 < rep.amplification < 200
    # the engine's trajectory is the PEP's: each min_t ||F_nor||^2 and the decrease, on their own scales
    assert np.allclose(rep.details["Fnor2_replay"], rep.details["Fnor2_pep"], rtol=1e-6)
    assert rep.replay_decrease == pytest.approx(rep.pep_decrease, rel=1e-4)
    # what the named evaluations changed: a rank-1 worst case, the rows still met to the solver's accuracy
    named = rep.details["named"]
    assert named["rank"] == 1 and named["truncated"] < 1e-7 and named["row_violation"] < 1e-8
    assert named["row_mismatch"] < 1e-10 and named["clipped"] < 1e-12


def test_steps_off_by_a_thousandth_miss(solved) -> None:
    """Control, changed: the engine's eta_a, x 1.001 (the PEP and its instance unchanged). The ratio moves by about
    1e-3, a hundred times the tolerance: the comparison sees a step 0.1% off the one the PEP solved."""
    good, bad = _replay(solved), _replay(solved, 1.001)
    assert good.rel_error <= rp.TERM_TOL < bad.rel_error
    assert bad.rel_error > 10 * rp.TERM_TOL


def test_the_rescaled_basis_left_in_misses(solved) -> None:
    """Control, changed: the power-of-two rescaling of the last solve left in (G' = G / d d', F' = F / f, the basis the
    solver works in). That is not the worst case: no instance of the class fits its triplets, and the replay misses."""
    d, f = _scaling(solved.run)
    G, F = solved.run.gram
    build = build_printed(*POINT)
    ev, report = named_evaluations(build, G / np.outer(d, d), F / f, rank_tol=rp.RANK_TOL)
    rep = _replay(dataclasses.replace(solved, ev=ev, report=report))
    assert rep.rel_error > 100 * rp.TERM_TOL and not rep.exact
    assert report["row_violation"] > 1.0  # the PEP's own rows say so (measured: 5.5e3; the original basis: 1.8e-9)


def test_the_quick_grid_replays_inside_and_outside(solved, monkeypatch) -> None:
    """The quick profile replays (2, 2, 2) at the printed steps (scope inside) and keeps the 16x point (labelled
    outside); the verdict at k = 1 holds from the continuation solve (the solve reused from the fixture)."""
    assert POINT in pep_checks.GRIDS["quick"]["replay"] and (0.1, 2, 2, 2, 16.0) in pep_checks.GRIDS["quick"]["replay"]
    assert POINT in pep_checks.GRIDS["full"]["replay"]
    monkeypatch.setattr(rp, "printed_evaluations", lambda *a, **k: solved)
    v = pep_checks._replay_verdict(POINT)
    rec = v.details["replay"]
    assert v.status == "holds" and v.bound == rp.TERM_TOL and v.observed == rec["rel_error"]
    assert rec["scope"].startswith("inside") and "outside" not in v.instance
    assert rec["term_error"] == pytest.approx(rec["rel_error"] / rec["amplification"])
    assert v.details["at"]["eta_hat"] == theorem5_steps(1.0, 0.1, 2)["eta_hat"]


@pytest.mark.slow  # 16x replay (the smooth interpolant's QPs) and the first scope_of in a process (theory hypotheses)
def test_the_replay_verdicts_scopes(solved, monkeypatch) -> None:
    from fedbounds.checks.verdicts.scope import INSIDE, scope_of

    monkeypatch.setattr(rp, "printed_evaluations", lambda *a, **k: solved)
    inside = pep_checks._replay_verdict(POINT)
    outside = pep_checks._replay_verdict((0.1, 2, 2, 2, 16.0))
    assert scope_of(pep_checks.CONSTANTS, [inside]).kind == INSIDE
    assert scope_of(pep_checks.CONSTANTS, [outside]).kind != INSIDE
    assert outside.details["replay"]["scope"].startswith("outside") and "outside the printed steps" in outside.instance
    assert outside.status == "holds" and outside.observed <= 1e-5
