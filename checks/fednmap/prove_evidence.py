"""The prove pass of FedNMap's committed PEP evidence grids: an exact rational certificate for every certified row.

``python -m fedbounds.checks.fednmap.prove_evidence [--grid pep|spep|both] [--write]`` takes each row of
``theory/fednmap/pep_evidence.json`` (tables DESCENT, SMALLEST_C0, STEPS) and ``theory/fednmap/spep_grid.json`` whose
status is ``certified`` and

1. rebuilds the PEP its certificate is of, from the point the row records, with the generator's own builders (so the
   rows' hash, :func:`fedbounds.checks.pep.certificate.problem_of`, is the certificate file's name):
   the descent PEP :func:`~fedbounds.checks.fednmap.pep.build_lyapunov_pep` in full form at budget d T (the row's
   value is the ratio w d T, :func:`~fedbounds.checks.fednmap.pep.descent_check`), or the stochastic round
   :func:`~fedbounds.checks.fednmap.spep.build_round_spep` in full form at sigma^2 = 1 (the row's K, as
   :func:`~fedbounds.checks.fednmap.spep.noise_coefficient` attaches its proofs);
2. solves it once with Clarabel for the multipliers (at the generator's other scales, budgets 1, 10, 100, 1000 or
   sigma^2 = 1/eta_hat^2, 100/eta_hat^2, when the first solve is not optimal: the PEP is homogeneous in the budget,
   resp. sigma^2, so the multipliers are the same and the value scales exactly). A new value that differs from the
   row's beyond the two-solver tolerance (:data:`~fedbounds.checks.pep.solve.DEFAULT_REL_TOL` relative +
   :data:`~fedbounds.checks.pep.solve.DEFAULT_ABS_TOL`) stops there: the row stays ``certified`` and is reported;
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
pass's command, date, versions and status counts in ``META["prove"]`` (pep_evidence) or ``prove`` (spep_grid);
without it the counts are printed only.
"""

from __future__ import annotations

import argparse
import contextlib
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

from fedbounds.checks.core.jsonsafe import json_safe

__all__ = ["PEP_FILE", "SPEP_FILE", "Target", "diagnose", "lookup", "main", "pep_target", "prove_grid", "prove_row", "room",
           "spep_target"]

ROOT = Path(__file__).resolve().parents[2]
PEP_FILE = ROOT / "theory" / "fednmap" / "pep_evidence.json"
SPEP_FILE = ROOT / "theory" / "fednmap" / "spep_grid.json"
PEP_TABLES = ("DESCENT", "SMALLEST_C0", "STEPS")
COMMAND = "python -m fedbounds.checks.fednmap.prove_evidence"
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
    value: float
    #: how a builder is solved: ``solve_once`` (None) or the client-symmetric block form's ``solve_symmetric``
    solve: Callable[..., Any] | None = None


def pep_target(table: str, row: dict[str, Any]) -> Target:
    """The descent PEP of a ``pep_evidence`` row: measure (a) at budget d T, the (C_0, C_c) and step multiple k the row
    records (:func:`fedbounds.checks.fednmap.pep_grid.descent_entry` and the searches' final certificates). A
    ValueError when the recorded steps differ from the ones recomputed from (rho, n, Q, T, k)."""
    from fedbounds.checks.fednmap.pep import build_lyapunov_pep
    from fedbounds.checks.fednmap.pep_grid import L, _point

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
    :func:`fedbounds.checks.fednmap.spep.noise_coefficient` attaches proofs; the solves also at its other scales.
    ``symmetric``: the block builder, whose PEPit problem is the full PEP (the zero means as rows, the start's
    corrections pinned), solved in block form with the multipliers lifted."""
    from fedbounds.checks.fednmap import spep_checks as sc
    from fedbounds.checks.fednmap.pep import theorem8_exponent
    from fedbounds.checks.fednmap.spep import build_round_spep

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
    (the block builder builds every client pair only up to :data:`~fedbounds.checks.fednmap.spep.FULL_ROWS_UP_TO`)."""
    from fedbounds.checks.fednmap.spep import FULL_ROWS_UP_TO

    full = spep_target(row)
    if 1 < int(row["n"]) <= FULL_ROWS_UP_TO and int(row["Q"]) > 1:
        return [spep_target(row, symmetric=True), full]
    return [full]


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


