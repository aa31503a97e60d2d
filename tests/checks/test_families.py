"""Every family of checks has a negative control that fires for its stated reason (design.md, principle 3; issue
12, item 4): violated, located away from round 0, without divergence, with the one thing it changed recorded.
Counted on the quick runs of the claims that are not heavy (every family has some; the session's shared results,
conftest.py), and over every claim under ``-m slow``. The count can fail: a planted family whose
controls fire only at round 0 or by divergence is reported."""

from __future__ import annotations

import pytest
from fedbounds.checks.registry import all_checks
from fedbounds.checks.verdicts.controls import control, controls_by_family, why_not
from fedbounds.checks.verdicts.verdict import compare

FAMILIES = {"fednmap", "ds", "erratum"}


def _runs(quick_results, specs) -> list:
    results = quick_results([spec.check_id for spec in specs])  # once per session (conftest.py)
    return [(spec, results[spec.check_id]) for spec in specs]


@pytest.fixture(scope="module")
def quick_run(quick_results, heavy_claims):
    """The claims whose quick run is short (every family has some): the default run's share of the count."""
    return _runs(quick_results, [spec for spec in all_checks() if spec.check_id not in heavy_claims])


def families_without_teeth(pairs) -> list[str]:
    """The families none of whose controls fires for its stated reason."""
    counts = controls_by_family((spec.family, res.negatives) for spec, res in pairs)
    return sorted(f for f, c in counts.items() if c["fire_for_their_reason"] < 1)


def test_every_family_has_a_control_that_fires_for_its_reason(quick_run) -> None:
    counts = controls_by_family((spec.family, res.negatives) for spec, res in quick_run)
    assert FAMILIES <= set(counts)
    assert not families_without_teeth(quick_run), counts


@pytest.mark.slow  # the quick check of every claim (about 3 CPU-minutes)
def test_every_family_has_a_control_that_fires_for_its_reason_over_every_claim(quick_results) -> None:
    test_every_family_has_a_control_that_fires_for_its_reason(_runs(quick_results, all_checks()))


@pytest.mark.parametrize("check_id", [s.check_id for s in all_checks() if s.family == "fednmap"])
def test_every_fednmap_check_has_a_control_that_fires_for_its_reason(quick_result, check_id: str) -> None:
    res = quick_result(check_id)  # a heavy claim's case is slow (conftest.HEAVY_CLAIMS)
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
