"""Theorem 8 as an existence claim, at Theorem 5's printed steps: the smallest C_0, the front, the speedup (§10.9).

Theorem 8 (arXiv 2602.03357) says some Lyapunov function gives the rate r(C_0) = 2 eta_hat mu/(9 (1 + gamma mu C_0))
and the floor 36 sigma^2/(m n mu Q) + 12100 eta_a^2 Q L^2 sigma^2/(mu (1 - gamma rho)^2). With the function searched
(:mod:`fedbounds.checks.fednmap.spep.search`: K*(r) the smallest per-round noise coefficient of any member of the
family contracting at rate r), the theorem holds at a point on the family exactly when some C_0 >= 0 has

    K*(r(C_0)) / r(C_0) <= printed floor / sigma^2          (the one-round floor K sigma^2/r within the printed one).

The smallest such C_0 is the lost constant, recovered as what the theorem needs (no C_c is chosen: the correction
weight is a multiplier of the search). r(C_0) is largest at C_0 = 0, and K*(r)/r is what a probe decides, so
:func:`smallest_c0` probes C_0 = 0 first and bisects upward only where it fails.

Steps: Theorem 5's printed maxima at window m (``k = 1``; the 16x results of the fixed shape stay in
``spep_grid.json``, labelled as such). The SDPs there are badly conditioned for SCS (``optimal_inaccurate``, its
values off by up to 10x) while Clarabel is ``optimal`` with duality gaps below 1e-8: a point without two agreeing
solvers is decided by an exact rational certificate of the PEP built from Clarabel's multipliers
(:mod:`fedbounds.checks.pep.certificate`; its bound, not the float value, is the K used), else it is ``inconclusive``.

Run ``python -m fedbounds.checks.fednmap.spep.existence --write`` to rewrite :data:`TARGET` and :data:`SPEEDUP`
(proves and stores the certificates it needs; minutes at nice 15); ``--families`` writes :data:`FAMILIES_TARGET` (the
floor per Lyapunov family up to n = 4096 and n = inf, docs §10.10) and ``--front-scan`` :data:`FRONT_TARGET`.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from fedbounds.checks.fednmap.spep.search import build_search_spep, searched_noise

__all__ = ["FAMILIES_TARGET", "FRONT_TARGET", "POINTS", "SPEEDUP", "SPEEDUP_NS", "SPEEDUP_QS", "TARGET", "families_table",
           "fit_inverse", "front", "front_scan", "largest_rate", "point", "printed_floor", "smallest_c0", "solve", "speedup_table",
           "table"]

L, MU = 1.0, 0.1
TARGET = "theory/fednmap/theorem8_c0.json"
SPEEDUP = "theory/fednmap/theorem8_speedup.json"
#: the speedup table of another family than merit
SPEEDUP_OF = "theory/fednmap/theorem8_speedup_{family}.json"
#: the table's points (n, Q, m, rho): gamma rho = rho/(5 (1 + rho)) at Theorem 5's largest gamma (L = 1)
POINTS: tuple[tuple[int, int, int, float], ...] = tuple(
    (n, Q, m, rho) for rho in (0.1, 0.5) for m in (1, 4) for n, Q in ((1, 1), (2, 1), (2, 2), (4, 1), (4, 2)))
SPEEDUP_NS: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)
SPEEDUP_QS: tuple[int, ...] = (1, 2, 4, 8)
#: the block form from this n on (the full form's exact certificate is made directly below it)
BLOCK_FROM = 3
#: solves from this n on use the client-symmetric reduced PEP (:mod:`.reduced`; at n = 1 it is the plain PEP); a proof
#: record says which PEP it is of (``form``: "reduced", or absent for the PEPit-built one)
REDUCED_FROM = 1


def steps(Q: int, m: int = 1, rho: float = 0.1, k: float = 1.0) -> dict[str, float]:
    """gamma, eta_a, eta_s, eta_hat at k times Theorem 5's printed maxima (window m; theory layer)."""
    from fedbounds.checks.fednmap.pep.encoding import theorem5_steps

    st = theorem5_steps(L, rho, Q, m)
    eta_a = k * st["eta_a"]
    return {"gamma": st["gamma"], "eta_a": eta_a, "eta_s": st["eta_s"], "eta_hat": st["eta_s"] * eta_a * Q}


def printed_floor(n: int, Q: int, m: int, rho: float, k: float = 1.0, mu: float = MU) -> float:
    """Theorem 8's floor per sigma^2 at the point (sympy, :mod:`fedbounds.theory.fednmap.formulas`)."""
    from fedbounds.theory.core.evaluate import evaluate
    from fedbounds.theory.fednmap import formulas as fm

    p = steps(Q, m, rho, k)
    return evaluate(fm.theorem8_floor, {"L": L, "rho": rho, "gamma": p["gamma"], "eta_a": p["eta_a"], "n": n, "Q": Q,
                                        "m": m, "mu": mu, "sigma2": 1.0})


