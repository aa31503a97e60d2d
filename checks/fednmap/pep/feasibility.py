"""PEP-certified FedNMap steps at any number of clients n, for ``fedbounds feasible --pep-certify``.

The committed grid (:mod:`fedbounds.theory.fednmap.pep_evidence`, ``STEPS``) certifies the largest multiple k of
Theorem 5's printed (eta_hat, eta_a) at n in {1, 2, 3}; :func:`fedbounds.theory.fednmap.pep_steps.certified_steps`
answers from it alone, so a point with n = 10 is "not covered". The client-symmetric block form
(:mod:`fedbounds.checks.pep.symmetric`, docs/fednmap-reconstruction.md §10.4) solves the same worst case in two
PSD blocks whose sizes do not depend on n, so the grid's multiplier can be certified at the user's n directly.

The argument. At the user's (rho/L, gamma L, Q) the grid gives, per horizon T, the smallest k over its n with the
constants (C_0, C_c) that certified it. We certify the descent (measure (a) of :mod:`fedbounds.checks.fednmap.pep.encoding`,
ratio w d T <= 1) at that k, those constants and the user's n, in block form, with two solvers optimal and agreeing
(the grid's standard). Certified at every grid horizon: the steps k x printed are PEP-certified at this n; that k
is a lower bound on the largest certified multiple there (the grid's search assumed the certified multipliers form
an interval [0, k*]; n clients contain one client by identical clients, so k* at n is at most k* at n = 1). Cost:
one SDP pair per horizon, independent of n (measured under load: about 1 s at Q = 1, 4 s at Q = 2, 20 s at Q = 3).
"""

from __future__ import annotations

import math
import time
from typing import Any

from fedbounds.theory.fednmap import pep_evidence as ev
from fedbounds.theory.fednmap.pep_steps import REL_TOL, printed_steps

__all__ = ["certify_at_n"]


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=0.0)


def certify_at_n(L: float, rho: float, n: int, Q: int, gamma: float) -> dict[str, Any]:
    """The grid's certified multiple k at (rho/L, gamma L, Q), certified again at ``n`` clients in block form.

    Returns the ``pep_certified_steps`` data of a feasibility report: ``covered`` True with k, the steps, the
    horizons and each certificate, or ``covered`` False with a one-line ``reason``.
    """
    from fedbounds.checks.fednmap.pep.encoding import descent_check, theorem5_steps

    rows = [r for r in ev.STEPS if ev.is_evidence(r) and r.get("k") is not None
            and _close(r["rho"] / r["L"], rho / L) and _close(r["gamma"] * r["L"], gamma * L) and r["Q"] == Q]
    if not rows:
        return {"covered": False, "reason": f"(rho/L, gamma L, Q) = ({rho / L:.6g}, {gamma * L:.6g}, {Q}) is off the PEP grid: "
                "no multiplier to certify at another n"}
    p1 = theorem5_steps(1.0, rho / L, Q, gamma=gamma * L)  # the grid's scale: L = 1, with d = eta_hat/9 from the theory
    p = printed_steps(L, rho, Q, gamma)
    horizons, t0 = [], time.process_time()
    for T in sorted({r["T"] for r in rows}):
        row = min((r for r in rows if r["T"] == T), key=lambda r: (r["k"], r["n"]))
        k, C_0, C_c = float(row["k"]), float(row["C_0"]), float(row["C_c"])
        cert = descent_check(1.0, rho / L, gamma * L, k * p1["eta_a"], p1["eta_s"], n, Q, T, C_0, C_c,
                             k * p1["descent_coef"], symmetric=True)
        ok = cert.certified and cert.value is not None and cert.value <= 1.0  # "certified" or "proved"
        horizons.append({"T": T, "k": k, "C_0": C_0, "C_c": C_c, "status": cert.status, "value": cert.value,
                         "statuses": dict(cert.statuses), "gaps": dict(cert.gaps), "certified": ok})
    seconds = round(time.process_time() - t0, 2)
    bad = [h for h in horizons if not h["certified"]]
    if bad:
        which = "; ".join(f"T = {h['T']}: {h['status']}, w d T = {h['value']}" for h in bad)
        return {"covered": False, "reason": f"the block-form certificate at n = {n} failed ({which})", "horizons": horizons,
                "cpu_seconds": seconds}
    binding = min(horizons, key=lambda h: (h["k"], h["T"]))
    k = binding["k"]
    return {"covered": True, "n": n, "k": k, "ratio": k, "eta_hat": k * p["eta_hat"], "eta_a": k * p["eta_a"], "eta_s": p["eta_s"],
            "eta_hat_printed": p["eta_hat"], "eta_a_printed": p["eta_a"], "C_0": binding["C_0"], "C_c": binding["C_c"],
            "T_binding": binding["T"], "T": [h["T"] for h in horizons], "horizons": horizons, "status": "certified",
            "form": "client-symmetric block form (computed now)", "cpu_seconds": seconds}


#: the theorems whose feasibility report this module can extend (``fedbounds feasible ... --pep-certify``)
THEOREMS = ("fednmap.theorem5", "fednmap.theorem8")


def certify(result: Any) -> dict[str, Any]:
    """``--pep-certify``: the ``pep_certified_steps`` data at the result's (L, rho, gamma, n, Q), from the committed
    grid where it covers the point, else certified now at the result's n (:func:`certify_at_n`)."""
    from fedbounds.theory.fednmap.pep_steps import certified_steps

    c = result.constants
    got = certified_steps(c["L"], c["rho"], c["n"], c["Q"], gamma=result.chosen["gamma"])
    if got.covered:
        return got.to_dict() | {"form": "committed grid"}
    return certify_at_n(c["L"], c["rho"], int(c["n"]), int(c["Q"]), result.chosen["gamma"])
