"""Every family of checks has a negative control that fires for its stated reason (design.md, principle 3; issue
12, item 4): violated, located away from round 0, without divergence, with the one thing it changed recorded.
Counted on one quick-profile run of the whole suite (the session's shared results, conftest.py: after or beside
test_quick_profile this costs little). The count can fail: a planted family whose
controls fire only at round 0 or by divergence is reported."""

from __future__ import annotations

import pytest
from fedbounds.checks.registry import all_checks
from fedbounds.checks.verdicts.controls import control, controls_by_family, why_not
from fedbounds.checks.verdicts.verdict import compare

FAMILIES = {"fednmap", "ds", "erratum"}


@pytest.fixture(scope="module")
def quick_run(quick_results):
    specs = all_checks()
    results = quick_results([spec.check_id for spec in specs])  # once per session (conftest.py)
    return [(spec, results[spec.check_id]) for spec in specs]


def families_without_teeth(pairs) -> list[str]:
    """The families none of whose controls fires for its stated reason."""
    counts = controls_by_family((spec.family, res.negatives) for spec, res in pairs)
    return sorted(f for f, c in counts.items() if c["fire_for_their_reason"] < 1)


def test_every_family_has_a_control_that_fires_for_its_reason(quick_run) -> None:
    counts = controls_by_family((spec.family, res.negatives) for spec, res in quick_run)
    assert FAMILIES <= set(counts)
    assert not families_without_teeth(quick_run), counts


@pytest.mark.parametrize("check_id", [s.check_id for s in all_checks() if s.family == "fednmap"])
def test_every_fednmap_check_has_a_control_that_fires_for_its_reason(quick_run, check_id: str) -> None:
    res = next(r for s, r in quick_run if s.check_id == check_id)
    reasons = [why_not(v) for v in res.negatives]
    assert any(r is None for r in reasons), f"{check_id}: {reasons}"
    for v in res.negatives:  # every FedNMap control says what it changed; a diverged one never fires
        assert v.details["control_record"]["changed"]
        assert not v.details["control_record"]["diverged"], v.details["control"]


def test_the_count_fails_on_a_planted_family_without_teeth(quick_run) -> None:
    _spec, res = next((s, r) for s, r in quick_run if s.family == "fednmap")

    class Planted:  # the same check under a family whose only controls fire for another reason
        family = "planted"

    base = compare("c", "i", [2.0], [1.0], exact=True)
    bad = [control(base, changed="bound", what="fires at round 0 only", violated_at=0),
           control(base, changed="eta_hat", what="fires by divergence", violated_at=40, diverged="round 39: overflow")]
    res_planted = type(res)(res.check_id, verdicts=res.verdicts, negatives=bad)
    assert families_without_teeth([*quick_run, (Planted(), res_planted)]) == ["planted"]
