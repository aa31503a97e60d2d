"""[D] Theorem 8's C_0 recovered by a Lyapunov search (FedNMap, arXiv 2602.03357; docs/fednmap-reconstruction.md §10.9).

The searched PEP (``fedbounds.checks.fednmap.spep.search``) certifies, for a rate r, the smallest K such that some
V = psi - psi* + p ||F_nor||^2 + alpha corr (p, alpha >= 0 found by the SDP) has E[V_1] <= (1 - r) V_0 + K sigma^2
over the class under proximal PL. V >= psi - psi*, so E psi(x_T) - psi* <= (1 - r)^T V_0 + K sigma^2/r
<= exp(-r T) V_0 + K sigma^2/r: Theorem 8's bound holds, with L_0 = V_0, wherever r = e8(C_0) and
K sigma^2/r <= the printed floor (any window m: the one-round certificate's floor does not depend on m). The
smallest C_0 >= 0 doing so is the constant the theorem needs; :data:`existence_ratio` is the quantity each verdict
compares with 1. The table ``theorem8_c0.json`` beside this file is written by
``python -m fedbounds.checks.fednmap.spep.existence --write``; the speedup table ``theorem8_speedup.json`` by the same
command with ``--speedup``.

The rooms of the printed constants on the searched function (:func:`needed`): at a decided row (K at r = e8(C_0), the
smallest C_0 the table recovered), the floor K sigma^2/r is split against the two printed terms, each as printed paying
first for what the other leaves: 36 is needed only for what the 12100-term does not cover, and conversely
(:data:`fedbounds.theory.fednmap.formulas.theorem8_needed_36`, ``theorem8_needed_12100``). needed/printed <= 1 is
each constant's verdict; where the other term alone pays, the constant could be 0 there (needed 0).

Theorem 8's exponent on the searched family (:data:`exponent_ratio`, :func:`front`): the table's ``front`` at one point
brackets the largest rate tau eta_hat at which some member contracts (K* finite): proved at ``tau_low``, no member at
``tau_high`` (every solve unbounded). A member contracting at rate r contracts at every r' <= r (V >= 0), so the
theorem's exponent e8(C_0), largest at C_0 = 0 (tau = 2 mu/9), holds on the family for every C_0 >= 0 where
e8(0) <= tau_low eta_hat; its room is tau_low/(2 mu/9), bracketed by tau_high/(2 mu/9).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import sympy as sp
from fedbounds.theory.core import evidence
from fedbounds.theory.core.symbols import C_0
from fedbounds.theory.fednmap import formulas as core
from fedbounds.theory.fednmap import stochastic as S

__all__ = [
    "PRINTED",
    "SPEEDUP_FILE",
    "TABLE_FILE",
    "departure_text",
    "existence_ratio",
    "exponent_ratio",
    "exponent_text",
    "front",
    "needed",
    "needed_ratio_36",
    "needed_ratio_12100",
    "needed_text",
    "row_values",
    "speedup",
    "speedup_text",
    "table",
    "table_text",
    "theorem_tau",
]

TABLE_FILE = Path(__file__).with_name("theorem8_c0.json")
#: merit's floor up to n = infinity and its fits (docs §10.10); the lower-bound instance's n-independent error
FAMILIES_FILE = Path(__file__).with_name("theorem8_families.json")
LOWER_FILE = Path(__file__).with_name("theorem8_lower.json")
SPEEDUP_FILE = Path(__file__).with_name("theorem8_speedup.json")

#: [D] certified floor K sigma^2/e8(C_0) over Theorem 8's printed floor at window m (<= 1: the theorem holds there)
existence_ratio = S.certified_floor / core.theorem8_floor
#: the printed constants, for :func:`needed` (split off Theorem 8's terms in :mod:`fedbounds.theory.fednmap.formulas`)
PRINTED = {"36": float(core.theorem8_constant_36), "12100": float(core.theorem8_constant_12100)}
_AS_PRINTED = {core.certified_floor_value: S.certified_floor, core.constant_36: core.theorem8_constant_36,
               core.constant_12100: core.theorem8_constant_12100}
#: [D] needed 36 / printed 36 and needed 12100 / printed 12100 at the certified floor K sigma^2/e8(C_0) (<= 1: holds)
needed_ratio_36 = (core.theorem8_needed_36 / core.constant_36).subs(_AS_PRINTED)
needed_ratio_12100 = (core.theorem8_needed_12100 / core.constant_12100).subs(_AS_PRINTED)
#: the largest rate, in units of eta_hat, at which the searched family is proved to contract (the front's tau_low)
tau_family = sp.Symbol("tau_family", positive=True)
#: [D] Theorem 8's exponent at its largest (C_0 = 0) over the family's proved rate tau_family eta_hat (<= 1: holds for
#: every C_0 >= 0)
exponent_ratio = core.theorem8_rate_exponent.subs(C_0, 0) / (tau_family * core.eta_hat)


def table() -> dict[str, Any]:
    """The committed C_0 table, checked (:func:`fedbounds.theory.core.evidence.load`): no rows, with the damage recorded
    (the claim is then reported as not checked), when it is missing or damaged."""
    return evidence.load_or_record(TABLE_FILE, {"rows": []})


def speedup() -> dict[str, Any]:
    """The committed speedup table at the printed steps (its ``k=1`` part), checked as :func:`table` is; no rows and no
    fits when missing or damaged."""
    data = evidence.load_or_record(SPEEDUP_FILE, {})
    return data.get("k=1", {"rows": [], "fits": []})


def _f(x: Any) -> float:
    return math.nan if x is None else float(x)


def table_text() -> str:
    """One clause per committed row: the point, the smallest C_0 (with its window when bisected), the status."""
    parts = []
    for r in table()["rows"]:
        c0 = "undecided (no probe in [0, 64] decided to meet)" if r["C_0_min"] is None else (f"{r['C_0_min']:g}" if r["C_0_min"] == 0 else
                                                      f"({r['C_0_low']:.3g}, {r['C_0_min']:.3g}]")
        if r["C_0_min"] is None and str(r.get("note", "")).startswith("not computed"):
            c0 = "not computed in the last run"
        parts.append(f"(n, Q, m, gamma rho) = ({r['n']}, {r['Q']}, {r['m']}, {r['gamma_rho']:.4f}): C_0 = {c0} "
                     f"[{r['status'] or 'no verdict'}], floor ratio {_f(r['floor_ratio']):.3g}")
    return "; ".join(parts) if parts else "no committed table"


def speedup_text() -> str:
    """How many of the speedup table's points are proved, and the fitted log-log slopes of the proved floors at the
    theorem's rate (C_0 = 0), with their 95% intervals."""
    rows = speedup().get("rows", [])
    proved = sum(1 for r in rows if r.get("status") == "proved")
    parts = [f"{proved} of {len(rows)} points (n, Q) proved"] if rows else []
    for f in speedup().get("fits", []):  # a partial table (a run in progress) has rows, no fits yet
        if f["slope"] is None or f["low"] is None:
            continue
        parts.append(f"{f['axis']} ({f['series']}, {f['points']} pts): {f['slope']:.3f} [{f['low']:.3f}, {f['high']:.3f}]")
    return "; ".join(parts) if parts else "no committed speedup table"