def rate(Q: int, m: int, rho: float, C_0: float, k: float = 1.0, mu: float = MU) -> float:
    """Theorem 8's per-round exponent r(C_0) at the point (theory layer)."""
    from fedbounds.checks.fednmap.pep.encoding import theorem8_exponent

    p = steps(Q, m, rho, k)
    return theorem8_exponent(p["eta_hat"], mu, p["gamma"], C_0)


def solve(n: int, Q: int, tau: float, m: int = 1, rho: float = 0.1, k: float = 1.0, mu: float = MU,
          family: str = "merit", prove: bool = False, second: bool = True, room: float | None = None,
          reduced: bool | None = None) -> dict[str, Any]:
    """K*(tau eta_hat) at the point: ``status`` proved / certified / unbounded / inconclusive, ``K`` (the proved bound
    when proved, else the certified value; +inf when unbounded), the solvers' values, statuses and gaps, and ``proof``
    (file, exact bound, smallest LDL pivot, verify seconds). ``prove``: make and store a certificate when none is.
    ``second=False``: no SCS run where no certificate decides; Clarabel's optimal value is then returned with status
    ``single solver`` (evidence, never counted as certified).

    ``room``: the largest K the caller's claim allows (Theorem 8: the printed floor times the rate). Where no
    certificate of Clarabel's value is found (or Clarabel is not optimal), a looser bound below ``room`` is proved
    instead (:func:`_exact`); ``K`` is then that proved bound, an upper bound on K*, not K* itself.

    ``reduced``: solve the client-symmetric reduced PEP (:func:`_solve_reduced`) instead of the PEPit-built one; by
    default from n = :data:`REDUCED_FROM` on."""
    import os

    from fedbounds.checks.fednmap.spep.reduced import families

    if (n >= REDUCED_FROM if reduced is None else reduced) and family in families():
        return _solve_reduced(n, Q, tau, m, rho, k, mu, prove or os.environ.get("FEDBOUNDS_PROVE") == "1", family)
    p = steps(Q, m, rho, k)
    sym = n >= BLOCK_FROM
    make = prove or os.environ.get("FEDBOUNDS_PROVE") == "1"
    t0 = time.process_time()
    args = (L, rho, p["gamma"], p["eta_a"], p["eta_s"], n, Q, tau, mu, family)
    # Clarabel first: where its multipliers give an exact certificate, that decides (SCS, inaccurate at the printed
    # steps, is not run); otherwise the two-solver rule
    proof = None
    cert = searched_noise(*args, symmetric=sym, scales=[1.0], solvers=("CLARABEL",))
    run = cert.runs[0]
    if n <= 8 and ((run.optimal and run.dual is not None and run.multipliers is not None) or room is not None):
        ok = run.optimal and run.dual is not None and run.multipliers is not None
        proof = _exact(build_search_spep(*args, symmetric=sym), run.dual if ok else None, run.multipliers if ok else None,
                       make, room)
    if (proof is None or proof.get("status") != "proved") and second:
        cert = searched_noise(*args, symmetric=sym, scales=[1.0])
    rec: dict[str, Any] = {"values": dict(cert.values), "statuses": dict(cert.statuses),
                           "gaps": {s: g for s, g in cert.gaps.items()}, "gram_dim": cert.gram_dim}
    if proof is not None and proof.get("status") == "proved":
        rec.update(status="proved", K=proof["bound"], proof=proof)
    elif cert.certified and len(cert.runs) > 1 and cert.disagreement <= cert.rel_tol * cert.value:
        # the relative rule alone: K is about 1e-6 here, the size of certify's absolute tolerance
        rec.update(status="certified", K=cert.value)
    elif cert.unbounded and second:
        rec.update(status="unbounded", K=math.inf)
    elif not second and run.optimal and run.dual is not None:
        rec.update(status="single solver", K=run.dual)
    else:
        rec.update(status="inconclusive", K=None)
    if proof is not None and proof.get("status") != "proved":
        rec["proof"] = proof
    rec["cpu_s"] = round(time.process_time() - t0, 2)
    return rec


def _solve_reduced(n: int, Q: int, tau: float, m: int, rho: float, k: float, mu: float, make: bool,
                   family: str = "merit") -> dict[str, Any]:
    """:func:`solve` from the client-symmetric reduced PEP (:func:`.reduced.point`; its size does not grow with n):
    ``proved`` by its exact certificate (re-verified against the rebuilt rows), else Clarabel's value as ``single
    solver`` (evidence, never a decision). ``proof["form"]`` is ``"reduced"`` and ``proof["sigma2"]`` the variance
    the PEP is written at (its bound is K sigma2), so a reader rebuilds the same problem (:func:`reduced_build`).
    A family with forms that are not tilt invariant is solved from the free start (:func:`.reduced.start_for`)."""
    from fedbounds.checks.fednmap.spep import reduced

    rec = reduced.point(n, Q, tau, m=m, rho=rho, k=k, mu=mu, make=make, family=family, start=reduced.start_for(family))
    out: dict[str, Any] = {"values": {"CLARABEL": rec["values"][-1]}, "statuses": {"CLARABEL": rec["statuses"][-1]},
                           "gaps": {"CLARABEL": rec["gaps"][-1]}, "gram_dim": rec["gram_dim"], "status": rec["status"], "K": rec["K"],
                           "cpu_s": rec["cpu_s"], "form": "reduced"}
    if "proof" in rec:
        out["proof"] = {**rec["proof"], "form": "reduced", "sigma2": rec["sigma2"], "bound_sigma2": rec["proof"]["bound"],
                        "bound": rec["K"]}
    return out


