"""``fednmap.pep.theorem8_exponent`` in ``fedbounds check``: Theorem 8's per-round exponent at Theorem 5's printed steps,
on a searched Lyapunov function (docs/fednmap-reconstruction.md §10.9; :mod:`fedbounds.theory.fednmap.theorem8_c0`).

Theorem 8's exponent e8(C_0) = 2 eta_hat mu/(9 (1 + gamma mu C_0)) is largest at C_0 = 0: tau8 = 2 mu/9 in units of
eta_hat. The committed table ``theorem8_c0.json`` has the searched family's front at one point (n, Q, m, rho) =
(2, 1, 1, 0.1): ``tau_low``, a rate at which some member contracts (K* finite), and ``tau_high``, one at which none
does (every solve unbounded), with K* at fractions of tau_low (``points``). A member contracting at rate r contracts
at every smaller rate (V >= psi - psi* >= 0), so the verdict is

    tau8 / tau_p <= 1          (:data:`fedbounds.theory.fednmap.theorem8_c0.exponent_ratio`),

tau_p the largest rate of the front whose certificate re-verifies here against the PEP rebuilt from its stated
problem (the reduced PEP at ``reduced.variance``, else the PEPit-built one; no SDP is solved for it): ``proved``;
where none re-verifies but a point is recorded as certified by two solvers, ``certified``; else no rate is known and
the verdict is ``inconclusive`` (unknown), never ``holds``. It holds for every C_0 >= 0 at once, so no C_0 or C_c is
chosen: the printed steps, L = 1, mu = 0.1 as the table records (scope ``inside``). The verdict reads ``violated``
only where tau8 is at or past ``tau_high`` and the family reads unbounded there in this run (one small SDP).
The room tau_p/tau8 is published with its bracket [tau_low/tau8, tau_high/tau8).

Control (theorem kind, changed: the exponent): tau8 replaced by the front's tau_high; the reduced PEP is solved there
live (one SDP, under a second) and must read unbounded, so the verdict is violated because no member contracts at
that rate. The chosen-constant computation this claim used to be (the reconstructed shape at C_0 = C_c = 1 and 16 x
the printed steps) is the study ``fednmap.pep.shape_exponent`` (:mod:`.family`).
"""

from __future__ import annotations

import math
from typing import Any

from fedbounds.checks.registry import CheckContext, CheckResult, register
from fedbounds.checks.verdicts.controls import THEOREM, control
from fedbounds.checks.verdicts.verdict import EXACT_RTOL, HOLDS, INCONCLUSIVE, VIOLATED, Verdict, slack_of

__all__ = ["EXPONENT", "check_theorem8_exponent", "decide_exponent", "exponent_verdict", "proved_rate", "theorem_tau"]

EXPONENT = "fednmap.pep.theorem8_exponent"


def theorem_tau(fr: dict[str, Any], scale: float = 1.0) -> float:
    """Theorem 8's largest exponent (C_0 = 0) at the front's point in units of eta_hat
    (:func:`fedbounds.theory.fednmap.theorem8_c0.theorem_tau`), times ``scale`` (a test plants a wrong exponent)."""
    from fedbounds.theory.fednmap import theorem8_c0 as T8

    return scale * T8.theorem_tau(fr)


def _reverify(fr: dict[str, Any], tau: float, record: dict[str, Any] | None) -> dict[str, Any] | None:
    """The stored certificate of the searched PEP at rate ``tau`` re-verified against the PEP rebuilt here (the
    reduced form at the variance its record states, or :func:`~.reduced.variance`; else the PEPit-built form), or
    None where no stored certificate matches either."""
    from fedbounds.checks.fednmap.spep import reduced
    from fedbounds.checks.fednmap.spep.existence import _exact, reduced_build, steps
    from fedbounds.checks.fednmap.spep.search import build_search_spep

    n, Q, m, rho = fr["n"], fr["Q"], fr["m"], fr["rho"]
    s2 = float((record or {}).get("sigma2") or reduced.variance(n, Q, m, rho))
    p = steps(Q, m, rho)
    builds = (lambda: reduced_build(n, Q, tau, m, rho, s2),
              lambda: build_search_spep(1.0, rho, p["gamma"], p["eta_a"], p["eta_s"], n, Q, tau, 0.1, symmetric=n >= 3))
    for build in builds:
        try:
            proof = _exact(build(), 0.0, None, make=False)
        except Exception as exc:  # a damaged or mismatched file: not proved, said so
            return {"status": f"not proved: {exc}"}
        if proof is not None:
            return proof
    return None