def departure_text() -> str:
    """Where the speedup table's floor departs from 1/n (docs §10.10): merit's limit K*(inf)/r per Q with its status,
    the 1/sqrt(n) coefficient of the fit a/n + c/sqrt(n) + b, and the lower-bound instance's n-independent error b with
    its 95% interval beside the printed drift term (both files checked as :func:`table` is)."""
    fams = evidence.load_or_record(FAMILIES_FILE, {})
    low = evidence.load_or_record(LOWER_FILE, {})
    parts = []
    for f in fams.get("fits", []):
        if f.get("family") == "merit" and f.get("start") == "normal":
            c = f["a_over_n_plus_c_over_sqrt_n_plus_b"]["coefficients"][1]
            parts.append(f"Q = {f['Q']}: K*(inf)/r = {_f(f['limit_floor']):.3g} [{f['limit_status']}], c = {c:.3g}")
    lows = [f"Q = {r['Q']}: {r['b_lower']:.3g} [{r['b_lower_low']:.3g}, {r['b_lower_high']:.3g}] (printed drift term "
            f"{r['printed_drift_term']:.3g})" for r in low.get("comparison", {}).get("rows", [])]
    out = ("merit's floor at n = infinity and the coefficient c of a/n + c/sqrt(n) + b over the proved floors "
           "(theorem8_families.json): " + "; ".join(parts)) if parts else "no committed families table"
    return out + ("; a lower-bound instance's n-independent error per sigma^2 (theorem8_lower.json, a kinked quadratic "
                  "through the engine): " + "; ".join(lows) if lows else "; no committed lower bound")


