"""The tolerances of a PEP verdict, each side of each threshold (docs/provenance.md §7): an admissible instance is a
violation only beyond its feasibility scale tol_v = min(rel_tol, 1e-6) |bound| + abs_tol; a certified value holds
within tol = rel_tol |bound| + abs_tol; a relaxed PEP is violated only when every solver's value exceeds bound + tol.

No solver: each certificate is a record of two solver runs whose values and primal points are placed around the
threshold under test (rel_tol = 1e-3, abs_tol = 1e-6)."""

from __future__ import annotations

import pytest

pytest.importorskip("PEPit")

from fedbounds.checks.pep.solve import Certificate, SolverRun, pep_verdict, verdict

REL, ABS = 1e-3, 1e-6


def _cert(values: dict[str, float], primal: float | None = None) -> Certificate:
    """Both solvers optimal (certified) with these dual values; ``primal``: an admissible instance's value (CLARABEL's
    feasible primal point), or none."""
    runs = tuple(SolverRun(solver=s, status="optimal", dual=v, primal=primal if s == "CLARABEL" else None,
                           seconds=0.25, primal_violation=0.0 if primal is not None and s == "CLARABEL" else None)
                 for s, v in values.items())
    return Certificate(values=values, statuses={s: "optimal" for s in values}, gaps={}, seconds={}, gram_dim=3,
                       rel_tol=REL, abs_tol=ABS, certified=True, unbounded=False, value=max(values.values()),
                       disagreement=0.0, agree=True, runs=runs)


@pytest.mark.parametrize("bound", [1.0, 1000.0])
def test_an_instance_is_a_violation_only_beyond_its_feasibility_scale(bound: float) -> None:
    tol_v = min(REL, 1e-6) * abs(bound) + ABS  # 2e-6 at bound 1, 1.001e-3 at bound 1000
    inside, outside = bound + 0.75 * tol_v, bound + 1.5 * tol_v
    assert verdict(_cert({"CLARABEL": inside, "SCS": inside}, primal=inside), bound) == "holds"
    assert verdict(_cert({"CLARABEL": outside, "SCS": outside}, primal=outside), bound) == "violated"


def test_a_certified_value_holds_within_tol_and_not_beyond() -> None:
    bound = 2.0
    tol = REL * bound + ABS
    assert verdict(_cert({"CLARABEL": bound + 0.5 * tol, "SCS": bound + 0.5 * tol}), bound) == "holds"
    assert verdict(_cert({"CLARABEL": bound + 1.5 * tol, "SCS": bound + 1.5 * tol}), bound) == "inconclusive"


def test_a_relaxed_pep_is_violated_only_when_every_solver_is_beyond_tol() -> None:
    bound = 2.0
    tol = REL * bound + ABS
    assert verdict(_cert({"CLARABEL": bound + 2 * tol, "SCS": bound + 1.5 * tol}), bound, relaxed=True) == "violated"
    # one solver inside the tolerance: not a violation, and not holds either (the conservative value is above)
    assert verdict(_cert({"CLARABEL": bound + 2 * tol, "SCS": bound + 0.5 * tol}), bound, relaxed=True) == "inconclusive"


def test_the_pep_verdict_reports_worst_over_bound_and_each_solver() -> None:
    v = pep_verdict("x", "x", _cert({"CLARABEL": 0.5, "SCS": 0.5}), 2.0)
    assert v.status == "holds" and v.details["ratio"] == 0.25
    assert v.details["pep"]["solvers"]["SCS"]["value"] == 0.5 and v.details["pep"]["pep_status"] == "certified"