def proved_rate(fr: dict[str, Any]) -> tuple[str, float | None, dict[str, Any]]:
    """(evidence, tau_p, details): the largest rate of the front with a certificate re-verified here (``proved``),
    else the largest recorded as certified by two solvers (``certified``), else ``unknown`` with None. Candidates are
    tau_low and the points, largest first; the first that re-verifies ends the search."""
    cands = [(float(fr["tau_low"]), None)] if fr.get("tau_low") else []
    cands += sorted(((float(p["tau"]), p) for p in fr.get("points", []) if p.get("tau")), key=lambda t: -t[0])
    tried = []
    for tau, p in cands:
        proof = _reverify(fr, tau, (p or {}).get("proof"))
        if proof is not None and proof.get("status") == "proved" and math.isfinite(float(proof["bound"])):
            return "proved", tau, {"proof": proof, "tau_proved": tau}
        tried.append({"tau": tau, "proof": None if proof is None else proof.get("status")})
    cert = [tau for tau, p in cands if p is not None and p.get("status") == "certified"]
    if cert:
        return "certified", max(cert), {"tau_certified": max(cert), "not_reverified": tried}
    return "unknown", None, {"not_reverified": tried}


def decide_exponent(tau8: float, tau_p: float | None, tau_high: float | None, unbounded_at_high: bool | None) -> tuple[str, float]:
    """(status, observed tau8/tau_p): holds where tau8 <= tau_p (a member contracts at a rate at least the theorem's);
    violated where tau8 >= tau_high and the family reads unbounded at tau_high (no member contracts there, nor at
    any larger rate); inconclusive otherwise (between the two ends, or no rate known)."""
    obs = tau8 / tau_p if tau_p else math.nan
    if tau_p and tau8 <= tau_p * (1 + EXACT_RTOL):
        return HOLDS, obs
    if tau_high is not None and unbounded_at_high and tau8 >= tau_high * (1 - EXACT_RTOL):
        return VIOLATED, (obs if tau_p else math.inf)
    return INCONCLUSIVE, obs


def _at(fr: dict[str, Any]) -> dict[str, float]:
    """The front's point for the verdict's scope: Theorem 5's printed steps at window m, C_0 = 0 (the exponent's
    largest; the verdict covers every C_0 >= 0)."""
    from fedbounds.checks.fednmap.spep.existence import MU, L, steps

    p = steps(fr["Q"], fr["m"], fr["rho"])
    return {"L": L, "rho": fr["rho"], "mu": MU, "n": fr["n"], "Q": fr["Q"], "m": fr["m"], "gamma": p["gamma"],
            "eta_hat": p["eta_hat"], "eta_a": p["eta_a"], "C_0": 0.0}


def _label(fr: dict[str, Any]) -> str:
    return (f"n={fr['n']} Q={fr['Q']} m={fr['m']} rho={fr['rho']:g} printed steps, searched Lyapunov function: Theorem 8's "
            "largest exponent (C_0 = 0) against the family's front")


def exponent_verdict(fr: dict[str, Any], tau8: float, evidence: str, tau_p: float | None,
                     unbounded_at_high: bool | None, instance: str | None = None, **details: Any) -> Verdict:
    """The verdict tau8/tau_p <= 1 at the front (:func:`decide_exponent`), the room and its bracket in details."""
    hi = fr.get("tau_high")
    status, obs = decide_exponent(tau8, tau_p, hi, unbounded_at_high)
    room = None if not tau_p else tau_p / tau8
    bracket = None if not (fr.get("tau_low") and hi) else (fr["tau_low"] / tau8, hi / tau8)
    label = instance or _label(fr)
    return Verdict(claim_id=EXPONENT, instance=f"{label} [{evidence}]", observed=obs, bound=1.0, ci_low=obs, ci_high=obs,
                   status=status, slack=slack_of(1.0, obs), exact=True,
                   details={"at": _at(fr), "evidence": evidence, "tau_theorem8": tau8, "tau_family": tau_p,
                            "tau_low": fr.get("tau_low"), "tau_high": hi, "room": room, "room_bracket": bracket,
                            "unbounded_at_tau_high": unbounded_at_high, **details})


