"""fedbounds.checks.verdicts.controls: a control records the one thing it changed and where it fired; the rule
that a control counts only when violated away from round 0 without divergence; the per-family count."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fedbounds.checks.verdicts.controls import (
    MACHINERY,
    THEOREM,
    control,
    control_kind,
    controls_by_family,
    counts_as_evidence,
    fires_for_its_reason,
    why_not,
)
from fedbounds.checks.verdicts.verdict import compare


def _violated():
    return compare("c", "inst", np.array([1.0, 3.0]), np.array([2.0, 2.0]), exact=True)


def _holds():
    return compare("c", "inst", np.array([1.0, 1.0]), np.array([2.0, 2.0]), exact=True)


def test_control_records_what_changed_and_where() -> None:
    v = control(_violated(), changed="bound", what="bound x 0.5", before=1.0, after=0.5, violated_at=17)
    rec = v.details["control_record"]
    assert rec == {"changed": "bound", "before": 1.0, "after": 0.5, "violated_at": 17, "diverged": None, "kind": MACHINERY}
    assert v.details["control"] == "bound x 0.5" and fires_for_its_reason(v)
    assert v.to_dict()["details"]["control_record"]["violated_at"] == 17  # reaches report.json
    with pytest.raises(ValueError, match="one thing"):
        control(_violated(), changed="", what="x")


@pytest.mark.parametrize(
    ("verdict", "kw", "reason"),
    [
        ("violated", {"violated_at": 0}, "round 0"),
        ("violated", {"violated_at": 5, "diverged": "round 4: overflow"}, "diverged"),
        ("violated", {}, "not located"),
        ("holds", {"violated_at": 5}, "not violated"),
    ],
)
def test_controls_that_do_not_fire_for_their_reason(verdict: str, kw: dict, reason: str) -> None:
    v = control(_violated() if verdict == "violated" else _holds(), changed="bound", what="w", **kw)
    assert not fires_for_its_reason(v) and reason in why_not(v)


def test_a_verdict_without_record_or_with_a_diverged_run_does_not_count() -> None:
    assert "no control record" in why_not(_violated())
    v = control(_violated().with_details(diverged="round 3"), changed="eta_hat", what="w", violated_at=9)
    assert "diverged" in why_not(v)


def test_count_by_family_sees_a_family_whose_controls_fire_for_another_reason() -> None:
    good = control(_violated(), changed="eta_hat", what="w", violated_at=12)
    at_zero = control(_violated(), changed="eta_hat", what="w", violated_at=0)
    counts = controls_by_family([("a", [good, at_zero]), ("b", [at_zero]), ("c", [])])
    assert counts == {"a": {"controls": 2, "fire_for_their_reason": 1, "machinery": 0},
                      "b": {"controls": 1, "fire_for_their_reason": 0, "machinery": 0},
                      "c": {"controls": 0, "fire_for_their_reason": 0, "machinery": 0}}


def test_calibrated_control_is_a_machinery_check_and_not_the_familys_evidence() -> None:
    calibrated = control(_violated(), changed="bound", what="bound x worst/2", violated_at=12)
    theorem = control(_violated(), changed="eta_hat", what="2 x the printed step", violated_at=12)
    assert calibrated.details["control_kind"] == MACHINERY and control_kind(calibrated) == MACHINERY
    assert fires_for_its_reason(calibrated) and not counts_as_evidence(calibrated)
    assert control_kind(theorem) == THEOREM and counts_as_evidence(theorem)
    counts = controls_by_family([("f", [calibrated])])
    assert counts == {"f": {"controls": 1, "fire_for_their_reason": 0, "machinery": 1}}  # no evidence from it
    assert control_kind(control(_violated(), changed="bound", what="printed constant / 2", violated_at=3,
                                kind=THEOREM)) == THEOREM
    with pytest.raises(ValueError, match="kind"):
        control(_violated(), changed="bound", what="w", kind="other")


def test_a_control_calibrated_from_its_own_run_is_machinery() -> None:
    """The printed 36 divided by twice the room measured in the same run reads 2 by construction: never a theorem
    control (it was one before, counted as the family's evidence)."""
    from fedbounds.checks.verdicts.controls import is_calibrated

    what = "the printed 36 divided by twice its measured room (118)"
    assert is_calibrated(what)
    v = control(_violated(), changed="36", what=what, violated_at=1)
    assert control_kind(v) == MACHINERY and not counts_as_evidence(v)
    with pytest.raises(ValueError, match="machinery"):
        control(_violated(), changed="36", what=what, violated_at=1, kind=THEOREM)
    assert control_kind(control(_violated(), changed="eta_hat", what="eta_hat 2x past the condition", violated_at=3)) == THEOREM


def test_the_calibrated_controls_in_the_checks_say_machinery() -> None:
    """Every control in the checks whose change is calibrated from the same run is labelled machinery (source guard:
    the four that read 'theorem' before: 36, 12100, Lemma 5.2's Phi, the Lyapunov rate exponent)."""
    import inspect

    from fedbounds.checks.ds_fedproxgrad import checks as ds
    from fedbounds.checks.fednmap import lyapunov, worst
    from fedbounds.checks.fednmap.spep import constants_check

    assert "kind = MACHINERY" in inspect.getsource(constants_check._control)
    assert "kind=MACHINERY" in inspect.getsource(lyapunov._calibrated_window)
    assert "kind=MACHINERY" in inspect.getsource(worst)
    assert 'changed="Phi"' in inspect.getsource(ds) and "kind=MACHINERY" in inspect.getsource(ds)


def test_the_36_and_12100_notes_say_what_a_2x_error_meets() -> None:
    from fedbounds.checks.fednmap.spep.constants_check import two_x_note

    note = two_x_note("36", 118.3)
    assert "36 -> 72" in note and "nothing can catch it" in note and "36 -> 18 is not caught here" in note
    assert "118" in note
    assert "caught here" in two_x_note("12100", 1.5) and "not caught" not in two_x_note("12100", 1.5)
    assert "is not caught" in two_x_note("12100", math.inf) and "other term alone pays" in two_x_note("12100", math.inf)