def reduced_build(n: int, Q: int, tau: float, m: int, rho: float, sigma2: float, k: float = 1.0, mu: float = MU) -> Any:
    """The reduced PEP's builder at a point of the table (what :func:`_solve_reduced` proved), for re-verification."""
    from fedbounds.checks.fednmap.spep.reduced import build_reduced_search

    p = steps(Q, m, rho, k)
    return build_reduced_search(L, rho, p["gamma"], p["eta_a"], p["eta_s"], n, Q, tau, mu, sigma2=sigma2)


def _exact(build: Any, value: float | None, multipliers: Any, make: bool, room: float | None = None) -> dict[str, Any] | None:
    """The stored exact certificate of ``build``'s PEP (re-verified, with its smallest pivot), or, with ``make``, a new
    one proved from ``multipliers`` and stored. None when neither.

    With ``room`` (the largest bound the claim allows), when Clarabel's ``value`` itself cannot be proved, looser
    targets are tried: 1.1 and 2 times the value (while below ``room``), then ``room``/2 from the interior dual alone
    (no solver optimum needed: the dual of a bound with room is strictly feasible, where the optimum's is on a face).
    The certificate then proves that looser bound; ``target`` records which was proved."""
    import os

    from fedbounds.checks.pep.certificate import (
        _describe_stored,
        _exact_problem,
        _write,
        check_stored,
        describe,
        load,
        problem_of,
        prove,
        stored,
    )

    try:
        pb = problem_of(build)
    except ValueError as exc:
        return {"status": f"not proved: {exc}"}
    # the binary64 rows first; where PEPit's float combinations admit no exact dual, the same PEP built in exact
    # arithmetic (each scalar rounded once, every relation between coefficients kept; certificate.exact_arithmetic)
    pbx = _exact_problem(build, pb)
    path, cert = stored(pb.digest), None
    if path.exists():
        cert = load(path)
    elif pbx is not None and stored(pbx.digest).exists():
        pb, path = pbx, stored(pbx.digest)
        cert = load(path)
    elif make:
        targets = [] if value is None else [("value", value)]
        if room is not None and room > 0:
            targets += [(f"{f:g} x value", f * value) for f in (1.1, 2.0) if value is not None and f * value < room]
            targets.append(("room/2", room / 2))
        for what, target in targets:
            starts = [multipliers] if multipliers is not None else []
            cert = prove(pb, target, starts)
            if cert is None and pbx is not None:
                cert = prove(pbx, target, starts)
                if cert is not None:
                    pb, path = pbx, stored(pbx.digest)
                    cert["problem"]["data"] = "exact"
            if cert is not None:
                cert["target"] = what
                break
        if cert is None:
            return {"status": "not proved: no exact certificate found", "hash": pb.digest,
                    "targets": [w for w, _ in targets]}
        if (desc := describe(build)) is not None:  # self-contained: the file names the problem it proves
            cert["problem"].update(desc)
        _write(path, cert)
    else:
        return None
    if cert is not None and os.environ.get("FEDBOUNDS_DESCRIBE_STORE") == "1":
        _describe_stored(path, cert, build, pb)  # the one-off migration to self-contained files (docs/provenance.md §7)
    s = check_stored(pb, cert)
    return {"status": "proved", "bound": float(s["bound"]), "bound_exact": str(s["bound"]), "file": path.name,
            "rows": s["rows"], "min_pivot": float(s["min_pivot"]) if s["min_pivot"] is not None else None,
            "max_denominator": s["max_denominator"], "verify_seconds": round(s["seconds"], 4),
            "seconds_to_prove": cert.get("seconds_to_prove"), "data": cert.get("problem", {}).get("data", "binary64"),
            "target": cert.get("target", "value")}


def _holds(rec: dict[str, Any], r: float, floor: float) -> str:
    """meets / fails / unknown: K*(r)/r <= floor, decided only by a proved or certified K (never by an inaccurate one)."""
    if rec["status"] == "unbounded":
        return "fails"
    if rec["status"] not in ("proved", "certified"):
        return "unknown"
    return "meets" if rec["K"] / r <= floor else "fails"