def row_values(r: dict[str, Any]) -> dict[str, float]:
    """The parameters of a table row for the sympy: its (n, Q, m, rho), the table's L and mu, Theorem 5's printed
    maxima gamma, eta_hat, eta_a at window m (:mod:`fedbounds.theory.fednmap.formulas`), its smallest C_0, sigma^2 = 1."""
    from fedbounds.theory.core.evaluate import evaluate_compiled as evaluate

    point = table().get("point", {})
    v: dict[str, float] = {"L": float(point.get("L", 1.0)), "mu": float(point.get("mu", 0.1)), "rho": float(r["rho"]),
                           "n": int(r["n"]), "Q": int(r["Q"]), "m": int(r["m"]), "sigma2": 1.0}
    v["gamma"] = evaluate(core.theorem5_gamma_max, v)
    v["eta_hat"] = evaluate(core.theorem5_eta_hat_max, v)
    v["eta_a"] = evaluate(core.theorem5_eta_a_max, v)
    v["C_0"] = math.nan if r.get("C_0_min") is None else float(r["C_0_min"])
    return v


def needed(r: dict[str, Any], K: float | None, constants: dict[str, float] | None = None) -> dict[str, float] | None:
    """At row ``r`` with noise coefficient ``K`` (at rate e8(C_0_min)): ``floor`` (K/r per sigma^2), the two terms,
    ``needed_36`` / ``needed_12100`` (the smallest constants, module docstring, the other at its value in
    ``constants``) and ``ratio_36`` / ``ratio_12100`` (needed over the constant's value). ``constants``: the two
    constants' values, :data:`PRINTED` by default (a check's control plants others; a constant 0 gives the ratio +inf
    where something is needed, NaN where nothing is). None when the row is undecided (no C_0, or no K): no number."""
    if K is None or r.get("C_0_min") is None or not math.isfinite(float(K)):
        return None
    key = (r["n"], r["Q"], r["m"], r["rho"], r["C_0_min"], float(K), tuple(sorted((constants or {}).items())))
    if key not in _NEEDED:
        _NEEDED[key] = _needed(r, float(K), constants)
    return dict(_NEEDED[key])


#: :func:`needed` per (row, K, constants): the claims' texts ask for each row several times
_NEEDED: dict[tuple[Any, ...], dict[str, float]] = {}


