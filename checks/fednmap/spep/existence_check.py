"""``fednmap.spep.theorem8_existence`` in ``fedbounds check``: Theorem 8 at the printed steps, on a searched Lyapunov
function (docs/fednmap-reconstruction.md §10.9; :mod:`fedbounds.checks.fednmap.spep.existence`).

Per point of the committed table ``theorem8_c0.json``: the verdict "certified floor K*(e8(C_0))/e8(C_0) <= printed
floor" at the smallest C_0 the table recovered, with that C_0 in the verdict line. A proved row's certificate file is
re-verified exactly against the PEP rebuilt here (its rows' hash and an exact LDL^T), so the verdict rests on what this
run checked, not on the file's word. The quick profile does that for the m = 1, gamma rho = 0.0182 rows and re-solves
one point live (a drift from the committed K is an error); the full profile for every row.
Control: the rate pushed past the family's front (tau = 1, r = eta_hat; changed: the rate): no member contracts, both
solvers unbounded, the verdict must be violated.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from fedbounds.checks.registry import CheckContext, CheckResult, register
from fedbounds.checks.verdicts.controls import control
from fedbounds.checks.verdicts.verdict import Verdict, decide, slack_of

__all__ = ["EXISTENCE", "check_existence", "reverified"]

EXISTENCE = "fednmap.spep.theorem8_existence"
#: the point re-solved live in every profile
LIVE = (2, 1, 1, 0.1)


def _label(r: dict[str, Any]) -> str:
    c0 = "undecided (no probe in [0, 64] decided to meet)" if r["C_0_min"] is None else f"{r['C_0_min']:g}"
    if r["C_0_min"] and r["C_0_low"] is not None and r["C_0_min"] - r["C_0_low"] > 0.05 * r["C_0_min"]:
        c0 = f"in ({r['C_0_low']:g}, {r['C_0_min']:g}] (undecided probes below)"
    return (f"n={r['n']} Q={r['Q']} m={r['m']} gamma*rho={r['gamma_rho']:.4f} printed steps: smallest C_0 = {c0} "
            f"(Lyapunov function searched)")


def _at(r: dict[str, Any]) -> dict[str, float]:
    from fedbounds.checks.fednmap.spep.existence import MU, L, steps

    p = steps(r["Q"], r["m"], r["rho"])
    return {"L": L, "rho": r["rho"], "mu": MU, "n": r["n"], "Q": r["Q"], "m": r["m"], "gamma": p["gamma"],
            "eta_hat": p["eta_hat"], "eta_a": p["eta_a"], "C_0": r["C_0_min"] if r["C_0_min"] is not None else math.nan}


def _verdict(r: dict[str, Any], ratio: float | None, evidence: str, **details: Any) -> Verdict:
    obs = math.nan if ratio is None else float(ratio)
    return Verdict(claim_id=EXISTENCE, instance=_label(r) + f" [{evidence}]", observed=obs, bound=1.0, ci_low=obs,
                   ci_high=obs, status=decide(obs, obs, 1.0, exact=True), slack=slack_of(1.0, obs), exact=True,
                   details={"at": _at(r), "evidence": evidence, **details})


def _reverify(r: dict[str, Any]) -> tuple[str, float | None, dict[str, Any]]:
    """The row's evidence as this run sees it: ``proved`` (its certificate file re-verified against the rebuilt PEP;
    the ratio from the proved bound), else the committed two-solver status (``certified``), else ``unknown``."""
    from fedbounds.checks.fednmap.spep.existence import _exact, printed_floor, rate, reduced_build, steps
    from fedbounds.checks.fednmap.spep.search import build_search_spep

    best = next((p for p in r["probes"] if p["C_0"] == r["C_0_min"]), None)
    if best is None:
        return "unknown", None, {}
    floor, rt = printed_floor(r["n"], r["Q"], r["m"], r["rho"]), rate(r["Q"], r["m"], r["rho"], r["C_0_min"])
    if best["status"] == "proved":
        p = steps(r["Q"], r["m"], r["rho"])
        s2 = 1.0
        if best["proof"].get("form") == "reduced":  # the client-symmetric reduced PEP, written at sigma2 (bound K sigma2)
            s2 = float(best["proof"]["sigma2"])
            build = reduced_build(r["n"], r["Q"], best["tau"], r["m"], r["rho"], s2)
        else:
            build = build_search_spep(1.0, r["rho"], p["gamma"], p["eta_a"], p["eta_s"], r["n"], r["Q"], best["tau"], 0.1,
                                      symmetric=r["n"] >= 3)
        try:
            proof = _exact(build, 0.0, None, make=False)
        except Exception as exc:
            proof = {"status": f"not proved: {exc}"}
        if proof is not None and proof.get("status") == "proved":
            proof = {**proof, "bound": proof["bound"] / s2}
            return "proved", proof["bound"] / rt / floor, {"proof": proof}
        return "unknown", None, {"proof": proof}
    if best["status"] == "certified":
        return "certified", best["K"] / rt / floor, {"values": best["values"]}
    return "unknown", None, {}


#: re-verifications done in this process, per row (the constants' checks read the same rows: verified once)
_REVERIFIED: dict[tuple[Any, ...], tuple[str, float | None, dict[str, Any], float | None]] = {}


def reverified(r: dict[str, Any]) -> tuple[str, float | None, dict[str, Any], float | None]:
    """:func:`_reverify` once per row and process, with the K this run stands on: (evidence, floor ratio, details, K).
    K is the re-verified exact bound when ``proved``, the committed two-solver value when ``certified``, else None."""
    key = (r["n"], r["Q"], r["m"], r["rho"], r["C_0_min"], r["K"])
    if key not in _REVERIFIED:
        ev, ratio, det = _reverify(r)
        K = None
        if ev == "proved":
            K = float(det["proof"]["bound"])
        elif ev == "certified":
            K = float(next(p for p in r["probes"] if p["C_0"] == r["C_0_min"])["K"])
        _REVERIFIED[key] = (ev, ratio, det, K)
    return _REVERIFIED[key]


#: the speedup table's points re-verified in the quick profile (the full profile: all of them)
SPEEDUP_QUICK = ((64, 1), (64, 4))


def _speedup_verdicts(ctx: CheckContext, res: CheckResult, full: bool) -> None:
    """Per speedup-table point (theorem8_speedup.json; :data:`SPEEDUP_QUICK` in the quick profile): its certificate
    re-verified against the reduced PEP rebuilt here (no solver), and the verdict "proved floor K/r <= printed floor"
    at C_0 = 0, the printed steps, m = 1. A point without a certificate that re-verifies gives no number (unknown)."""
    from fedbounds.checks.fednmap.spep import reduced
    from fedbounds.checks.fednmap.spep.existence import _exact, printed_floor, rate, reduced_build, steps
    from fedbounds.theory.fednmap.theorem8_c0 import speedup

    for row in speedup().get("rows", []):
        n, Q = row["n"], row["Q"]
        if not full and (n, Q) not in SPEEDUP_QUICK:
            continue
        ctx.tick(f"Theorem 8 speedup table: re-verify n={n} Q={Q}")
        r = {"n": n, "Q": Q, "m": 1, "rho": 0.1, "gamma_rho": steps(Q)["gamma"] * 0.1, "C_0_min": 0.0, "C_0_low": 0.0}
        rt, s2 = rate(Q, 1, 0.1, 0.0), reduced.variance(n, Q)
        proof = None
        if row.get("status") == "proved":
            try:
                proof = _exact(reduced_build(n, Q, rt / steps(Q)["eta_hat"], 1, 0.1, s2), 0.0, None, make=False)
            except Exception as exc:  # a file that does not re-verify is no evidence, said in the details
                proof = {"status": f"not proved: {exc}"}
        ok = proof is not None and proof.get("status") == "proved"
        ratio = proof["bound"] / s2 / rt / printed_floor(n, Q, 1, 0.1) if ok else None
        v = _verdict(r, ratio, "proved" if ok else "unknown", proof=proof, table="theorem8_speedup.json")
        res.verdicts.append(dataclasses.replace(v, instance="speedup table, reduced PEP: " + v.instance))


@register(EXISTENCE, title="Theorem 8 at the printed steps: a Lyapunov function searched by SDP; the smallest C_0 it needs",
          label="Theorem 8 / Appendix C.2", status="reconstructed", family="fednmap.spep")
def check_existence(ctx: CheckContext) -> CheckResult:
    from fedbounds.checks.fednmap.spep.existence import printed_floor, rate, solve, steps
    from fedbounds.theory.fednmap.theorem8_c0 import table

    res = CheckResult(EXISTENCE)
    rows = table()["rows"]
    if not rows:
        res.notes.append("no committed table theory/fednmap/theorem8_c0.json: run python -m "
                         "fedbounds.checks.fednmap.spep.existence --write")
        return res
    full = ctx.profile.name == "full"
    for r in rows:
        if not full and (r["m"], r["rho"]) != (1, 0.1):
            continue
        if r["C_0_min"] is None and str(r.get("note", "")).startswith("not computed"):
            res.notes.append(f"n={r['n']} Q={r['Q']} m={r['m']} gamma*rho={r['gamma_rho']:.4f}: {r['note']}: no verdict")
            continue
        if r["C_0_min"] is None:  # no probe decided: no verdict, said in a note
            res.notes.append(f"n={r['n']} Q={r['Q']} m={r['m']} gamma*rho={r['gamma_rho']:.4f}: no C_0 in [0, 64] decided "
                             "(the solvers disagree at the printed steps and no exact certificate was found): no verdict")
            continue
        ctx.tick(f"Theorem 8 existence: re-verify n={r['n']} Q={r['Q']} m={r['m']}")
        ev, ratio, det, _ = reverified(r)
        res.verdicts.append(_verdict(r, ratio if ev != "unknown" else None, ev, committed_K=r["K"], **det))
    live = next((r for r in rows if (r["n"], r["Q"], r["m"], r["rho"]) == LIVE), None)
    if live is not None and live["C_0_min"] is not None:
        ctx.tick("Theorem 8 existence: live re-solve")
        n, Q, m, rho = LIVE
        rt = rate(Q, m, rho, live["C_0_min"])
        form = next((p.get("proof") or {} for p in live["probes"] if p["C_0"] == live["C_0_min"]), {}).get("form")
        rec = solve(n, Q, rt / steps(Q, m, rho)["eta_hat"], m, rho, reduced=form == "reduced")
        ratio = None if rec["K"] is None else rec["K"] / rt / printed_floor(n, Q, m, rho)
        drift = None if rec["K"] is None or live["K"] is None else abs(rec["K"] - live["K"]) / live["K"]
        res.verdicts.append(_verdict(live, ratio, f"live {rec['status']}", K=rec["K"], drift_from_committed=drift,
                                     gaps=rec["gaps"], proof=rec.get("proof")))
        if drift is not None and drift > 1e-3:
            res.notes.append(f"the live K at {LIVE} moved {drift:.2e} (relative) from the committed table: regenerate it")
        ctx.tick("Theorem 8 existence control: rate past the front")
        far = solve(n, Q, 1.0, m, rho, reduced=form == "reduced")
        bad = math.inf if far["status"] == "unbounded" else (None if far["K"] is None else far["K"] / steps(Q, m, rho)["eta_hat"]
                                                               / printed_floor(n, Q, m, rho))
        res.negatives.append(control(
            _verdict(live, bad, f"control {far['status']}"), changed="rate",
            what="the rate r = eta_hat (tau = 1), past the family's front: no member contracts",
            before=rt, after=steps(Q, m, rho)["eta_hat"], violated_at=_label(live)))
    _speedup_verdicts(ctx, res, full)
    c0s = [r["C_0_min"] for r in rows if r["C_0_min"] is not None]
    res.tightness = {"summary": f"smallest C_0 {min(c0s):g}..{max(c0s):g} over {len(c0s)} points (searched Lyapunov function, "
                     "printed steps)" if c0s else "no C_0 recovered"}
    return res
