"""The recovered Lyapunov constants and the largest certified steps of FedNMap, computed over a grid of PEPs.

Run ``python -m fedbounds.checks.fednmap.pep.grid --write`` to recompute every grid point (about 30 minutes on 2
cores) and rewrite ``theory/fednmap/pep_evidence.json`` (read by :mod:`fedbounds.theory.fednmap.pep_evidence`),
the committed evidence that the theory layer's reconstructed claims cite. Without ``--write`` the module prints
what it would write. ``--only descent`` (or ``constants``, ``steps``) recomputes one table and keeps the others.

Grid (docs/fednmap-reconstruction.md §10). L = 1 (the class is invariant under f_i -> a f_i with the steps divided by
a and rho multiplied by a, so only rho/L, gamma L and the step multipliers matter), gamma = Theorem 5's largest
gamma, steps eta_a = k eta_a^max, eta_s = Theorem 5's, so eta_hat = k eta_hat^max (k = 1: the printed steps).

* ``DESCENT``: the descent certificate (measure (a) of :mod:`fedbounds.checks.fednmap.pep.encoding`, ratio w d T <= 1 with
  d = eta_hat/9) at the reference constants (C_0, C_c) = :data:`REFERENCE`, for each (n, Q, T, k).
* ``SMALLEST_C0``: for each (n, Q, T, k) and C_c, the smallest C_0 the search certifies
  (:func:`~fedbounds.checks.fednmap.pep.encoding.smallest_constants`), with the window's lower end ``C_0_low`` and the
  undecided probes ``unknown`` (rows written before the three-valued search have neither); entries whose final
  two-solver certificate is not ``certified`` are kept with their status, and are not evidence.
* ``STEPS``: for each (rho, n, Q, T), the largest multiplier k of Theorem 5's printed (eta_hat, eta_a) at which some
  (C_0, C_c) of :data:`STEP_CONSTANTS` certifies the descent (:func:`~fedbounds.checks.fednmap.pep.encoding.largest_certified_step`),
  with the window's upper end ``k_high`` and the undecided probes ``unknown``.

Exact certificates (docs/provenance.md §7): ``python -m fedbounds.checks.fednmap.pep.prove --grid pep --write``
(:mod:`fedbounds.checks.fednmap.pep.prove`) rebuilds each certified row's PEP (measure (a) at budget d T, full
form, the row's point) with this module's :func:`_point` and proves ``worst case <= value + delta`` at the row's
value; a proved row carries ``status = "proved"`` and ``proof`` (certificate file under ``checks/pep/certificates``,
exact bound, delta, rows used, largest denominator), a row that does not prove ``proof.status = "not proved: why"``.
Pass of 2026-12-02: DESCENT 20 of 20 certified rows proved, SMALLEST_C0 53 of 54 (not (n, Q, T, k, C_c) =
(2, 2, 2, 4, 0.1): no strictly interior dual, no rational face), STEPS 24 of 24. A regeneration writes rows without
``proof``: run the pass again (stored certificates are looked up and re-verified, only new points are solved).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib.metadata as _md
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fedbounds.checks.fednmap.pep.encoding import (
    descent_check,
    largest_certified_step,
    smallest_constants,
    theorem5_steps,
)
from fedbounds.checks.pep.solve import DEFAULT_REL_TOL, DEFAULT_SOLVERS, Certificate
from fedbounds.checks.report.progress import LineProgress, progress

__all__ = ["DESCENT_GRID", "REFERENCE", "STEP_CONSTANTS", "STEP_GRID", "certificate_entry", "descent_entry", "main"]

L = 1.0
#: the reference constants whose descent the grid certifies
REFERENCE = {"C_0": 1.0, "C_c": 1.0}
#: (rho, n, Q, T, k) of the descent table; the smallest-C_0 table uses the same points
DESCENT_GRID: tuple[tuple[float, int, int, int, float], ...] = tuple(
    (0.1, n, Q, T, k)
    for (n, Q, T) in ((1, 1, 1), (2, 1, 1), (1, 2, 1), (1, 1, 2), (2, 2, 1), (2, 1, 2), (1, 2, 2), (2, 2, 2))
    for k in (1.0, 4.0, 16.0)
)
C_C_GRID = (0.1, 1.0, 10.0)
#: (rho, n, Q, T) of the step table
STEP_GRID: tuple[tuple[float, int, int, int], ...] = tuple(
    (rho, n, Q, T) for rho in (0.1, 0.5) for (n, Q) in ((1, 1), (2, 1), (1, 2), (2, 2), (3, 1), (1, 3)) for T in (1, 2)
)
#: the (C_0, C_c) pairs tried at each step multiplier
STEP_CONSTANTS: tuple[tuple[float, float], ...] = ((1.0, 1.0), (0.5, 1.0), (2.0, 1.0), (1.0, 10.0))
TARGET = "theory/fednmap/pep_evidence.json"


def certificate_entry(cert: Certificate | None) -> dict[str, Any]:
    """The evidence kept of a certificate: status, value, per-solver value, status and duality gap, Gram size."""
    if cert is None:
        return {"status": "none", "value": None}
    return {
        "status": cert.status,
        "value": cert.value,
        "values": dict(cert.values),
        "statuses": dict(cert.statuses),
        "gaps": dict(cert.gaps),
        "gram_dim": cert.gram_dim,
        "seconds": round(sum(cert.seconds.values()), 2),
    }


def _point(rho: float, n: int, Q: int, T: int, k: float) -> dict[str, Any]:
    st = theorem5_steps(L, rho, Q)
    return {"L": L, "rho": rho, "n": n, "Q": Q, "T": T, "k": k, "gamma": st["gamma"], "eta_hat": k * st["eta_hat"],
            "eta_a": k * st["eta_a"], "eta_s": st["eta_s"], "descent_coef": k * st["descent_coef"]}


def descent_entry(rho: float, n: int, Q: int, T: int, k: float, C_0: float, C_c: float) -> dict[str, Any]:
    """One row of ``DESCENT``: the two-solver certificate of the ratio w d T at (C_0, C_c)."""
    p = _point(rho, n, Q, T, k)
    cert = descent_check(L, rho, p["gamma"], p["eta_a"], p["eta_s"], n, Q, T, C_0, C_c, p["descent_coef"])
    return {**p, "C_0": C_0, "C_c": C_c, **certificate_entry(cert)}


def _constants_rows(rho: float, n: int, Q: int, T: int, k: float) -> list[dict[str, Any]]:
    p = _point(rho, n, Q, T, k)
    res = smallest_constants(L, rho, p["gamma"], p["eta_a"], p["eta_s"], n, Q, T, p["descent_coef"], C_C_GRID,
                             C_0_min=1.0 / 64)
    return [{**p, "C_c": r.C_c, "C_0": r.C_0, "C_0_low": r.C_0_low, "unknown": list(r.unknown), "solves": r.solves,
             **certificate_entry(r.certificate)} for r in res]


def _step_row(rho: float, n: int, Q: int, T: int) -> dict[str, Any]:
    p = _point(rho, n, Q, T, 1.0)
    C_0s = sorted({c for c, _ in STEP_CONSTANTS})
    C_cs = sorted({c for _, c in STEP_CONSTANTS})
    r = largest_certified_step(L, rho, p["gamma"], p["eta_a"], p["eta_s"], n, Q, T, p["descent_coef"], C_0s, C_cs,
                               k_start=16.0, k_max=4096.0)
    return {"L": L, "rho": rho, "n": n, "Q": Q, "T": T, "gamma": p["gamma"], "eta_hat_printed": p["eta_hat"],
            "eta_a_printed": p["eta_a"], "k": r.k, "k_high": r.k_high, "unknown": list(r.unknown), "C_0": r.C_0,
            "C_c": r.C_c, "solves": r.solves,
            **certificate_entry(r.certificate)}


def _versions() -> dict[str, str]:
    out = {}
    for dist in ("PEPit", "cvxpy", "clarabel", "scs"):
        try:
            out[dist] = _md.version(dist)
        except _md.PackageNotFoundError:
            out[dist] = "absent"
    return out


def _tables(which: Iterable[str], old: dict[str, Any]) -> dict[str, Any]:
    jobs: list[tuple[str, tuple]] = []
    which = set(which)
    if "descent" in which:
        jobs += [("DESCENT", g) for g in DESCENT_GRID]
    if "constants" in which:
        jobs += [("SMALLEST_C0", g) for g in DESCENT_GRID]
    if "steps" in which:
        jobs += [("STEPS", g) for g in STEP_GRID]
    names = {"descent": "DESCENT", "constants": "SMALLEST_C0", "steps": "STEPS"}
    tables = {v: ([] if k in which else list(old.get(v, ()))) for k, v in names.items()}
    bar = progress(len(jobs), desc="pep grid", unit="point")
    try:
        for name, g in jobs:
            if name == "DESCENT":
                tables[name].append(descent_entry(*g, REFERENCE["C_0"], REFERENCE["C_c"]))
            elif name == "SMALLEST_C0":
                tables[name].extend(_constants_rows(*g))
            else:
                tables[name].append(_step_row(*g))
            row = tables[name][-1]
            outcome = f"{name} {g}: {row['status']} {row.get('value')}"
            if isinstance(bar, LineProgress):
                bar.update(1, result=outcome)
            else:
                bar.set_postfix_str(outcome)
                bar.update(1)
    finally:
        bar.close()
    return tables


def render(tables: dict[str, Any]) -> str:
    """The text of ``pep_evidence.json``: the run's metadata and the three tables."""
    meta = {
        "command": "python -m fedbounds.checks.fednmap.pep.grid --write",
        "generated": _dt.date.today().isoformat(),
        "solvers": list(DEFAULT_SOLVERS),
        "rel_tol": DEFAULT_REL_TOL,
        "versions": _versions(),
        "reference": REFERENCE,
        "step_constants": [list(c) for c in STEP_CONSTANTS],
    }
    data = {"META": meta, "DESCENT": tables["DESCENT"], "SMALLEST_C0": tables["SMALLEST_C0"], "STEPS": tables["STEPS"]}
    return json.dumps(data, indent=1, allow_nan=False) + "\n"


def _write_atomic(path: Path, text: str) -> None:
    from fedbounds.checks.runtime.install import write_atomic
    from fedbounds.theory.core.evidence import stamp_text

    write_atomic(path, stamp_text(text))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fedbounds.checks.fednmap.pep.grid", description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help=f"rewrite {TARGET} (else print it)")
    parser.add_argument("--only", choices=("descent", "constants", "steps"), action="append",
                        help="recompute only these tables (repeatable); the others are kept")
    args = parser.parse_args(argv)
    from fedbounds.theory.fednmap import pep_evidence as old

    tables = _tables(args.only or ("descent", "constants", "steps"), vars(old))
    text = render(tables)
    if args.write:
        _write_atomic(Path(__file__).resolve().parents[3] / TARGET, text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
