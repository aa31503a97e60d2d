"""Per claim, what would catch a 2x error in its printed constant (design.md, principle 3).

The error considered is the harmful one: a printed bound 2x too small (too optimistic), i.e. the claim's bound
halved (a rate, a floor, a coefficient; for a "Phi >= 1/4"-type claim, the constant doubled). Four answers:

* ``a``, the numeric verdict: the check's worst slack (bound / observed over everything its profile searched) is
  below 2, so the halved bound is violated on the check's own experiment. Computed from a report.
* ``b``, a PEP family: the same, for a check of a PEP family (fednmap.pep, ds.pep): the certified worst case over the
  whole class exceeds half the bound.
* ``c``, a sympy proof: a proof step decides the claim's own expression (principle 2). Recorded, not computed: the
  perturbation tests (tests/theory/test_teeth.py) cover some steps only; a step whose inequality has slack x2 or more
  would survive a 2x error.
* ``d``, nothing: no check or proof step, or the check's worst slack is >= 2 (the bound is loose by more than 2x
  over what was searched, so a 2x tighter bound would still hold there).

Errata are false as printed; their row says so (``n/a``).

:func:`from_report` computes (a)/(b)/(d) from a ``report.json``; :data:`RECORDED` holds its result for the quick
profile at seed 0 (regenerate with ``python -m fedbounds.checks.verdicts.two_x REPORT.json``); :func:`detection` is what
``fedbounds claims --json`` prints as ``two_x``.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping
from typing import Any

__all__ = ["PEP_FAMILIES", "detection", "from_report"]

#: check-id prefixes of the PEP families
PEP_FAMILIES = ("fednmap.pep.", "ds.pep.")


def from_report(report: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """(a)/(b)/(d) per check id of a report.json (its ``claims`` list), from each check's verdict and worst slack."""
    out: dict[str, dict[str, Any]] = {}
    profile = report.get("profile", "?")
    profile = profile.get("name", "?") if isinstance(profile, Mapping) else str(profile)
    for c in report.get("claims", []):
        cid, verdict, slack = c.get("check_id"), c.get("verdict"), c.get("worst_slack")
        pep = str(cid).startswith(PEP_FAMILIES)
        rec: dict[str, Any] = {"computed": True, "profile": profile, "worst_slack": slack}
        if c.get("erratum") and verdict == "violated":
            rec.update(catcher="n/a", why="an erratum: false as printed, the check shows the violation")
        elif verdict != "holds" or slack is None or not isinstance(slack, int | float) or not math.isfinite(slack):
            rec.update(catcher="d", why=f"the check's verdict is {verdict} (slack {slack}): no measured margin to test")
        elif slack < 2:
            rec.update(catcher="b" if pep else "a",
                       why=f"worst slack x{slack:.3g} < 2: a bound 2x tighter is violated on the check's own "
                           f"{'certified worst case' if pep else 'experiment'} ({profile} profile)")
        else:
            rec.update(catcher="d", why=f"worst slack x{slack:.3g} >= 2 over what the {profile} profile searched: a 2x "
                                        "tighter bound still holds there (loose)")
        out[str(cid)] = rec
    return out


def detection(claim: Any) -> dict[str, Any]:
    """The ``two_x`` record of a :class:`fedbounds.theory.core.claims.Claim`: the recorded computation when its check
    ran in the quick profile, else the rule of the module docstring (proof step: ``c``; nothing: ``d``)."""
    from fedbounds.checks.verdicts.two_x_recorded import RECORDED

    status = str(getattr(claim.status, "value", claim.status))
    if claim.id in RECORDED:
        rec = dict(RECORDED[claim.id])
        if rec["catcher"] == "d" and claim.proof:
            rec.update(catcher="c", computed=False,
                       why=rec["why"] + f"; a sympy proof step decides it ({', '.join(claim.proof)}), not perturbed 2x here")
        return rec
    if status == "erratum":
        return {"catcher": "n/a", "computed": False, "why": "an erratum: false as printed (its proof step or check shows it)"}
    if claim.proof:
        return {"catcher": "c", "computed": False,
                "why": f"sympy proof step(s) {', '.join(claim.proof)} decide the claim's expression (not perturbed 2x here)"}
    return {"catcher": "d", "computed": False, "why": "no check in the quick profile and no proof step"}


def main(argv: list[str] | None = None) -> int:
    """Print :data:`RECORDED` recomputed from a report.json (to paste into two_x_recorded.py)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m fedbounds.checks.verdicts.two_x REPORT.json", file=sys.stderr)
        return 2
    with open(args[0], encoding="utf-8") as fh:
        rows = from_report(json.load(fh))
    import pprint

    print("RECORDED = " + pprint.pformat(rows, width=118, sort_dicts=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