def smallest_c0(n: int, Q: int, m: int = 1, rho: float = 0.1, k: float = 1.0, prove: bool = False,
                c0_max: float = 64.0, rel: float = 0.05) -> dict[str, Any]:
    """The smallest C_0 >= 0 meeting the theorem at the point (module docstring): 0 when C_0 = 0 meets; else a
    bisection on [0, c0_max] to ``rel`` with both ends (the upper end meets, the lower end does not); undecided probes
    narrow nothing and are listed (``undecided``: their C_0; the bisection stops at the first). ``decided``: no probe
    was undecided and the window (C_0_low, C_0_min] is within ``rel`` (or no C_0 up to c0_max meets, every probe failing)."""
    floor = printed_floor(n, Q, m, rho, k)
    eta_hat = steps(Q, m, rho, k)["eta_hat"]
    probes = []

    def probe(c0: float) -> tuple[str, dict[str, Any]]:
        r = rate(Q, m, rho, c0, k)
        rec = solve(n, Q, r / eta_hat, m, rho, k, prove=prove, room=floor * r)
        out = _holds(rec, r, floor)
        probes.append({"C_0": c0, "tau": r / eta_hat, "outcome": out, **rec})
        return out, rec

    out0, rec0 = probe(0.0)
    result = {"n": n, "Q": Q, "m": m, "rho": rho, "gamma_rho": rho * steps(Q, m, rho, k)["gamma"], "k": k,
              "eta_hat": eta_hat, "printed_floor": floor}
    if out0 == "meets":
        r0 = rate(Q, m, rho, 0.0, k)
        return {**result, "C_0_min": 0.0, "C_0_low": 0.0, "decided": True, "undecided": [], "status": rec0["status"], "K": rec0["K"],
                "floor_ratio": rec0["K"] / r0 / floor, "probes": probes}
    lo, hi = 0.0, None
    c = 1.0
    while c <= c0_max:
        o, _ = probe(c)
        if o == "meets":
            hi = c
            break
        if o == "fails":
            lo = c
        c *= 4
    while hi is not None and hi - lo > rel * hi:
        mid = (lo + hi) / 2
        o, _ = probe(mid)
        if o == "meets":
            hi = mid
        elif o == "fails":
            lo = mid
        else:
            break
    best = next((p for p in probes if p["C_0"] == hi), None)
    undecided = [p["C_0"] for p in probes if p["outcome"] == "unknown"]
    decided = not undecided and (hi is None or hi - lo <= rel * hi)
    return {**result, "C_0_min": hi, "C_0_low": lo, "decided": decided, "undecided": undecided,
            "status": None if best is None else best["status"],
            "K": None if best is None else best["K"],
            "floor_ratio": None if best is None else best["K"] / (best["tau"] * eta_hat) / floor, "probes": probes}


def largest_rate(n: int, Q: int, m: int = 1, rho: float = 0.1, k: float = 1.0, tau_hi: float = 2.0,
                 rel: float = 0.02, prove: bool = False, family: str = "merit") -> dict[str, Any]:
    """The largest tau (rate tau eta_hat) at which some member of the family contracts (K* finite), by bisection
    between a finite and an unbounded probe; both ends returned (the front's right end). ``prove``: a finite probe
    may be decided by a new exact certificate (at the printed steps SCS cannot agree, so without one it is undecided)."""
    lo, hi, und = 0.0, tau_hi, []
    if solve(n, Q, hi, m, rho, k, family=family)["status"] != "unbounded":
        return {"tau_low": None, "tau_high": None, "note": f"finite at tau = {tau_hi}: raise tau_hi"}
    while hi - lo > rel * hi:
        mid = (lo + hi) / 2
        st = solve(n, Q, mid, m, rho, k, family=family, prove=prove)["status"]
        if st == "unbounded":
            hi = mid
        elif st in ("proved", "certified"):
            lo = mid
        else:
            und.append(mid)
            break
    return {"tau_low": lo, "tau_high": hi, "undecided": und}


def front(n: int, Q: int, m: int = 1, rho: float = 0.1, k: float = 1.0, fractions: tuple[float, ...] = (0.1, 0.5, 0.9, 0.99),
          prove: bool = False, family: str = "merit") -> dict[str, Any]:
    """The Pareto front at one point: the largest rate, and K*(tau) at fractions of it (K* is increasing in tau)."""
    top = largest_rate(n, Q, m, rho, k, prove=prove, family=family)
    pts = []
    if top.get("tau_low"):
        for f in fractions:
            tau = f * top["tau_low"]
            rec = solve(n, Q, tau, m, rho, k, prove=prove, family=family)
            pts.append({"tau": tau, "status": rec["status"], "K": rec["K"], "gaps": rec["gaps"],
                        **({"proof": rec["proof"]} if "proof" in rec else {})})
    return {"n": n, "Q": Q, "m": m, "rho": rho, "k": k, "theorem_tau_max": 2 * MU / 9, **top, "points": pts,
            **({"family": family} if family != "merit" else {})}


def point(n: int, Q: int, m: int, rho: float, k: float = 1.0, prove: bool = False) -> dict[str, Any]:
    """One row of the C_0 table: the smallest C_0 and the largest rate of the family at the point."""
    row = smallest_c0(n, Q, m, rho, k, prove=prove)
    return row


def _decided(row: dict[str, Any]) -> bool:
    """Whether a committed row is final: its own ``decided`` flag, or (rows written before the flag) C_0 = 0 proved."""
    if "decided" in row:
        return bool(row["decided"])
    return row.get("C_0_min") == 0 and row.get("status") in ("proved", "certified")


