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
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from fedbounds.theory.core import evidence
from fedbounds.theory.fednmap import formulas as core
from fedbounds.theory.fednmap import stochastic as S

__all__ = ["SPEEDUP_FILE", "TABLE_FILE", "existence_ratio", "speedup", "speedup_text", "table", "table_text"]

TABLE_FILE = Path(__file__).with_name("theorem8_c0.json")
SPEEDUP_FILE = Path(__file__).with_name("theorem8_speedup.json")

#: [D] certified floor K sigma^2/e8(C_0) over Theorem 8's printed floor at window m (<= 1: the theorem holds there)
existence_ratio = S.certified_floor / core.theorem8_floor


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
    """The fitted log-log slopes of the floor at the theorem's rate (C_0 = 0), with their 95% intervals."""
    parts = []
    for f in speedup()["fits"]:
        if f["slope"] is None or f["low"] is None:
            continue
        parts.append(f"{f['axis']} ({f['series']}, {f['points']} pts): {f['slope']:.3f} [{f['low']:.3f}, {f['high']:.3f}]")
    return "; ".join(parts) if parts else "no committed speedup table"
