"""Named evaluations from a Gram matrix over a PEP's exact rows (checks/pep/precondition.py, named_evaluations): the
leaves are mapped back to PEPit's, so a solve of the exact rows gives the same worst case as PEPit's own solve."""

from __future__ import annotations

import numpy as np
import pytest
from fedbounds.checks.pep.certificate import problem_of
from fedbounds.checks.pep.precondition import _scaling, named_evaluations, row_violation, solve_problem, truncate


def _gd_build():
    """One gradient step 1/L on an L-smooth convex f, ||x0 - x*|| <= 1: worst f(x1) - f* = L/6 (Drori and Teboulle
    2014, L/(4N + 2) at N = 1), attained with ||x0 - x*|| = 1."""
    from PEPit import PEP
    from PEPit.functions import SmoothConvexFunction

    pep = PEP()
    f = pep.declare_function(SmoothConvexFunction, L=1.0)
    xs = f.stationary_point()
    x0 = pep.set_initial_point()
    pep.set_initial_condition((x0 - xs) ** 2 <= 1)
    x1 = x0 - f.gradient(x0)
    pep.set_performance_metric(f(x1) - f(xs))
    return pep, {"x0": x0, "x1": x1, "xs": xs, "gap": f(x1) - f(xs), "dist2": (x0 - xs) ** 2, "f": f}


@pytest.fixture(scope="module")
def solved():
    pb = problem_of(_gd_build)
    run = solve_problem(pb, "CLARABEL")
    assert run.optimal
    return pb, run


def test_named_evaluations_reproduce_the_worst_case(solved) -> None:
    pb, run = solved
    ev, report = named_evaluations(_gd_build, *run.gram, pb=pb)
    # the known worst case, not the solver's number read back: gap = 1/6 at distance 1
    assert ev["gap"] == pytest.approx(1 / 6, abs=1e-7) and ev["dist2"] == pytest.approx(1.0, abs=1e-7)
    # the Points agree with the Expressions built from them, through PEPit's own decompositions
    assert float(np.sum((ev["x0"] - ev["xs"]) ** 2)) == pytest.approx(ev["dist2"], abs=1e-9)
    assert report["row_mismatch"] < 1e-8 and report["clipped"] < 1e-8  # the solver's accuracy
    # the function's triplets interpolate: x1 = x0 - grad f(x0)
    (xa, ga, _), *_ = [t for t in ev["f"] if np.allclose(t[0], ev["x0"])]
    assert np.allclose(ev["x1"], xa - ga, atol=1e-9)


def test_a_wrong_leaf_order_is_seen_by_the_row_mismatch(solved, monkeypatch) -> None:
    """Control, changed: the leaf order, two points swapped after problem_of's order is read. The factored instance
    then no longer gives the rows their values on (G, F): the mismatch is of the order of the rows, not of the clip."""
    from fedbounds.checks.pep import precondition as named

    pb, run = solved
    real = named.leaf_order

    def swapped(pep):
        pts, vals = real(pep)
        a, b = sorted(pts, key=pts.__getitem__)[:2]
        return {**pts, a: pts[b], b: pts[a]}, vals

    monkeypatch.setattr(named, "leaf_order", swapped)
    _, report = named_evaluations(_gd_build, *run.gram, pb=pb)
    assert report["row_mismatch"] > 1e-2  # (x0 and x* swapped leave this PEP's gap and distance as they were)


def test_the_rescaled_gram_is_not_the_worst_case(solved) -> None:
    """Control, changed: the rescaling of solve_problem's basis left in (G' = G / d d', F' = F / f). Its evaluations
    are not the worst case: the gap is not 1/6 at distance 1."""
    pb, run = solved
    d, f = _scaling(run)
    assert not (np.allclose(d, 1.0) and np.allclose(f, 1.0))
    ev, _ = named_evaluations(_gd_build, run.gram[0] / np.outer(d, d), run.gram[1] / f, pb=pb)
    assert abs(ev["gap"] - 1 / 6) > 1e-3 or abs(ev["dist2"] - 1.0) > 1e-3


def test_truncation_keeps_the_rank_and_reports_its_cost(solved) -> None:
    pb, run = solved
    G, F = run.gram
    Gt, rank, dropped = truncate(G, 1e-6)
    assert 1 <= rank < pb.points and dropped < 1e-6
    assert row_violation(pb, Gt, F) < 1e-7
    # a made-up negative eigenvalue is clipped and reported
    w, V = np.linalg.eigh(G)
    _, report = named_evaluations(_gd_build, G - 1e-4 * np.outer(V[:, 0], V[:, 0]), F, pb=pb)
    assert report["clipped"] == pytest.approx(1e-4 - w[0], rel=1e-3)


def test_sizes_must_match_the_rows(solved) -> None:
    pb, run = solved
    with pytest.raises(ValueError, match="Gram matrix of"):
        named_evaluations(_gd_build, np.eye(pb.points + 1), run.gram[1], pb=pb)
