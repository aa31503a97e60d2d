"""``fednmap.spep.constant_36`` and ``fednmap.spep.constant_12100`` in ``fedbounds check``: the room of each printed
constant of Theorem 8's floor on the *searched* Lyapunov function at Theorem 5's printed steps
(docs/fednmap-reconstruction.md §10.9; :mod:`fedbounds.theory.fednmap.theorem8_c0`).

Per decided row of the committed table ``theorem8_c0.json`` (K proved or certified at r = e8(C_0), C_0 the smallest the
table recovered): the floor K sigma^2/r split against the two printed terms, each as printed paying first for what the
other leaves (:data:`fedbounds.theory.fednmap.formulas.theorem8_needed_36`, ``theorem8_needed_12100``); the verdict is
"needed / printed <= 1". Its evidence is the row's as :func:`~fedbounds.checks.fednmap.spep.existence_check.reverified`
sees it (the certificate file re-verified exactly against the PEP rebuilt, once per run and shared with
``fednmap.spep.theorem8_existence``; no SDP is solved here): ``proved`` only where it re-verifies, ``certified`` where
the table has the two solvers' agreement alone. A row with no decided C_0 gives no verdict (a note says so); a row whose
certificate does not re-verify gives ``inconclusive``, never ``holds``. No constant here is chosen by us: no C_c, the
printed steps (scope ``inside``), L = 1, mu = 0.1 as the table records.

Controls (theorem kind: the printed constant changed, decided by the same re-verified floor):
* 36 -> 0 (the 36-term dropped): wherever the 12100-term alone does not pay the certified floor (measured: n = 1), the
  needed 36 is positive and the verdict must be violated.
* for 12100 no value of 12100 can be caught where the 36-term alone pays (needed 0 at every decided row so far); its
  control drops the *36*-term, so that the 12100-term must pay alone, and reads violated where it cannot: that shows
  the verdict can fail on the measured floor, not that a wrong 12100 would be caught, so it is labelled machinery.
Both run at the decided row where the floor most exceeds the 12100-term; where it exceeds it nowhere, neither can
fail, and a note says so instead of a control that cannot fire.
"""

from __future__ import annotations

import math
from typing import Any

from fedbounds.checks.registry import CheckContext, CheckResult, register
from fedbounds.checks.verdicts.controls import MACHINERY, THEOREM, control
from fedbounds.checks.verdicts.verdict import Verdict, decide, slack_of

__all__ = ["C36", "C12100", "check_constant_36", "check_constant_12100", "decided_rows", "two_x_note"]

C36, C12100 = "fednmap.spep.constant_36", "fednmap.spep.constant_12100"
OTHER = {"36": "12100", "12100": "36"}


def _label(r: dict[str, Any]) -> str:
    return (f"n={r['n']} Q={r['Q']} m={r['m']} gamma*rho={r['gamma_rho']:.4f} printed steps, searched Lyapunov function, "
            f"C_0={r['C_0_min']:g}")


def _verdict(claim: str, instance: str, observed: float | None, **details: Any) -> Verdict:
    obs = math.nan if observed is None else float(observed)
    return Verdict(claim_id=claim, instance=instance, observed=obs, bound=1.0, ci_low=obs, ci_high=obs,
                   status=decide(obs, obs, 1.0, exact=True), slack=slack_of(1.0, obs), exact=True, details=details)


def decided_rows(ctx: CheckContext, notes: list[str]) -> list[tuple[dict[str, Any], str, float | None]]:
    """(row, evidence, K) per row of the profile (quick: m = 1, gamma rho = 0.0182; full: all) with a decided C_0; K is
    the re-verified one (None when the row does not re-verify). Rows with no decided C_0 are only named in ``notes``."""
    from fedbounds.checks.fednmap.spep.existence_check import reverified
    from fedbounds.theory.fednmap import theorem8_c0 as T8

    rows = T8.table()["rows"]
    if not rows:
        notes.append("no committed table theory/fednmap/theorem8_c0.json: run python -m "
                     "fedbounds.checks.fednmap.spep.existence --write")
    out = []
    for r in rows:
        if ctx.profile.name != "full" and (r["m"], r["rho"]) != (1, 0.1):
            continue
        if r["C_0_min"] is None:
            notes.append(f"n={r['n']} Q={r['Q']} m={r['m']} gamma*rho={r['gamma_rho']:.4f}: no C_0 decided in the table: "
                         "no verdict on either constant")
            continue
        ctx.tick(f"Theorem 8 constants: re-verify n={r['n']} Q={r['Q']} m={r['m']}")
        ev, _, _, K = reverified(r)
        out.append((r, ev, None if ev == "unknown" else K))
    return out


def _target(r: dict[str, Any]) -> str | None:
    """The proof's target when the committed K is a looser proved bound (``room/2``, ``2 x value``...), else None."""
    best = next((p for p in r["probes"] if p["C_0"] == r["C_0_min"]), {})
    t = (best.get("proof") or {}).get("target")
    return None if t in (None, "value") else str(t)