def _multipliers(target: Target) -> tuple[Any, float | None, list[str]]:
    """(multipliers, value at the target's scale) of the first optimal Clarabel solve over ``target.solves`` (with
    certify's one retry at stated tolerances), or (None, None, statuses)."""
    from fedbounds.checks.pep.solve import RETRY_OPTIONS, solve_once

    statuses = []
    solve = target.solve or solve_once
    for build, factor in target.solves:
        for opts in (None, RETRY_OPTIONS["CLARABEL"]):
            run, _ = solve(build, "CLARABEL", opts)
            statuses.append(run.status)
            if run.optimal and run.multipliers is not None:
                return run.multipliers, float(run.dual) * factor, statuses
            if run.unbounded:
                break
    return None, None, statuses


def room(value: float) -> Fraction:
    """The largest bound - value a row accepts: the prover's own largest room at this value (delta widened x100)."""
    from fedbounds.checks.pep.certificate import DELTA_ABS, DELTA_REL

    return (Fraction(DELTA_REL) * abs(Fraction(value)) + Fraction(DELTA_ABS)) * 100


def _proof(record: dict[str, Any], value: float) -> dict[str, Any]:
    """The row's proof record from :func:`~fedbounds.checks.pep.certificate.attach`'s (``delta``: bound - value,
    rounded up), or a 'not proved' one when the exact bound B is not within :func:`room` of the row's value. B below
    the value proves the row's claim with room to spare (a row's value is the larger solver's, which can sit above the
    optimum; delta is then negative); B above value + room marks the stored certificate ``loose``."""
    if record.get("status") != "proved":
        return {"status": record.get("status", "not proved: no record")}
    excess = Fraction(record["bound_exact"]) - Fraction(value)
    if abs(excess) > room(value):
        return {"status": f"not proved: the stored certificate {record['file']} bounds the worst case by "
                          f"{record['bound']!r}, not within {float(room(value)):.3g} of the row's {value!r}",
                "loose": excess > 0}
    delta = float(excess)
    if Fraction(delta) < excess:
        delta = math.nextafter(delta, math.inf)
    return {"status": "proved", "file": record["file"], "hash": record["file"].split(".")[0], "bound": record["bound"],
            "bound_exact": record["bound_exact"], "delta": delta, "rows": record["rows"],
            "max_denominator": record["max_denominator"]}


def lookup(target: Target) -> dict[str, Any] | None:
    """The proof record of the certificate stored for ``target``'s rows (re-verified), or None when none is stored."""
    from fedbounds.checks.pep.certificate import attach, problem_of, stored

    if not stored(problem_of(target.build).digest).exists():
        return None
    return _proof(attach(target.build, target.value) or {}, target.value)


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
    if y is None or v is None:
        return found or {"status": f"not proved: no optimal Clarabel solve for the multipliers ({', '.join(statuses)})"}
    tol = DEFAULT_REL_TOL * max(abs(v), abs(target.value)) + DEFAULT_ABS_TOL
    if abs(v - target.value) > tol:
        return {"status": f"not proved: a new Clarabel solve gives {v!r}, the row records {target.value!r} "
                          f"(differ by {abs(v - target.value):.3g} > {tol:.3g})", "disagrees": True, "new_value": v}
    with _proving(), tempfile.TemporaryDirectory() as tmp:
        # a stored certificate of this PEP that is looser than the row allows (made at another solve's larger value) is
        # replaced by one proved at the row's value: the same PEP, so the same file name, and a lower bound
        record = attach(target.build, target.value, [y], store=Path(tmp) if found else None)
        if found and record and record.get("status") == "proved" and abs(_excess(record, target.value)) <= room(target.value):
            os.replace(Path(tmp) / record["file"], STORE / record["file"])
        elif found:
            return found
    out = _proof(record or {"status": "not proved: no record"}, target.value)
    out.pop("loose", None)
    if diagnosing and record and record.get("status") == "not proved: no exact certificate found":
        out["status"] += f" ({diagnose(target)})"
    return out


def _excess(record: dict[str, Any], value: float) -> Fraction:
    return Fraction(record["bound_exact"]) - Fraction(value)


