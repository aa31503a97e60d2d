"""The prove pass of FedNMap's committed PEP evidence grids: an exact rational certificate for every certified row.

``python -m fedbounds.checks.fednmap.pep.prove [--grid pep|spep|window|speedup|all] [--write]`` takes each row
of ``theory/fednmap/pep_evidence.json`` (tables DESCENT, SMALLEST_C0, STEPS), ``theory/fednmap/spep_grid.json``,
``theory/fednmap/pep_c0_window.json`` (tables scan, C_c, recheck, exponent, steps: :func:`window_target`) and each of
the two K of a ``theory/fednmap/spep_speedup.json`` row (:func:`speedup_targets`; above n = 8 not proved by design)
whose status is ``certified`` and

1. rebuilds the PEP its certificate is of, from the point the row records, with the generator's own builders (so the
   rows' hash, :func:`fedbounds.checks.pep.certificate.problem_of`, is the certificate file's name):
   the descent PEP :func:`~fedbounds.checks.fednmap.pep.encoding.build_lyapunov_pep` in full form at budget d T (the row's
   value is the ratio w d T, :func:`~fedbounds.checks.fednmap.pep.encoding.descent_check`), or the stochastic round
   :func:`~fedbounds.checks.fednmap.spep.encoding.build_round_spep` in full form at sigma^2 = 1 (the row's K, as
   :func:`~fedbounds.checks.fednmap.spep.encoding.noise_coefficient` attaches its proofs), or the window's measure (a) at
   T = 1 from free corrections, resp. measure (b) :func:`~fedbounds.checks.fednmap.pep.encoding.build_pl_contraction_pep`
   (the row's value is minus its certified exponent);
2. solves it with Clarabel for the multipliers (at the generator's other scales, budgets 1, 10, 100, 1000 or
   sigma^2 = 1/eta_hat^2, 100/eta_hat^2, when the first solve is not optimal or its value disagrees with the row's:
   the PEP is homogeneous in the budget, resp. sigma^2, so the multipliers are the same and the value scales
   exactly). When every optimal solve's value differs from the row's beyond the two-solver tolerance
   (:data:`~fedbounds.checks.pep.solve.DEFAULT_REL_TOL` relative + :data:`~fedbounds.checks.pep.solve.DEFAULT_ABS_TOL`)
   it stops there: the row stays ``certified`` and is reported. (The window's two ``steps`` rows record no value,
   only that the ratio is <= 1: the value proved is the new solve's, and the bound must also be <= 1);
3. proves ``worst case <= value + delta`` at the row's recorded value (:func:`fedbounds.checks.pep.certificate.attach`
   with ``FEDBOUNDS_PROVE=1``: a certificate already stored for these rows is re-verified instead, with no solve), and
   only when the certificate verifies exactly and its bound B satisfies value <= B <= value + :func:`room` (the
   prover's own largest room at that value: 100 (1e-6 |value| + 1e-9)) sets the status to ``proved`` with
   ``proof = {file, hash, bound, bound_exact, delta = B - value (rounded up), rows (used), max_denominator}``. (A
   certificate stored earlier for the same PEP may have been made at another solve's value, a few 1e-9 away: its
   bound then exceeds the row's value by slightly more than the delta it states.)

A row that does not prove stays ``certified`` with ``proof = {"status": "not proved: <why>", "attempted": true,
"seconds"}``; ``<why>`` is the disagreement, the Clarabel statuses, or, when the prover finds nothing,
:func:`diagnose`'s reading. A ``proved`` row with a proof record is skipped (a re-run solves nothing); a ``proved`` row
without one (written before this pass) gets the record of its stored certificate by lookup; a row a pass tried and did
not prove is tried again only with ``--retry``. The n >= 3 cells of the stochastic grid were solved in the
client-symmetric block form (exact: the same worst case); their proof, like every cell's, is of the full form at
sigma^2 = 1, from a full-form Clarabel solve (the block form's PEPit rows lack the corrections' zero mean, so its
lifted multipliers would not fit), and the new full-form value must agree with the block form's.
``--write`` rewrites the files atomically after each attempted row (a stopped pass keeps what it proved), with the
pass's command, date, versions and status counts in ``META["prove"]`` (pep_evidence), ``meta["prove"]``
(pep_c0_window) or ``prove`` (spep_grid, spep_speedup); without it the counts are printed only. ``--grid all`` (the
default) is the four files in turn. ``--describe-store`` is the one-off migration to self-contained certificates
(:func:`describe_stored`, docs/provenance.md §7): it writes each named file's problem description, rebuilt from its
row, into the file (no solve; names and rows unchanged).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime as _dt
import json
import math
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from fedbounds.checks.runtime.jsonsafe import json_safe

__all__ = ["PEP_FILE", "SPEEDUP_FILE", "SPEP_FILE", "WINDOW_FILE", "Target", "describe_stored", "diagnose", "lookup", "main", "pep_target",
           "prove_grid",
           "prove_row", "room", "speedup_targets", "spep_target", "window_target"]

ROOT = Path(__file__).resolve().parents[3]
PEP_FILE = ROOT / "theory" / "fednmap" / "pep_evidence.json"
SPEP_FILE = ROOT / "theory" / "fednmap" / "spep_grid.json"
WINDOW_FILE = ROOT / "theory" / "fednmap" / "pep_c0_window.json"
SPEEDUP_FILE = ROOT / "theory" / "fednmap" / "spep_speedup.json"
PEP_TABLES = ("DESCENT", "SMALLEST_C0", "STEPS")
#: the tables of pep_c0_window.json whose rows carry a certificate status (windows and stability carry none)
WINDOW_TABLES = ("scan", "C_c", "recheck", "exponent", "steps")
GRIDS = {"pep": PEP_FILE, "spep": SPEP_FILE, "window": WINDOW_FILE, "speedup": SPEEDUP_FILE}
COMMAND = "python -m fedbounds.checks.fednmap.pep.prove"
#: the row fields of a pep_evidence point that the rebuild recomputes from (rho, n, Q, T, k) and must match exactly
_RECORDED = {"DESCENT": ("gamma", "eta_hat", "eta_a", "eta_s", "descent_coef"),
             "SMALLEST_C0": ("gamma", "eta_hat", "eta_a", "eta_s", "descent_coef"),
             "STEPS": ("gamma",)}


@dataclass(frozen=True)
class Target:
    """The PEP a row's certificate is of (``build``, value = the row's), and ``solves``: (builder, factor) pairs whose
    Clarabel value times ``factor`` is that value (the same PEP at other scales, tried in order for the multipliers)."""

    build: Callable[[], Any]
    solves: tuple[tuple[Callable[[], Any], float], ...]
    #: None: the row records no value, only its claim worst case <= ``ceiling``; the value proved is then the new
    #: Clarabel solve's, and the proof also needs its bound <= ``ceiling``
    value: float | None
    #: how a builder is solved: ``solve_once`` (None) or the client-symmetric block form's ``solve_symmetric``
    solve: Callable[..., Any] | None = None
    ceiling: float | None = None


def pep_target(table: str, row: dict[str, Any]) -> Target:
    """The descent PEP of a ``pep_evidence`` row: measure (a) at budget d T, the (C_0, C_c) and step multiple k the row
    records (:func:`fedbounds.checks.fednmap.pep.grid.descent_entry` and the searches' final certificates). A
    ValueError when the recorded steps differ from the ones recomputed from (rho, n, Q, T, k)."""
    from fedbounds.checks.fednmap.pep.encoding import build_lyapunov_pep
    from fedbounds.checks.fednmap.pep.grid import L, _point

    if table not in PEP_TABLES:
        raise ValueError(f"unknown table {table!r}")
    k = float(row["k"])
    p = _point(float(row["rho"]), int(row["n"]), int(row["Q"]), int(row["T"]), k)
    for name in _RECORDED[table]:
        if row.get(name) != p[name]:
            raise ValueError(f"the recorded {name} = {row.get(name)!r} differs from the rebuilt {p[name]!r}")
    if table == "STEPS" and (row["eta_a_printed"] * k != p["eta_a"]):
        raise ValueError("the recorded printed eta_a times k differs from the rebuilt eta_a")
    dT = p["descent_coef"] * int(row["T"])

    def at(budget: float) -> Callable[[], Any]:
        return build_lyapunov_pep(L, p["rho"], p["gamma"], p["eta_a"], p["eta_s"], p["n"], p["Q"], p["T"],
                                  float(row["C_0"]), float(row["C_c"]), budget=budget)

    return Target(at(dT), tuple((at(b), dT / b) for b in (dT, 1.0, 10.0, 100.0, 1000.0)), float(row["value"]))


def spep_target(row: dict[str, Any], symmetric: bool = False) -> Target:
    """The stochastic round PEP of a ``spep_grid`` cell at sigma^2 = 1 (value K), as
    :func:`fedbounds.checks.fednmap.spep.encoding.noise_coefficient` attaches proofs; the solves also at its other scales.
    ``symmetric``: the block builder, whose PEPit problem is the full PEP (the zero means as rows, the start's
    corrections pinned), solved in block form with the multipliers lifted."""
    from fedbounds.checks.fednmap.pep.encoding import theorem8_exponent
    from fedbounds.checks.fednmap.spep import constants as sc
    from fedbounds.checks.fednmap.spep.encoding import build_round_spep

    n, Q, C_0, C_c = int(row["n"]), int(row["Q"]), float(row["C_0"]), float(row["C_c"])
    p = sc.point_steps(n, Q, sc.K)
    d_c = theorem8_exponent(p["eta_hat"], sc.MU, p["gamma"], C_0)

    def at(s2: float) -> Callable[[], Any]:
        return build_round_spep(sc.L, sc.RHO, p["gamma"], p["eta_a"], p["eta_s"], n, Q, C_0, C_c, p["d"], d_c, "A", s2,
                                True, symmetric, False)

    solve = None
    if symmetric:
        from fedbounds.checks.pep.symmetric import solve_symmetric as solve
    eta_hat = p["eta_hat"]
    return Target(at(1.0), tuple((at(s), 1.0 / s) for s in (1.0, 1.0 / eta_hat**2, 100.0 / eta_hat**2)),
                  float(row["K"]), solve)


def spep_targets(row: dict[str, Any]) -> list[Target]:
    """The PEPs a cell's proof may be of, in the order tried: at n > 1 and Q > 1 the block builder first (the full
    form's Clarabel multipliers at n >= 2, Q = 2 gave no certificate), then the full form; else the full form alone
    (the block builder builds every client pair only up to :data:`~fedbounds.checks.fednmap.spep.encoding.FULL_ROWS_UP_TO`)."""
    from fedbounds.checks.fednmap.spep.encoding import FULL_ROWS_UP_TO

    full = spep_target(row)
    if 1 < int(row["n"]) <= FULL_ROWS_UP_TO and int(row["Q"]) > 1:
        return [spep_target(row, symmetric=True), full]
    return [full]


def window_target(table: str, row: dict[str, Any]) -> Target:
    """The PEP a certified row of ``pep_c0_window.json`` was certified on, by
    :mod:`fedbounds.checks.fednmap.pep.window`'s own settings (L = 1, steps from Theorem 5 at the row's rho and Q):

    * ``scan``, ``C_c`` (:func:`~fedbounds.checks.fednmap.pep.window.scan_row`): measure (a), T = 1, free corrections,
      steps K x printed, budget d = K x the printed descent coefficient; value: the row's ``ratio`` (w d);
    * ``recheck`` (:func:`~fedbounds.checks.fednmap.pep.encoding.smallest_constants`' final certificate): measure (a) from zero
      corrections at the row's (rho, n, Q, T, k, C_0, C_c), budget k d T; value: its ``ratio``;
    * ``exponent`` (:func:`~fedbounds.checks.fednmap.pep.encoding.pl_contraction_pep`): measure (b), worst Lyap_1 - Lyap_0 at
      Lyap_0 = 1; value: minus the row's ``exponent_certified`` (the row's ``ratio`` is that over Theorem 8's exponent);
    * ``steps`` (:func:`~fedbounds.checks.fednmap.pep.encoding.largest_certified_step`'s final certificate): measure (a) from
      zero corrections at k x the printed steps and the row's (C_0, C_c); the row records no ratio, only that it is
      <= 1 at k: the value proved is a new Clarabel solve's, and the bound must be <= 1.

    Measure (a) is solved also at budgets 1, 10, 100, 1000 (homogeneous in the budget, as for ``pep_evidence``).
    A ValueError for a table without certificates or a row that records no certified point."""
    from fedbounds.checks.fednmap.pep import window as pw
    from fedbounds.checks.fednmap.pep.encoding import build_lyapunov_pep, build_pl_contraction_pep, theorem5_steps, theorem8_exponent

    if table not in WINDOW_TABLES:
        raise ValueError(f"unknown table {table!r}")
    rho = float(row.get("rho", pw.RHO))
    n, Q, T = int(row["n"]), int(row["Q"]), int(row.get("T", 1))
    st = theorem5_steps(pw.L, rho, Q)
    if table == "exponent":
        mu, C_0, C_c = float(row["mu"]), float(row["C_0"]), float(row["C_c"])
        e8 = theorem8_exponent(pw.K * st["eta_hat"], mu, st["gamma"], C_0)
        if row["exponent_theorem8"] != e8:
            raise ValueError(f"the recorded exponent_theorem8 = {row['exponent_theorem8']!r} differs from the rebuilt {e8!r}")
        build = build_pl_contraction_pep(pw.L, rho, st["gamma"], pw.K * st["eta_a"], st["eta_s"], n, Q, mu, C_0, C_c)
        return Target(build, ((build, 1.0),), -float(row["exponent_certified"]))
    k = pw.K if table in ("scan", "C_c") else float(row["k"])
    free = "free" if table in ("scan", "C_c") else "zero"
    if row.get("C_0") is None:
        raise ValueError("the row records no certified C_0")
    dT = k * st["descent_coef"] * T

    def at(budget: float) -> Callable[[], Any]:
        return build_lyapunov_pep(pw.L, rho, st["gamma"], k * st["eta_a"], st["eta_s"], n, Q, T, float(row["C_0"]),
                                  float(row["C_c"]), initial_correction=free, budget=budget)

    solves = tuple((at(b), dT / b) for b in (dT, 1.0, 10.0, 100.0, 1000.0))
    if table == "steps":
        return Target(at(dT), solves, None, ceiling=1.0)
    return Target(at(dT), solves, float(row["ratio"]))


def speedup_targets(point: dict[str, Any]) -> list[Target]:
    """The PEPs of one K of ``spep_speedup.json`` (:func:`fedbounds.checks.fednmap.spep.speedup.table`: the cell
    (n, Q, C_0 = 1, C_c) at the spep grid's point, block form for n > 1), as :func:`spep_targets`: the block builder's
    full PEP first at 1 < n, Q > 1. Above :data:`~fedbounds.checks.fednmap.spep.encoding.FULL_ROWS_UP_TO` clients the block
    builder does not build every client pair, so the full PEP is not at hand: :class:`Unprovable`."""
    from fedbounds.checks.fednmap.spep.encoding import FULL_ROWS_UP_TO

    if int(point["n"]) > FULL_ROWS_UP_TO:
        raise Unprovable(f"not proved: n = {point['n']} > {FULL_ROWS_UP_TO} (FULL_ROWS_UP_TO): the block builder "
                         "builds the full PEP's client pairs only up to there, so no full PEP is at hand (by design)")
    return spep_targets(point)


@contextlib.contextmanager
def _proving() -> Iterator[None]:
    old = os.environ.get("FEDBOUNDS_PROVE")
    os.environ["FEDBOUNDS_PROVE"] = "1"
    try:
        yield
    finally:
        if old is None:
            del os.environ["FEDBOUNDS_PROVE"]
        else:
            os.environ["FEDBOUNDS_PROVE"] = old


def _agrees(v: float, value: float | None) -> bool:
    """Whether a new solve's value agrees with the row's (the two-solver rule; no recorded value: nothing to agree)."""
    from fedbounds.checks.pep.solve import DEFAULT_ABS_TOL, DEFAULT_REL_TOL

    return value is None or abs(v - value) <= DEFAULT_REL_TOL * max(abs(v), abs(value)) + DEFAULT_ABS_TOL


def _multipliers(target: Target) -> tuple[Any, float | None, list[str]]:
    """(multipliers, value at the target's scale) of the first optimal Clarabel solve over ``target.solves`` (with
    certify's one retry at stated tolerances) whose value agrees with the row's (:func:`_agrees`); an optimal solve
    that disagrees moves on to the next scale (measured: the window's scan row n = 2, Q = 1, C_0 = 1/16 is 1.93213 at
    budget d, 1.92750 at budgets 1 to 1000, the row 1.92819). (None, the first optimal value, statuses) when every
    optimal solve disagrees; (None, None, statuses) when none is optimal. Which scale the multipliers come from does not
    matter to the proof: the certificate is verified exactly against the PEP at the row's own scale and value."""
    from fedbounds.checks.pep.solve import RETRY_OPTIONS, solve_once

    statuses = []
    first = None
    solve = target.solve or solve_once
    for build, factor in target.solves:
        for opts in (None, RETRY_OPTIONS["CLARABEL"]):
            run, _ = solve(build, "CLARABEL", opts)
            statuses.append(run.status)
            if run.optimal and run.multipliers is not None:
                v = float(run.dual) * factor
                if _agrees(v, target.value):
                    return run.multipliers, v, statuses
                statuses[-1] += f" ({v:.6g}, disagrees)"
                first = v if first is None else first
                break
            if run.unbounded:
                break
    return None, first, statuses


def room(value: float) -> Fraction:
    """The largest bound - value a row accepts: the prover's own largest room at this value (delta widened x100), in
    exact arithmetic or as the prover rounds it (a binary64 delta, then the nearest fraction with denominator <= 1e15;
    the two differ near 1e-20, and a certificate made at the widest delta has the latter: measured on the window's
    scan row n = 2, Q = 2, C_0 = 4.5), then the next binary64 up (the record's delta is bound - value rounded up)."""
    from fedbounds.checks.pep.certificate import DELTA_ABS, DELTA_REL

    exact = (Fraction(DELTA_REL) * abs(Fraction(value)) + Fraction(DELTA_ABS)) * 100
    rounded = Fraction((DELTA_REL * abs(value) + DELTA_ABS) * 10**2).limit_denominator(10**15)
    return Fraction(math.nextafter(float(max(exact, rounded)), math.inf))  # the recorded delta is a float rounded up


def _proof(record: dict[str, Any], value: float, ceiling: float | None = None) -> dict[str, Any]:
    """The row's proof record from :func:`~fedbounds.checks.pep.certificate.attach`'s (``delta``: bound - value,
    rounded up), or a 'not proved' one when the exact bound B is not within :func:`room` of the row's value (nor, given
    a ``ceiling``, <= it; the record then also names the ``value`` it covers, which the row does not hold). B below
    the value proves the row's claim with room to spare (a row's value is the larger solver's, which can sit above the
    optimum; delta is then negative); B above value + room marks the stored certificate ``loose``."""
    if record.get("status") != "proved":
        return {"status": record.get("status", "not proved: no record")}
    excess = Fraction(record["bound_exact"]) - Fraction(value)
    if abs(excess) > room(value):
        return {"status": f"not proved: the stored certificate {record['file']} bounds the worst case by "
                          f"{record['bound']!r}, not within {float(room(value)):.3g} of the row's {value!r}",
                "loose": excess > 0}
    if ceiling is not None and Fraction(record["bound_exact"]) > Fraction(ceiling):
        return {"status": f"not proved: the certificate {record['file']} bounds the worst case by {record['bound']!r}, "
                          f"above the row's claim {ceiling!r}"}
    delta = float(excess)
    if Fraction(delta) < excess:
        delta = math.nextafter(delta, math.inf)
    out = {"status": "proved", "file": record["file"], "hash": record["file"].split(".")[0], "bound": record["bound"],
           "bound_exact": record["bound_exact"], "delta": delta, "rows": record["rows"],
           "max_denominator": record["max_denominator"]}
    if ceiling is not None:
        out.update(value=value, ceiling=ceiling)
    return out


def lookup(target: Target) -> dict[str, Any] | None:
    """The proof record of the certificate stored for ``target``'s rows (re-verified), or None when none is stored
    (or the target has no value yet: it is proved from a new solve)."""
    from fedbounds.checks.pep.certificate import attach, problem_of, stored

    if target.value is None or not stored(problem_of(target.build).digest).exists():
        return None
    return _proof(attach(target.build, target.value) or {}, target.value, target.ceiling)


def prove_row(target: Target | list[Target]) -> dict[str, Any]:
    """The proof record of one certified row: a stored certificate re-verified, else one Clarabel solve (agreement with
    the row's value checked) and the exact prover at the row's value (module docstring). Given several targets (the
    same worst case built two ways), the first that proves; else the first one's reason."""
    targets = target if isinstance(target, list) else [target]
    first = None
    for t in targets:
        rec = _prove_one(t, diagnosing=t is targets[-1])
        if rec["status"] == "proved" or rec.get("disagrees"):
            return rec
        first = first or rec
    assert first is not None
    return first


def _prove_one(target: Target, diagnosing: bool = True) -> dict[str, Any]:
    import tempfile

    from fedbounds.checks.pep.certificate import STORE, attach
    from fedbounds.checks.pep.solve import DEFAULT_ABS_TOL, DEFAULT_REL_TOL

    found = lookup(target)
    if found is not None and not found.pop("loose", False):
        return found
    y, v, statuses = _multipliers(target)
    if y is None and v is not None and target.value is not None:
        tol = DEFAULT_REL_TOL * max(abs(v), abs(target.value)) + DEFAULT_ABS_TOL
        return {"status": f"not proved: a new Clarabel solve gives {v!r}, the row records {target.value!r} "
                          f"(differ by {abs(v - target.value):.3g} > {tol:.3g}; at every scale: {', '.join(statuses)})",
                "disagrees": True, "new_value": v}
    if y is None or v is None:
        return found or {"status": f"not proved: no optimal Clarabel solve for the multipliers ({', '.join(statuses)})"}
    if target.value is None:  # no recorded value: the new solve's is the one proved (and must be <= the ceiling)
        target = dataclasses.replace(target, value=v)
        found = lookup(target)
        if found is not None and not found.pop("loose", False):
            return found
    assert target.value is not None
    with _proving(), tempfile.TemporaryDirectory() as tmp:
        # a stored certificate of this PEP that is looser than the row allows (made at another solve's larger value) is
        # replaced by one proved at the row's value: the same PEP, so the same file name, and a lower bound
        record = attach(target.build, target.value, [y], store=Path(tmp) if found else None)
        if found and record and _proof(record, target.value)["status"] == "proved":
            os.replace(Path(tmp) / record["file"], STORE / record["file"])
        elif found:
            return found
    out = _proof(record or {"status": "not proved: no record"}, target.value, target.ceiling)
    out.pop("loose", None)
    if diagnosing and record and record.get("status") == "not proved: no exact certificate found":
        out["status"] += f" ({diagnose(target)})"
    return out


def diagnose(target: Target) -> str:
    """Why the prover found nothing, in its own terms: whether a strictly interior dual exists at the generous target
    it starts from (value + max(|value|, 1e-3)), and how many rational face directions one facial-reduction step
    finds (:func:`fedbounds.checks.pep.certificate.face`). One or two extra Clarabel solves."""
    from fedbounds.checks.pep.certificate import face, interior_dual, problem_of

    pb = problem_of(target.build)
    v = target.value if target.value is not None else 0.0
    wide = interior_dual(pb, v + max(abs(v), 1e-3))
    W = face(pb)
    if wide is None:
        inner = f"no strictly interior dual even at value + {max(abs(v), 1e-3):.3g}"
    else:
        inner = f"an interior dual exists at value + {max(abs(v), 1e-3):.3g} (margin {wide[1]:.2g}) but none at value + delta"
    return f"{inner}; {len(W)} rational face direction(s) found" + (", tried by the prover" if W else "")


class Unprovable(ValueError):
    """A row that cannot be proved by design (its message is the row's reason, recorded as it is)."""


def _rows(data: dict[str, Any], grid: str) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(table, the dict that carries the status and proof, the point it is of). The speedup table's certificates are
    its rows' two solves (one per C_c of the pair), each of the cell (n, Q, C_0, C_c) with value K."""
    if grid in ("pep", "window"):
        for t in PEP_TABLES if grid == "pep" else WINDOW_TABLES:
            for r in data[t]:
                yield t, r, r
    elif grid == "speedup":
        for r in data["rows"]:
            for sv in r["solves"]:
                yield "solves", sv, {"n": r["n"], "Q": r["Q"], "C_0": data["C_0"], **sv}
    else:
        for r in data["rows"]:
            yield "rows", r, r


def _describe(table: str, row: dict[str, Any]) -> str:
    keys = ("n", "Q", "C_0", "C_c") if table in ("rows", "solves") else ("rho", "n", "Q", "T", "k", "mu", "C_0", "C_c")
    return f"{table} " + " ".join(f"{k}={row[k]:g}" for k in keys if isinstance(row.get(k), int | float))


def _target(grid: str, table: str, row: dict[str, Any]) -> Target | list[Target]:
    if grid == "pep":
        return pep_target(table, row)
    if grid == "window":
        return window_target(table, row)
    if grid == "speedup":
        return speedup_targets(row)
    return spep_targets(row)


def _skip(row: dict[str, Any], retry: bool) -> str | None:
    """Why a row is not (re)attempted: a ``proved`` row with its record, a row already tried (unless ``retry``), a
    row that is not certified; None when it is to be attempted."""
    status, proof = row.get("status"), row.get("proof") or {}
    if status == "proved" and proof.get("status") == "proved":
        return "proved (kept)"
    if status not in ("certified", "proved"):
        return str(status)
    if proof.get("attempted") and not retry:
        return "not proved (kept)"
    return None


def prove_grid(data: dict[str, Any], grid: str, retry: bool = False, limit: int | None = None,
               log: Callable[[str], None] = print, save: Callable[[], None] | None = None) -> dict[str, Any]:
    """Prove the certified rows of one grid's data in place (module docstring); returns the counts per table and
    the rows whose new solve disagreed. ``limit``: attempt at most that many rows; ``save()``: called after each."""
    counts: dict[str, Counter] = {}
    disagree = []
    attempted = 0
    for table, row, point in _rows(data, grid):
        c = counts.setdefault(table, Counter())
        target = None
        if row.get("status") == "proved" and (row.get("proof") or {}).get("status") != "proved":
            # proved before this pass recorded proofs: the record of its stored certificate, by lookup
            target = _target(grid, table, point)
            found = next(filter(None, map(lookup, target if isinstance(target, list) else [target])), None)
            if found is not None and found["status"] == "proved":
                row["proof"] = found
                c["proved (recorded)"] += 1
                continue
            row["status"] = "certified"
        why = _skip(row, retry)
        if why is not None:
            c[why] += 1
            continue
        if limit is not None and attempted >= limit:
            c["not attempted (limit)"] += 1
            continue
        attempted += 1
        t0 = time.perf_counter()
        try:
            target = target or _target(grid, table, point)
            rec = prove_row(target)
        except Unprovable as exc:
            rec = {"status": str(exc)}
        except Exception as exc:  # a solver or build failure is this row's reason, not the pass's end
            rec = {"status": f"not proved: {type(exc).__name__}: {str(exc)[:160]}"}
        if rec.pop("disagrees", False):
            disagree.append({"row": _describe(table, point), "status": rec["status"]})
        rec.pop("new_value", None)
        rec.pop("loose", None)
        seconds = round(time.perf_counter() - t0, 1)
        if rec["status"] == "proved":
            row["status"] = "proved"
            c["proved (new)"] += 1
        else:
            rec.update(attempted=True, seconds=seconds)
            c["not proved (new)"] += 1
        row["proof"] = rec
        log(f"{_describe(table, point)}: {rec['status']} ({seconds} s)")
        if save is not None:
            save()
    return {"counts": {t: dict(c) for t, c in counts.items()}, "disagree": disagree}


def _write(path: Path, data: dict[str, Any], grid: str) -> None:
    from fedbounds.checks.runtime.install import write_atomic

    if grid in ("pep", "window"):
        text = json.dumps(data, indent=1, allow_nan=False) + "\n"
    else:
        text = json.dumps(json_safe(data), indent=1, sort_keys=True) + "\n"
    from fedbounds.theory.core.evidence import stamp_text

    write_atomic(path, stamp_text(text))


def _stamp(data: dict[str, Any], grid: str, argv: list[str], started: str) -> None:
    """Record the pass in the file: its command, start (UTC), package versions and the rows' statuses per table, and
    append it to ``passes`` (each run of the pass once: a row's ``proof`` is the work of one of them)."""
    from fedbounds.checks.fednmap.pep.grid import _versions

    counts: dict[str, Counter] = {}
    for table, row, _ in _rows(data, grid):
        counts.setdefault(table, Counter())[row["status"]] += 1
    home = data["META"] if grid == "pep" else data["meta"] if grid == "window" else data
    old = home.get("prove") or {}
    this = {"command": " ".join([COMMAND, *argv]), "started": started}
    passes = [p for p in old.get("passes", []) if p != this] + [this]
    rec = {**this, "date": started[:10], "versions": _versions(), "statuses": {t: dict(c) for t, c in counts.items()},
           "passes": passes}
    home["prove"] = rec


def describe_stored(grid: str, log: Callable[[str], None] = print) -> Counter:
    """The one-off migration to self-contained certificates (docs/provenance.md §7): for each row of ``grid`` that
    names a certificate, rebuild its PEP(s) as the pass does (no solve) and, where the stored file of those rows
    (binary64, else the exactly built ones) names no builder yet, write the rebuilt problem's description into it.
    The file's name (the rows' hash) and its rows are unchanged; a file whose rows are not the rebuilt PEP's is
    reported, never described. Returns the counts."""
    import gzip

    from fedbounds.checks.pep.certificate import _exact_problem, _write, check_problem, describe, load, problem_of, stored

    data = json.loads(GRIDS[grid].read_text(encoding="utf-8"))
    counts: Counter = Counter()
    for table, row, point in _rows(data, grid):
        file = (row.get("proof") or {}).get("file")
        if not file:
            continue
        try:
            target = _target(grid, table, point)
        except (Unprovable, ValueError) as exc:
            counts["no target"] += 1
            log(f"{_describe(table, point)}: no target: {exc}")
            continue
        for t in target if isinstance(target, list) else [target]:
            pb = problem_of(t.build)
            cands = [(pb, "binary64")]
            if not stored(pb.digest).exists() and (pbx := _exact_problem(t.build, pb)) is not None:
                cands.append((pbx, "exact"))
            hit = next(((q, d) for q, d in cands if stored(q.digest).name == file), None)
            if hit is None:
                continue
            q, data_kind = hit
            path = stored(q.digest)
            cert = load(path)
            if (cert.get("problem") or {}).get("builder"):
                counts["already described"] += 1
                break
            desc = describe(t.build)
            if desc is None:
                counts["builder not described"] += 1
                break
            cert["problem"] = {**cert.get("problem", {}), **desc, "hash": q.digest, "data": data_kind}
            try:
                check_problem(cert, path.name)
            except Exception as exc:
                counts["rebuilt problem refuses the file"] += 1
                log(f"{path.name}: not described: {exc}")
                break
            _write(path, cert)
            assert gzip.open(path).read()  # written whole
            counts["described"] += 1
            log(f"{path.name}: described ({_describe(table, point)})")
            break
        else:
            counts["file not of the rebuilt rows"] += 1
            log(f"{_describe(table, point)}: {file} is not the file of the rebuilt rows")
    return counts


def main(argv: list[str] | None = None) -> int:
    """The CLI (module docstring); exit 2 on an unreadable or unwritable file, 130 on interrupt."""
    argv = sys.argv[1:] if argv is None else list(argv)
    ap = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    ap.add_argument("--grid", choices=(*GRIDS, "all"), default="all", help="the evidence file(s) to prove (default all)")
    ap.add_argument("--write", action="store_true", help="rewrite the grid file(s), after each row (else print only)")
    ap.add_argument("--retry", action="store_true", help="attempt again the rows a previous pass did not prove")
    ap.add_argument("--limit", type=int, default=None, help="attempt at most this many rows per grid")
    ap.add_argument("--describe-store", action="store_true",
                    help="one-off migration: write each stored certificate's problem (builder, parameters) into it")
    args = ap.parse_args(argv)
    if args.describe_store:
        for grid in tuple(GRIDS) if args.grid == "all" else (args.grid,):
            print(json.dumps({grid: dict(describe_stored(grid, log=lambda s: print(s, flush=True)))}), flush=True)
        return 0
    started = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    if args.limit is not None and args.limit < 0:
        print("error: --limit must be >= 0", file=sys.stderr)
        return 2
    for grid in tuple(GRIDS) if args.grid == "all" else (args.grid,):
        path = GRIDS[grid]
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            print(f"error: cannot read {path}: {exc}", file=sys.stderr)
            return 2

        def save(data: dict[str, Any] = data, grid: str = grid, path: Path = path) -> None:
            if args.write:
                _stamp(data, grid, argv, started)
                _write(path, data, grid)

        try:
            summary = prove_grid(data, grid, retry=args.retry, limit=args.limit,
                                 log=lambda s: print(s, flush=True), save=save)
            save()
        except OSError as exc:
            print(f"error: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        print(json.dumps({grid: summary}, indent=1), flush=True)
        if args.write:
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except KeyboardInterrupt:
        raise SystemExit(130) from None
