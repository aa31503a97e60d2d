"""Negative controls that fail for the reason they name (design.md, principle 3).

A control changes exactly one thing (the bound scaled, one step size, one piece of the algorithm) on the
check's own experiment, and must come out ``violated`` *because of that thing*: where the claim is informative
(not at round 0), without divergence. :func:`control` records, in the verdict's details (and so in
report.json), what was changed (``changed``: the one thing, from what to what) and where the violation
occurred (``violated_at``: the round, or the point of a sweep). :func:`fires_for_its_reason` is the rule the
suite enforces: a control that only fires by divergence, or only at round 0, does not count.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fedbounds.checks.core.verdict import Verdict

__all__ = ["control", "controls_by_family", "fires_for_its_reason", "why_not"]


def control(verdict: Verdict, *, changed: str, what: str, before: Any = None, after: Any = None,
            violated_at: Any = None, diverged: str | None = None) -> Verdict:
    """``verdict`` labelled as a negative control.

    ``changed``: the single thing changed (``"bound"``, ``"eta_hat"``, ``"correction"``, ...); ``what``: a
    one-line description for the table; ``before`` / ``after``: its value in the claim's experiment and in
    the control; ``violated_at``: where the violation occurred (an int round, or a label of the point);
    ``diverged``: the divergence message if the run diverged (such a control never counts as the family's).
    """
    if not changed or not what:
        raise ValueError("a control must name the one thing it changed and describe it")
    record = {"changed": changed, "before": before, "after": after, "violated_at": violated_at, "diverged": diverged}
    return verdict.with_details(control=what, control_record=record)


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
    ``{family: {"controls": n, "fire_for_their_reason": k}}`` (families without any control appear with zeros)."""
    out: dict[str, dict[str, int]] = {}
    for family, negatives in results:
        row = out.setdefault(family, {"controls": 0, "fire_for_their_reason": 0})
        for v in negatives:
            row["controls"] += 1
            row["fire_for_their_reason"] += int(fires_for_its_reason(v))
    return out
