"""The quick profile's checks as tests (one per claim id): each must run without error, none may be violated
unless it records an erratum, and every negative control must come out violated (design.md, principle 3).

Each claim runs once per test session (the ``quick_result`` fixture of conftest.py, shared with the other modules
and the other xdist workers). The cases of the heavy claims (tests/conftest.py, HEAVY_CLAIMS) run under ``-m slow``;
``fedbounds check`` runs every claim's quick profile itself."""

from __future__ import annotations

import pytest
from fedbounds.checks.registry import all_checks

SPECS = {s.check_id: s for s in all_checks()}


@pytest.mark.parametrize("check_id", list(SPECS))
def test_quick_check(check_id: str, quick_result) -> None:
    spec = SPECS[check_id]
    res = quick_result(check_id)  # spec.func(CheckContext(profile=QUICK, seed=0)), once per session (conftest.py)
    assert res.error is None
    assert res.verdicts, "a check must return at least one verdict"
    for v in res.verdicts:
        assert v.status in ("holds", "violated", "inconclusive")
        assert v.claim_id == check_id
    passed = [v.instance for v in res.negatives if v.status != "violated"]
    assert not passed, f"negative controls that did not come out violated: {passed}"
    if spec.erratum:
        # an erratum check must demonstrate something: a violated printed claim or a verified correction
        assert any(v.status in ("violated", "holds") for v in res.verdicts)
    else:
        bad = [(v.instance, v.observed, v.bound) for v in res.verdicts if v.status == "violated"]
        assert not bad, f"claim {check_id} violated: {bad}"
    assert spec.accepts(res)


def test_every_family_has_teeth() -> None:
    """The three families exist; that each has a control firing for its stated reason is counted in
    tests/checks/test_families.py (on one quick run, controls per family, with a planted failure)."""
    fams: dict[str, int] = {}
    for s in SPECS.values():
        fams.setdefault(s.family, 0)
    assert {"fednmap", "ds", "erratum"} <= set(fams)