def _needed(r: dict[str, Any], K: float, constants: dict[str, float] | None) -> dict[str, float]:
    from fedbounds.theory.core.evaluate import evaluate_compiled as evaluate

    c = {**PRINTED, **(constants or {})}
    v = {**row_values(r), "K_sigma": float(K), core.constant_36: c["36"], core.constant_12100: c["12100"]}
    floor = evaluate(S.certified_floor, v)
    v[core.certified_floor_value] = floor
    out = {"floor": floor, "term_36": evaluate(core.constant_36 * core.theorem8_variance_unit, v),
           "term_12100": evaluate(core.constant_12100 * core.theorem8_drift_unit, v), "c_36": c["36"], "c_12100": c["12100"]}
    for which, expr in (("36", core.theorem8_needed_36), ("12100", core.theorem8_needed_12100)):
        got = evaluate(expr, v)
        out[f"needed_{which}"] = got
        out[f"ratio_{which}"] = got / c[which] if c[which] > 0 else (math.inf if got > 0 else math.nan)
    return out


def needed_text(which: str) -> str:
    """The constant ``which`` ("36" or "12100") needed on the searched function at the committed decided rows: each
    positive one with its room, then the rows where the other term alone pays (needed 0)."""
    parts, zero = [], []
    for r in table()["rows"]:
        got = needed(r, r.get("K"))
        if got is None:
            continue
        at = f"({r['n']}, {r['Q']}, {r['m']}, {r['gamma_rho']:.4f})"
        c = got[f"needed_{which}"]
        if c == 0:
            zero.append(at)
            continue
        best = next((p for p in r.get("probes", []) if p.get("C_0") == r["C_0_min"]), {})
        target = (best.get("proof") or {}).get("target")
        loose = target not in (None, "value")  # K is a looser proved bound: the room is at least what it reads
        parts.append(f"{at}: {c:.3g} (room >= x{float(which) / c:.3g}, K proved at {target})" if loose else
                     f"{at}: {c:.3g} (room x{float(which) / c:.3g})")
    if zero:
        parts.append(f"0 (the other term alone pays) at {len(zero)} rows (n, Q, m, gamma rho) = {', '.join(zero)}")
    return "; ".join(parts) if parts else "no decided row in the committed table"


def front() -> dict[str, Any]:
    """The committed table's front (one point: the largest rate's bracket and K* at fractions of it), {} when none."""
    return dict(table().get("front") or {})


def theorem_tau(fr: dict[str, Any]) -> float:
    """Theorem 8's largest exponent (C_0 = 0) at the front's point (its n, Q, m, rho; the table's L and mu) in units of
    eta_hat: :data:`exponent_ratio` times tau_family."""
    from fedbounds.theory.core.evaluate import evaluate

    v = row_values({"n": fr["n"], "Q": fr["Q"], "m": fr["m"], "rho": fr["rho"]})
    return evaluate(exponent_ratio * tau_family, {**v, "tau_family": 1.0})


def exponent_text() -> str:
    """The front against Theorem 8's largest exponent: the bracket of the family's largest rate and the room."""
    fr = front()
    lo, hi = fr.get("tau_low"), fr.get("tau_high")
    t8 = theorem_tau(fr) if fr else None
    if not lo or not t8:
        return "no decided front in the committed table"
    room = f"x{lo / t8:.3g}" + (f" (bracket [x{lo / t8:.3g}, x{hi / t8:.3g}))" if hi else "")
    proved = [p["tau"] for p in fr.get("points", []) if p.get("status") == "proved"]
    v = row_values({"n": fr["n"], "Q": fr["Q"], "m": fr["m"], "rho": fr["rho"]})
    return (f"at (n, Q, m, gamma rho) = ({fr['n']}, {fr['Q']}, {fr['m']}, {v['gamma'] * v['rho']:.4f}) the searched family "
            f"contracts at tau = {lo:.4g} (the front's tau_low; its certificate is re-verified by fedbounds check) and no "
            f"member at {hi:.4g} (every solve unbounded); Theorem 8's largest exponent is tau = 2 mu/9 = {t8:.4g} (C_0 = 0): "
            f"room {room}; K* proved at {len(proved)} points of the front, tau {min(proved, default=math.nan):.3g}.."
            f"{max(proved, default=math.nan):.3g}")