def table(prove: bool = True, write_partial: Path | None = None, resume: dict[str, Any] | None = None,
          budget_s: float | None = None) -> dict[str, Any]:
    """The recovered-C_0 table over :data:`POINTS` (Theorem 5's printed steps) and the front at (2, 1, 1, 0.1).

    ``resume``: a committed table; its decided rows (:func:`_decided`) are kept as they are and only the others (and
    the points it lacks) are computed; its front is kept too (``front_from`` records the run it came from). An
    undecided row stays as committed until its point is recomputed. ``budget_s``: no new point is started after this
    many wall seconds; a point left out has a row saying so (``C_0_min`` None, ``decided`` False, ``note``). Every
    partial write holds all the rows known so far, in :data:`POINTS` order."""
    old = {(r["n"], r["Q"], r["m"], r["rho"]): r for r in (resume or {}).get("rows", [])}
    kept_front = (resume or {}).get("front")
    rows: dict[tuple[int, int, int, float], dict[str, Any]] = {}

    def ordered() -> list[dict[str, Any]]:
        return [rows[p] for p in POINTS if p in rows]

    def wrap(fr: dict[str, Any] | None) -> dict[str, Any]:
        out = _wrap(ordered(), fr, "table")
        if resume is not None:
            out["resumed_from"] = resume.get("generated")
        return out

    todo = [k for k in POINTS if not (k in old and _decided(old[k]))]
    for key in POINTS:
        if key in old:
            rows[key] = old[key]
        else:
            rows[key] = {"n": key[0], "Q": key[1], "m": key[2], "rho": key[3], "C_0_min": None, "C_0_low": None,
                         "decided": False, "status": None, "K": None, "floor_ratio": None, "probes": [],
                         "gamma_rho": key[3] * steps(key[1], key[2], key[3])["gamma"],
                         "note": "not computed: the run's time budget ended first"}
    t_start = time.time()
    fr = None
    if kept_front is not None:
        fr = {**kept_front, "front_from": kept_front.get("front_from", resume.get("generated") if resume else None)}
    for key in sorted(todo, key=lambda k: (k[0] * k[1], k[2])):  # cheap ones first
        if budget_s is not None and time.time() - t_start > budget_s:
            break
        rows[key] = point(*key, prove=prove)
        print(json.dumps({k: v for k, v in rows[key].items() if k != "probes"}), file=sys.stderr, flush=True)
        if write_partial is not None:
            _write(write_partial, wrap(fr))
    return wrap(fr if fr is not None else front(2, 1, prove=prove))


def speedup_table(tau: float = 2 * MU / 9, k: float = 1.0, write_partial: Path | None = None, make: bool = True,
                  done: dict[str, Any] | None = None, family: str = "merit") -> dict[str, Any]:
    """The floor K*(r)/r at the theorem's rate with C_0 = 0 (tau = 2 mu/9), n up to 64, Q up to 8, m = 1, rho = 0.1, k
    times the printed steps, every point from the client-symmetric reduced PEP (:mod:`.reduced`: its size does not
    grow with n) and, with ``make``, proved by an exact certificate made and stored where none is; slopes in n (per
    Q), Q (per n) and nQ with 95% intervals, fitted to the proved floors only (a row without a proof is listed, not
    fitted). ``family``: a name of :func:`.reduced.families`, solved from :func:`.reduced.start_for`'s start."""
    from fedbounds.checks.fednmap.spep import reduced
    from fedbounds.checks.fednmap.spep.speedup import fit_slope

    rows: list[dict[str, Any]] = []
    for n in SPEEDUP_NS:
        for Q in SPEEDUP_QS:
            rec = reduced.point(n, Q, tau, k=k, make=make, family=family, start=reduced.start_for(family))
            r = tau * steps(Q, k=k)["eta_hat"]
            floor = None if rec["K"] is None else rec["K"] / r
            rows.append({**rec, "floor": floor,
                         "floor_over_printed": None if floor is None else floor / printed_floor(n, Q, 1, 0.1, k)})
            print(json.dumps({key: rows[-1].get(key) for key in ("n", "Q", "status", "floor", "room", "cpu_s")}),
                  file=sys.stderr, flush=True)
            if write_partial is not None:
                _write(write_partial, {**(done or {}), f"k={k:g}": _wrap(rows, None, "speedup", family)})
    ok = [r for r in rows if r["status"] == "proved" and r["floor"] > 0]
    fits = [{"axis": "n", "series": f"Q={Q}", **fit_slope([r["n"] for r in ok if r["Q"] == Q],
                                                          [r["floor"] for r in ok if r["Q"] == Q])} for Q in SPEEDUP_QS]
    fits += [{"axis": "Q", "series": f"n={n}", **fit_slope([r["Q"] for r in ok if r["n"] == n],
                                                           [r["floor"] for r in ok if r["n"] == n])} for n in SPEEDUP_NS]
    fits.append({"axis": "nQ", "series": "all", **fit_slope([r["n"] * r["Q"] for r in ok], [r["floor"] for r in ok])})
    local = [{"Q": Q, "n": (a["n"], b["n"]), "slope": math.log(b["floor"] / a["floor"]) / math.log(b["n"] / a["n"])}
             for Q in SPEEDUP_QS for a, b in zip([r for r in ok if r["Q"] == Q], [r for r in ok if r["Q"] == Q][1:])]
    out = _wrap(rows, None, "speedup", family)
    out.update(fits=fits, local_slopes=local, tau=tau, k=k,
               form="client-symmetric reduced PEP (fedbounds.checks.fednmap.spep.reduced), proved per point")
    return out