def _constant_check(ctx: CheckContext, claim: str, which: str, constants: dict[str, float] | None = None) -> CheckResult:
    """The verdicts of one constant (module docstring); ``constants``: the constants' values, printed by default (a
    test plants a wrong one)."""
    from fedbounds.checks.fednmap.spep.existence_check import _at
    from fedbounds.theory.fednmap.theorem8_c0 import needed as needed_at

    res = CheckResult(claim)
    raw = decided_rows(ctx, res.notes)
    rows = [(r, ev, None if K is None else needed_at(r, K, constants)) for r, ev, K in raw]
    other = OTHER[which]
    rooms, zero = [], 0
    value = (constants or {}).get(which)
    for r, ev, got in rows:
        needed = None if got is None else got[f"needed_{which}"]
        loose = _target(r)
        res.verdicts.append(_verdict(
            claim, f"{_label(r)}: {which} needed = {'-' if needed is None else f'{needed:.4g}'} ({other} as printed pays "
            f"first) [{ev}]", None if got is None else got[f"ratio_{which}"], at=_at(r), evidence=ev, needed=got,
            K_is=None if loose is None else f"a proved bound at {loose} (looser than Clarabel's value): the needed "
            f"{which} is an upper bound, and its room a lower bound"))
        if needed is not None:
            zero += needed == 0
            if needed > 0:
                rooms.append((float(which) if value is None else value) / needed)
    _control(res, which, [(r, ev, None if K is None else needed_at(r, K, {**(constants or {}), "36": 0.0}))
                          for r, ev, K in raw])
    decided = sum(1 for _, _, g in rows if g is not None)
    parts = [f"{zero} of {decided} decided rows need {which} = 0 ({other} alone pays)"] if decided else ["no decided row"]
    if rooms:
        parts.append(f"elsewhere room x{min(rooms):.3g}..x{max(rooms):.3g}")
    res.tightness = {"summary": "; ".join(parts) + " (searched Lyapunov function, printed steps)",
                     "room": (min(rooms), max(rooms)) if rooms else None}
    res.notes.append(two_x_note(which, min(rooms) if rooms else (math.inf if decided else None)))
    return res


def _control(res: CheckResult, which: str, rows: list[tuple[dict[str, Any], str, dict[str, float] | None]]) -> None:
    """The 36-term dropped (module docstring; ``rows``: needed with 36 = 0), at the decided row where the floor most
    exceeds the 12100-term alone."""
    live = [(r, g) for r, _, g in rows if g is not None]
    if not live:
        res.notes.append("no decided row: no control")
        return
    r, g = max(live, key=lambda t: t[1]["floor"] / t[1]["term_12100"])
    alone = g["floor"] / g["term_12100"]  # the floor over the 12100-term alone: > 1 iff some 36 is needed
    if alone <= 1.0:  # nothing for 36 to pay anywhere: dropping it cannot fail, so there is no control to run
        res.notes.append("no control: the 12100-term alone pays the certified floor at every decided row, so 36 -> 0 "
                         "cannot read violated here")
        return
    obs = g[f"ratio_{which}"]  # 36: +inf (some 36 is needed); 12100: the floor over the 12100-term alone
    if which == "36":
        what = ("36 -> 0 (the sampling-noise term dropped): where the 12100-term alone does not pay the certified floor, "
                "the needed 36 is positive and 36 = 0 reads violated")
        kind = THEOREM
    else:
        what = ("the 36-term dropped, so that the 12100-term pays alone: 12100 needed / printed; shows this verdict can "
                "fail on the floor, not that a wrong 12100 would be caught (the 36-term pays first), so machinery")
        kind = MACHINERY
    res.negatives.append(control(
        _verdict(res.check_id, f"{_label(r)}: 36 -> 0, {which} needed / {which}", obs, floor_over_12100_term=alone,
                 needed=g),
        changed="36", what=what, before=36.0, after=0.0, violated_at=_label(r), kind=kind))


def two_x_note(which: str, room: float | None) -> str:
    """What a 2x error in the printed constant ``which`` would and would not be caught by, given its smallest room."""
    big = str(2 * int(which))
    if room is None:
        return f"2x error in {which}: no decided row, nothing caught here"
    if math.isinf(room):
        return (f"2x error in {which}: {which} -> {big} or {int(which) / 2:g} is not caught: at every decided row the other "
                f"term alone pays the certified floor, so any {which} >= 0 passes here")
    caught = "caught here" if room < 2 else "not caught here"
    return (f"2x error in {which}: {which} -> {big} (an overstatement) is still valid and nothing can catch it; "
            f"{which} -> {int(which) / 2:g} is {caught} (smallest room x{room:.3g}: only a {which} more than {room:.3g}x too "
            "small reads violated)")


@register(C36, title="Theorem 8's 36 sigma^2/(m n mu Q) on the searched Lyapunov function at the printed steps: needed / printed",
          label="Theorem 8", status="remark", family="fednmap.spep", erratum=True, expect="holds")
def check_constant_36(ctx: CheckContext) -> CheckResult:
    return _constant_check(ctx, C36, "36")


@register(C12100, title="Theorem 8's 12100 eta_a^2 Q L^2 sigma^2/(mu (1 - gamma rho)^2) on the searched Lyapunov function at "
          "the printed steps: needed / printed", label="Theorem 8", status="remark", family="fednmap.spep", erratum=True,
          expect="holds")
def check_constant_12100(ctx: CheckContext) -> CheckResult:
    return _constant_check(ctx, C12100, "12100")