def diagnose(target: Target) -> str:
    """Why the prover found nothing, in its own terms: whether a strictly interior dual exists at the generous target
    it starts from (value + max(|value|, 1e-3)), and how many rational face directions one facial-reduction step
    finds (:func:`fedbounds.checks.pep.certificate.face`). One or two extra Clarabel solves."""
    from fedbounds.checks.pep.certificate import face, interior_dual, problem_of

    pb = problem_of(target.build)
    v = target.value
    wide = interior_dual(pb, v + max(abs(v), 1e-3))
    W = face(pb)
    if wide is None:
        inner = f"no strictly interior dual even at value + {max(abs(v), 1e-3):.3g}"
    else:
        inner = f"an interior dual exists at value + {max(abs(v), 1e-3):.3g} (margin {wide[1]:.2g}) but none at value + delta"
    return f"{inner}; {len(W)} rational face direction(s) found" + (", tried by the prover" if W else "")


def _rows(data: dict[str, Any], grid: str) -> Iterator[tuple[str, dict[str, Any]]]:
    if grid == "pep":
        for t in PEP_TABLES:
            for r in data[t]:
                yield t, r
    else:
        for r in data["rows"]:
            yield "rows", r


def _describe(table: str, row: dict[str, Any]) -> str:
    keys = ("n", "Q", "C_0", "C_c") if table == "rows" else ("rho", "n", "Q", "T", "k", "C_0", "C_c")
    return f"{table} " + " ".join(f"{k}={row[k]:g}" for k in keys)


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
    for table, row in _rows(data, grid):
        c = counts.setdefault(table, Counter())
        target = None
        if row.get("status") == "proved" and (row.get("proof") or {}).get("status") != "proved":
            # proved before this pass recorded proofs: the record of its stored certificate, by lookup
            target = pep_target(table, row) if grid == "pep" else spep_targets(row)
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
            target = target or (pep_target(table, row) if grid == "pep" else spep_targets(row))
            rec = prove_row(target)
        except Exception as exc:  # a solver or build failure is this row's reason, not the pass's end
            rec = {"status": f"not proved: {type(exc).__name__}: {str(exc)[:160]}"}
        if rec.pop("disagrees", False):
            disagree.append({"row": _describe(table, row), "status": rec["status"]})
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
        log(f"{_describe(table, row)}: {rec['status']} ({seconds} s)")
        if save is not None:
            save()
    return {"counts": {t: dict(c) for t, c in counts.items()}, "disagree": disagree}


def _write(path: Path, data: dict[str, Any], grid: str) -> None:
    from fedbounds.checks.core.install import write_atomic

    if grid == "pep":
        text = json.dumps(data, indent=1, allow_nan=False) + "\n"
    else:
        text = json.dumps(json_safe(data), indent=1, sort_keys=True) + "\n"
    write_atomic(path, text)


def _stamp(data: dict[str, Any], grid: str, argv: list[str], started: str) -> None:
    """Record the pass in the file: its command, start (UTC), package versions and the rows' statuses per table, and
    append it to ``passes`` (each run of the pass once: a row's ``proof`` is the work of one of them)."""
    from fedbounds.checks.fednmap.pep_grid import _versions

    counts: dict[str, Counter] = {}
    for table, row in _rows(data, grid):
        counts.setdefault(table, Counter())[row["status"]] += 1
    old = (data["META"] if grid == "pep" else data).get("prove") or {}
    this = {"command": " ".join([COMMAND, *argv]), "started": started}
    passes = [p for p in old.get("passes", []) if p != this] + [this]
    rec = {**this, "date": started[:10], "versions": _versions(), "statuses": {t: dict(c) for t, c in counts.items()},
           "passes": passes}
    if grid == "pep":
        data["META"]["prove"] = rec
    else:
        data["prove"] = rec


def main(argv: list[str] | None = None) -> int:
    """The CLI (module docstring); exit 2 on an unreadable or unwritable file, 130 on interrupt."""
    argv = sys.argv[1:] if argv is None else list(argv)
    ap = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    ap.add_argument("--grid", choices=("pep", "spep", "both"), default="both")
    ap.add_argument("--write", action="store_true", help="rewrite the grid file(s), after each row (else print only)")
    ap.add_argument("--retry", action="store_true", help="attempt again the rows a previous pass did not prove")
    ap.add_argument("--limit", type=int, default=None, help="attempt at most this many rows per grid")
    args = ap.parse_args(argv)
    started = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    if args.limit is not None and args.limit < 0:
        print("error: --limit must be >= 0", file=sys.stderr)
        return 2
    for grid in ("pep", "spep") if args.grid == "both" else (args.grid,):
        path = PEP_FILE if grid == "pep" else SPEP_FILE
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