#: the families table (:func:`families_table`): n (INF the limit SDP; the slopes and fits use n <= 64), and the
#: (family, start) pairs measured; a family that is not tilt invariant in the normal form is measured (its value is
#: below the family's K*, docs/fednmap-reconstruction.md §10.10) but is not a Lyapunov bound
FAMILIES_NS: tuple[int | str, ...] = (1, 2, 4, 8, 16, 32, 64, 256, 1024, 4096, "inf")
FAMILIES_RUNS: tuple[tuple[str, str], ...] = (("merit", "normal"), ("merit", "free"), ("wide", "normal"), ("wide", "free"),
                                              ("quad", "normal"), ("quad", "free"))
#: the free start's PEP has the tilts as recession directions (its dual lies on a face): Clarabel reads it 'optimal'
#: but below merit's proved value (impossible: it holds more instances) at Q >= 4 and at Q = 2 from n = 32 on, so it
#: is measured at these Q and up to this n only (its equality with merit is exact: docs/fednmap-reconstruction.md §10.10)
FREE_UP_TO = 16
FREE_QS: tuple[int, ...] = (1, 2)
FAMILIES_TARGET = "theory/fednmap/theorem8_families.json"
#: at n = INF, where K* may be about 0 (Q = 1), the bound proved is K*(INF) <= value + INF_ROOM K*(1) when no relative
#: room gives a certificate
INF_ROOM = 1e-6


def fit_inverse(ns: list[float], ys: list[float], powers: tuple[float, ...] = (1.0, 0.0)) -> dict[str, Any]:
    """y = sum_p c_p n^(-p), fitted by least squares relative to y (each point's residual divided by its y), with 95%
    t intervals: ``powers`` (1, 0) is a/n + b; (1, 0.5, 0) adds c/sqrt(n). None entries with too few points."""
    import numpy as np
    from scipy import stats

    x, y = np.asarray(ns, float), np.asarray(ys, float)
    A = np.vstack([x ** -p for p in powers]).T / y[:, None]
    k, d = A.shape
    if k <= d:
        return {"powers": list(powers), "coefficients": None, "low": None, "high": None, "points": k}
    coef, *_ = np.linalg.lstsq(A, np.ones(k), rcond=None)
    resid = np.ones(k) - A @ coef
    s2 = float(resid @ resid) / (k - d)
    cov = s2 * np.linalg.inv(A.T @ A)
    t = float(stats.t.ppf(0.975, k - d))
    se = np.sqrt(np.maximum(np.diag(cov), 0.0))
    return {"powers": list(powers), "coefficients": coef.tolist(), "low": (coef - t * se).tolist(),
            "high": (coef + t * se).tolist(), "points": k, "max_rel_residual": float(np.abs(resid).max())}


