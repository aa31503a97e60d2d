"""Negative controls that fail for the reason they name (design.md, principle 3).

A control changes exactly one thing (the bound scaled, one step size, one piece of the algorithm) on the
check's own experiment, and must come out ``violated`` *because of that thing*: where the claim is informative
(not at round 0), without divergence. :func:`control` records, in the verdict's details (and so in
report.json), what was changed (``changed``: the one thing, from what to what) and where the violation
occurred (``violated_at``: the round, or the point of a sweep). :func:`fires_for_its_reason` is the rule the
suite enforces: a control that only fires by divergence, or only at round 0, does not count.

Two kinds (``details["control_kind"]``, in report.json). A *theorem* control changes the theorem's own input (a
printed constant, a step, a piece of the algorithm): if it fires, a wrong constant of that kind would be caught. A
*machinery* control is calibrated from the same measurement (the bound scaled to half the worst observed / bound
ratio): it fires by construction whenever the measurement is reproducible, so it tests the verdict machinery, not
the theorem, and is never counted as the family's evidence (:func:`counts_as_evidence`). A control that changes
``bound`` is machinery unless said otherwise, and so is any control whose description says it was calibrated from
the same run (:func:`is_calibrated`): its observed value is fixed by construction, and calling it a theorem control
raises (the printed 36 divided by twice the room measured in the same run reads 2 whatever the theorem says).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fedbounds.checks.verdicts.verdict import Verdict

__all__ = ["MACHINERY", "THEOREM", "control", "control_kind", "controls_by_family", "counts_as_evidence",
           "fires_for_its_reason", "is_calibrated", "why_not"]

#: the two kinds of control (module docstring)
THEOREM = "theorem"
MACHINERY = "machinery"


def control(verdict: Verdict, *, changed: str, what: str, before: Any = None, after: Any = None,
            violated_at: Any = None, diverged: str | None = None, kind: str | None = None) -> Verdict:
    """``verdict`` labelled as a negative control.

    ``changed``: the single thing changed (``"bound"``, ``"eta_hat"``, ``"correction"``, ...); ``what``: a
    one-line description for the table; ``before`` / ``after``: its value in the claim's experiment and in
    the control; ``violated_at``: where the violation occurred (an int round, or a label of the point);
    ``diverged``: the divergence message if the run diverged (such a control never counts as the family's);
    ``kind``: :data:`THEOREM` or :data:`MACHINERY` (default: machinery when ``changed`` is ``"bound"``, the calibrated
    control, else theorem).
    """
    if not changed or not what:
        raise ValueError("a control must name the one thing it changed and describe it")
    calibrated = is_calibrated(what)
    kind = kind if kind is not None else (MACHINERY if changed == "bound" or calibrated else THEOREM)
    if kind not in (THEOREM, MACHINERY):
        raise ValueError(f"control kind must be {THEOREM!r} or {MACHINERY!r}, got {kind!r}")
    if kind == THEOREM and calibrated:
        raise ValueError(f"control {what!r} is calibrated from the same measurement (its observed value is fixed by "
                         "construction): it is machinery, not a theorem control")
    record = {"changed": changed, "before": before, "after": after, "violated_at": violated_at, "diverged": diverged,
              "kind": kind}
    return verdict.with_details(control=what, control_record=record, control_kind=kind)


#: words in a control's description that say its changed value was calibrated from the same run
CALIBRATION_WORDS = ("calibrated", "measured room", "worst ratio", "by construction")


def is_calibrated(what: str) -> bool:
    """Whether a control's description says its change was calibrated from the run it controls (so its observed
    value is fixed by construction: 2 / the measured ratio times the measured ratio)."""
    low = what.lower()
    return any(w in low for w in CALIBRATION_WORDS)


def control_kind(verdict: Verdict) -> str | None:
    """:data:`THEOREM`, :data:`MACHINERY`, or None for a verdict that is not a control."""
    record = verdict.details.get("control_record")
    if record is None:
        return None
    return record.get("kind", MACHINERY if record.get("changed") == "bound" else THEOREM)


def counts_as_evidence(verdict: Verdict) -> bool:
    """A control that fires for its reason *and* changes the theorem's input (not a calibrated machinery check)."""
    return fires_for_its_reason(verdict) and control_kind(verdict) == THEOREM


def why_not(verdict: Verdict) -> str | None:
    """Why ``verdict`` is not a control that fires for its stated reason; ``None`` when it is one."""
    record = verdict.details.get("control_record")
    if record is None:
        return "no control record (what was changed, where it was violated)"
    if not verdict.violated:
        return f"verdict is {verdict.status}, not violated"
    if record.get("diverged"):
        return f"the run diverged ({record['diverged']})"
    if verdict.details.get("diverged"):
        return f"the run diverged ({verdict.details['diverged']})"
    where = record.get("violated_at")
    if where is None:
        return "the violation is not located"
    if isinstance(where, int) and where == 0:
        return "violated only at round 0, where the claim is not informative"
    return None


def fires_for_its_reason(verdict: Verdict) -> bool:
    """A violated control with a record, located away from round 0, without divergence."""
    return why_not(verdict) is None


def controls_by_family(results: Iterable[tuple[str, Iterable[Verdict]]]) -> dict[str, dict[str, int]]:
    """Count negative controls per family: ``results`` yields (family, negatives) per check; returns
    ``{family: {"controls": n, "fire_for_their_reason": k, "machinery": m}}``: k counts the theorem controls that fire
    for their reason (the family's evidence), m the calibrated machinery checks (never evidence). Families without
    any control appear with zeros."""
    out: dict[str, dict[str, int]] = {}
    for family, negatives in results:
        row = out.setdefault(family, {"controls": 0, "fire_for_their_reason": 0, "machinery": 0})
        for v in negatives:
            row["controls"] += 1
            row["fire_for_their_reason"] += int(counts_as_evidence(v))
            row["machinery"] += int(control_kind(v) == MACHINERY)
    return out