def _unbounded(fr: dict[str, Any], tau: float) -> tuple[bool, dict[str, Any]]:
    """Whether the family reads unbounded at rate ``tau`` in this run (the reduced PEP, one Clarabel solve)."""
    from fedbounds.checks.fednmap.spep import reduced

    rec = reduced.point(fr["n"], fr["Q"], tau, m=fr["m"], rho=fr["rho"])
    return rec["status"] == "unbounded", {"status": rec["status"], "K": rec["K"], "statuses": rec["statuses"]}


@register(EXPONENT, title="Theorem 8's per-round exponent at the printed steps: the searched Lyapunov family contracts at its "
          "largest rate (C_0 = 0)", label="Theorem 8", status="reconstructed", family="fednmap.pep")
def check_theorem8_exponent(ctx: CheckContext, scale: float = 1.0) -> CheckResult:
    """tau8/tau_p <= 1 at the front (module docstring); ``scale``: Theorem 8's exponent times this (a test plants a
    wrong one). Control: tau8 -> tau_high, solved live."""
    from fedbounds.theory.fednmap import theorem8_c0 as T8

    res = CheckResult(EXPONENT)
    fr = T8.front()
    if not fr.get("tau_low") or not fr.get("tau_high"):
        res.notes.append("no decided front in theory/fednmap/theorem8_c0.json (tau_low / tau_high missing): no rate of the "
                         "family is known, no verdict (run python -m fedbounds.checks.fednmap.spep.existence --write)")
        if fr:
            res.verdicts.append(exponent_verdict(fr, theorem_tau(fr, scale), "unknown", None, None))
        return res
    ctx.tick("Theorem 8 exponent: re-verify the front's certificate")
    evidence, tau_p, det = proved_rate(fr)
    tau8 = theorem_tau(fr, scale)
    live: dict[str, Any] = {}

    def high() -> bool:  # the family's reading at tau_high in this run, solved once
        if not live:
            ctx.tick("Theorem 8 exponent: the family at tau_high")
            live["unbounded"], live["record"] = _unbounded(fr, float(fr["tau_high"]))
        return live["unbounded"]

    past = tau8 >= float(fr["tau_high"]) * (1 - EXACT_RTOL)
    res.verdicts.append(exponent_verdict(fr, tau8, evidence, tau_p, high() if past else None, **det))
    if evidence == "unknown":
        res.notes.append("no rate of the front re-verifies (no certificate matches the rebuilt PEP) and none is recorded "
                         "as certified by two solvers: unknown, no verdict")
    bad = exponent_verdict(fr, float(fr["tau_high"]), evidence, tau_p, high(), instance=_label(fr) + ", exponent -> tau_high",
                           live_at_tau_high=live.get("record"))
    res.negatives.append(control(
        bad, changed="exponent", what=f"Theorem 8's tau 2 mu/9 = {tau8:.4g} replaced by the front's tau_high = "
        f"{fr['tau_high']:.4g}, where the family is solved live and must read unbounded (no member contracts)",
        before=tau8, after=float(fr["tau_high"]), violated_at=_label(fr), kind=THEOREM))
    v = res.verdicts[0]
    if v.details["room"] is not None:
        lo, hi = v.details["room_bracket"] or (v.details["room"], math.nan)
        res.tightness = {"summary": f"room x{v.details['room']:.3g} [{evidence}] (largest rate of the searched family in "
                         f"[x{lo:.3g}, x{hi:.3g}) of Theorem 8's at C_0 = 0; printed steps)", "room": v.details["room"],
                         "room_bracket": v.details["room_bracket"]}
    else:
        res.tightness = {"summary": "no rate of the family known", "room": None}
    res.notes.append("the exponent is compared at C_0 = 0, its largest value: holding there it holds for every C_0 >= 0, "
                     "so nothing here depends on a C_0 or C_c we chose; the chosen-constant figures (C_0 = C_c = 1, 16 x "
                     "the printed steps) are the study fednmap.pep.shape_exponent")
    return res