def families_table(tau: float = 2 * MU / 9, qs: tuple[int, ...] = SPEEDUP_QS, ns: tuple[int | str, ...] = FAMILIES_NS,
                   runs: tuple[tuple[str, str], ...] = FAMILIES_RUNS, make_inf: bool = True,
                   write_partial: Path | None = None) -> dict[str, Any]:
    """The floor K*(r)/r at the theorem's rate (C_0 = 0, printed steps, m = 1, rho = 0.1) for each (family, start) of
    ``runs`` at n in ``ns`` and Q in ``qs``, from the reduced PEP (three preconditioned Clarabel solves; ``proved``
    where a stored certificate re-verifies, with ``make_inf`` one is made for merit at n = INF). Per (family, start, Q):
    the slope in n and the fits a/n + b and a/n + c/sqrt(n) + b over n <= 64, beside the limit K*(INF)/r. The free
    start is measured up to n = :data:`FREE_UP_TO`; each row not of merit's normal form records ``over_merit``."""
    from fedbounds.checks.fednmap.spep import reduced
    from fedbounds.checks.fednmap.spep.speedup import fit_slope

    rows: list[dict[str, Any]] = []

    def wrap() -> dict[str, Any]:
        return {"generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                "command": "python -m fedbounds.checks.fednmap.spep.existence --write --families",
                "point": {"L": L, "mu": MU, "k": 1.0, "m": 1, "rho": 0.1, "tau": tau, "steps": "Theorem 5's printed maxima",
                          "families": {f: FAMILY_TEXT[f].split(" (")[0] for f in FAMILY_TEXT},
                          "sigma2": "n Q / eta_hat^2; at n = inf Q / eta_hat^2 (any finite value: K = value / sigma2)",
                          "solver": "Clarabel, three preconditioned solves (checks/pep/precondition.py); 'proved' where "
                                    "an exact certificate re-verifies"},
                "rows": rows, "fits": fits}

    fits: list[dict[str, Any]] = []
    for family, start in runs:
        for Q in qs:
            r = tau * steps(Q)["eta_hat"]
            series = []
            for n in ns:
                if start == "free" and (n == reduced.INF or n > FREE_UP_TO or Q not in FREE_QS):
                    continue
                make = make_inf and n == reduced.INF and family == "merit" and start == "normal"
                k1 = next((x["floor"] * r for x in series if x["n"] == 1 and x["floor"] is not None), None)
                rec = reduced.point(n, Q, tau, make=make, family=family, start=start,
                                    room_abs=None if k1 is None else INF_ROOM * k1)
                floor = None if rec["K"] is None else rec["K"] / r
                row = {"family": family, "start": start, "lyapunov_bound": start == "free" or reduced.tilt_invariant(family),
                       "n": n, "Q": Q, "status": rec["status"], "floor": floor, "statuses": rec["statuses"],
                       "values": [None if v is None else v / r for v in rec["values"]], "rows": rec["rows"],
                       "hash": rec["hash"], "cpu_s": rec["cpu_s"]}
                ref = next((x for x in rows if (x["family"], x["start"], x["n"], x["Q"]) == ("merit", "normal", n, Q)), None)
                if (family, start) != ("merit", "normal") and ref is not None and ref["floor"] and floor is not None:
                    row["over_merit"] = floor / ref["floor"]  # merit's K* from the normal form (proved for n <= 64)
                if "proof" in rec:
                    row["proof"] = {key: rec["proof"].get(key) for key in ("file", "bound_exact", "min_pivot", "verify_seconds")}
                    row["proof"]["sigma2"] = rec["sigma2"]
                    row["proof"]["room_abs"] = rec.get("room_abs")
                rows.append(row)
                series.append(row)
                print(json.dumps({key: row[key] for key in ("family", "start", "n", "Q", "status", "floor", "cpu_s")}),
                      file=sys.stderr, flush=True)
                if write_partial is not None:
                    _write(write_partial, wrap())
            if not series:
                continue
            fin = [x for x in series if x["n"] != reduced.INF and x["n"] <= 64 and x["floor"] is not None and x["floor"] > 0]
            lim = next((x for x in series if x["n"] == reduced.INF), None)
            nn, yy = [x["n"] for x in fin], [x["floor"] for x in fin]
            fits.append({"family": family, "start": start, "Q": Q, "slope_n": fit_slope(nn, yy),
                         "a_over_n_plus_b": fit_inverse(nn, yy), "a_over_n_plus_c_over_sqrt_n_plus_b": fit_inverse(nn, yy, (1.0, 0.5, 0.0)),
                         "limit_floor": None if lim is None else lim["floor"], "limit_status": None if lim is None else lim["status"]})
    return wrap()


#: the front scan's point, its rates (tau) and its target
FRONT_POINT: tuple[int, int, int, float] = (2, 1, 1, 0.1)
FRONT_TAUS: tuple[float, ...] = (0.15, 0.156, 0.158, 0.16, 0.161, 0.162, 0.1625, 0.163, 0.1635, 0.164, 0.172, 0.1875, 0.195,
                                 0.19998)
FRONT_TARGET = "theory/fednmap/theorem8_front_families.json"


def front_scan(taus: tuple[float, ...] = FRONT_TAUS, point_: tuple[int, int, int, float] = FRONT_POINT,
               runs: tuple[tuple[str, str], ...] = FAMILIES_RUNS, make: bool = True) -> dict[str, Any]:
    """K*(tau) at the front's point for each (family, start) of ``runs``, from the reduced PEP (Clarabel, three
    preconditioned solves; ``make``: merit's finite probes proved where a certificate is found). The largest rate of a
    family lies between its last finite and first unbounded probe (Clarabel's readings; an unbounded reading is not
    proved). The quadratic instance f_i = mu/2 ||x||^2, phi = 0 caps every Lyapunov function at tau <= 2 mu - eta_hat mu^2
    (docs/fednmap-reconstruction.md §10.9), recorded as ``instance_cap``."""
    from fedbounds.checks.fednmap.spep import reduced

    n, Q, m, rho = point_
    rows = []
    for family, start in runs:
        for tau in taus:
            rec = reduced.point(n, Q, tau, m=m, rho=rho, make=make and family == "merit" and start == "normal",
                                family=family, start=start)
            rows.append({"family": family, "start": start, "lyapunov_bound": start == "free" or reduced.tilt_invariant(family),
                         "tau": tau, "status": rec["status"], "K": rec["K"], "statuses": rec["statuses"],
                         **({"proof_file": rec["proof"]["file"]} if "proof" in rec else {})})
            print(json.dumps({k: rows[-1][k] for k in ("family", "start", "tau", "status", "K")}), file=sys.stderr, flush=True)
    eta_hat = steps(Q, m, rho)["eta_hat"]
    ends = []
    for family, start in runs:
        mine = [x for x in rows if x["family"] == family and x["start"] == start]
        finite = [x["tau"] for x in mine if x["status"] in ("proved", "single solver")]
        proved = [x["tau"] for x in mine if x["status"] == "proved"]
        unb = [x["tau"] for x in mine if x["status"] == "unbounded"]
        ends.append({"family": family, "start": start, "tau_low": max(finite, default=None),
                     "tau_low_proved": max(proved, default=None), "tau_high": min(unb, default=None)})
    return {"generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "command": "python -m fedbounds.checks.fednmap.spep.existence --write --front-scan",
            "point": {"n": n, "Q": Q, "m": m, "rho": rho, "L": L, "mu": MU, "steps": "Theorem 5's printed maxima"},
            "instance_cap": 2 * MU - eta_hat * MU**2, "rows": rows, "ends": ends}


#: what each family's table says it searched
FAMILY_TEXT = {"merit": "merit: psi - psi* + p ||F_nor||^2 + alpha corr (p, alpha >= 0 searched)",
               "wide": "wide: merit + ||grad f||^2, ||v||^2, ||grad f - v||^2 (from the free start)",
               "quad": "quad: merit + the grid ||a grad f + b v||^2, (1/n) sum_i ||a corr_i + b (grad f_i - grad f)||^2 "
                       "(from the free start)"}


def _wrap(rows: list[dict[str, Any]], fr: dict[str, Any] | None, kind: str, family: str = "merit") -> dict[str, Any]:
    cmd = "python -m fedbounds.checks.fednmap.spep.existence --write" + ("" if kind == "table" else " --speedup")
    if family != "merit":
        cmd += f" --family {family}"
    return {"generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"), "command": cmd,
            "point": {"L": L, "mu": MU, "k": 1.0, "steps": "Theorem 5's printed maxima at window m",
                      "family": FAMILY_TEXT[family],
                      "solvers": "CLARABEL + SCS agreeing (certified), or an exact certificate from Clarabel's multipliers (proved)"},
            "rows": rows, **({"front": fr} if fr is not None else {})}


def _write(target: Path, data: dict[str, Any]) -> None:
    """``data`` written atomically to ``target``, stamped as committed evidence (schema version and content hash,
    :func:`fedbounds.theory.core.evidence.stamp_text`), so that its loaders can refuse a damaged file."""
    from fedbounds.checks.runtime.install import write_atomic
    from fedbounds.checks.runtime.jsonsafe import json_safe
    from fedbounds.theory.core.evidence import stamp_text

    write_atomic(target, stamp_text(json.dumps(json_safe(data), indent=1, sort_keys=True) + "\n"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fedbounds.checks.fednmap.spep.existence", description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help=f"write {TARGET} (or, with --speedup, {SPEEDUP})")
    ap.add_argument("--speedup", action="store_true", help="the speedup table instead of the C_0 table")
    ap.add_argument("--families", action="store_true", help=f"the families table ({FAMILIES_TARGET}): merit, wide, "
                    "quad from both starts at n up to 4096 and n = inf, Q up to 8 (Clarabel; merit at n = inf proved)")
    ap.add_argument("--front-scan", action="store_true", help=f"the front at {FRONT_POINT} per family ({FRONT_TARGET})")
    ap.add_argument("--family", default="merit", choices=sorted(FAMILY_TEXT),
                    help=f"--speedup: the Lyapunov family (not merit: written to {SPEEDUP_OF.format(family='<family>')})")
    ap.add_argument("--resume", action="store_true", help="C_0 table: keep the committed table's decided rows and its "
                    "front, compute the other points only")
    ap.add_argument("--budget-s", type=float, default=None, metavar="S",
                    help="C_0 table: start no new point after S wall seconds (the rest keep their rows or say 'not computed')")
    args = ap.parse_args(argv)
    from fedbounds.checks.runtime.install import evidence_path, refuse_unwritable

    if args.family != "merit" and not args.speedup:
        print("error: --family is for --speedup only (the C_0 table is merit's; --families measures each family)", file=sys.stderr)
        return 2
    name = (SPEEDUP if args.family == "merit" else SPEEDUP_OF.format(family=args.family)) if args.speedup else TARGET
    if args.families:
        name = FAMILIES_TARGET
    if args.front_scan:
        name = FRONT_TARGET
    target = evidence_path(name) if args.write else None
    if target is not None and refuse_unwritable(target):
        return 2
    if args.front_scan:
        data = front_scan()
    elif args.families:
        data = families_table(write_partial=target)
    elif args.speedup:  # the printed steps (exact certificates up to n = Q = 4; SCS is inaccurate there), then 16x (two solvers)
        data = {"k=1": speedup_table(k=1.0, write_partial=target, family=args.family)}
    else:
        resume = None
        if args.resume:
            from fedbounds.theory.core.evidence import EvidenceError, load

            try:
                resume = load(evidence_path(TARGET))
            except EvidenceError as exc:
                print(f"error: --resume: {exc}", file=sys.stderr)
                return 2
        if args.budget_s is not None and not (math.isfinite(args.budget_s) and args.budget_s >= 0):
            print(f"error: --budget-s must be a number >= 0, got {args.budget_s}", file=sys.stderr)
            return 2
        data = table(write_partial=target, resume=resume, budget_s=args.budget_s)
    if target is None:
        from fedbounds.checks.runtime.jsonsafe import json_safe

        print(json.dumps(json_safe(data), indent=1, sort_keys=True))
        return 0
    _write(target, data)
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
