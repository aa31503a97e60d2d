"""Sweep cells of FedNMap's stochastic PEP: one certified per-round noise coefficient K*(n, Q, C_0, C_c) per cell.

Named by a spec as ``cell = "fedbounds.checks.studies.spep_grid:compute_spep_cell"`` (``checks/specs/fednmap_spep_grid.toml``).
A cell is one grid point of the evidence ``theory/fednmap/spep_grid.json`` (Theorem 8's noise, arXiv 2602.03357): the
two-solver certificate of :func:`fedbounds.checks.fednmap.spep.constants.round_noise` at

* ``instance.params``: ``n`` (clients), ``L`` and ``rho`` (the class; the grid's scale is L = 1, rho = 0.1: any other
  point is the same by scale invariance, so other values are refused rather than silently mislabelled);
* ``params``: ``Q``, ``C_0``, ``C_c`` (the Lyapunov constants), ``k`` (the steps are k times Theorem 5's printed ones
  at m = 1), ``mu`` (Theorem 8's exponent d_c), ``form``: "full" (one Gram matrix), "symmetric" (the client-symmetric
  block form, exact and of a size independent of n) or "auto" (full for n <= 2, where the committed rows were solved
  that way, block form from n = 3).

The row is exactly what ``spep_checks`` records per point (n, Q, C_0, C_c, status, K, values, statuses, gram_dim) plus
``form``; K = "inf" when unbounded (no descent), None when the solvers could not decide. ``rounds``, ``replicas``,
``seeds``, ``metrics`` and ``target`` of the spec are not used (the spec format requires them).

:func:`cell_work` is the cell's work estimate for ``$FEDBOUNDS_MAX_CELL_WORK`` (``fedbounds.checks.sweep.spec``), and
``python -m fedbounds.checks.studies.spep_grid STORE --write`` turns a finished store into the committed evidence (the
rows as stored, graded by :func:`fedbounds.checks.fednmap.spep.constants.grade`). The rows it writes carry no ``proof``:
``python -m fedbounds.checks.fednmap.pep.prove --grid spep --write`` then proves each certified cell exactly
(the full-form PEP at sigma^2 = 1, value K, as :func:`fedbounds.checks.fednmap.spep.encoding.noise_coefficient` attaches proofs;
stored certificates are looked up, only new cells solved). Pass of 2026-12-02: 96 of the 143 certified cells proved
(every Q = 1 cell, n = 1, 2, 4; and n = 1, Q = 2); none of the 47 at n >= 2, Q = 2 (no strictly interior dual; the
prover's face step finds 1 to 15 rational directions and still no certificate).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fedbounds.checks.runtime.jsonsafe import json_safe

__all__ = ["FORMS", "SPEC", "cell_work", "compute_spep_cell", "evidence_from_store", "main"]

FORMS = ("auto", "full", "symmetric")
#: the shipped spec whose store becomes ``theory/fednmap/spep_grid.json``
SPEC = "fednmap_spep_grid"
#: work-model constants (see :func:`cell_work`): solver pairs x variance scales x interior-point iterations
_SOLVES, _ITERATIONS, _BUILD = 2 * 3, 50, 1e6


def _form(form: str, n: int) -> bool:
    """Whether the cell solves the block form."""
    if form not in FORMS:
        raise ValueError(f"params.form: expected one of {list(FORMS)}, got {form!r}")
    return form == "symmetric" or (form == "auto" and n >= 3)


def _number(where: str, value: Any, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0 or (positive and value == 0):
        raise ValueError(f"{where}: expected a finite number {'> 0' if positive else '>= 0'}, got {value!r}")
    return float(value)


def _point(config: Mapping[str, Any]) -> dict[str, Any]:
    """The cell's (n, Q, C_0, C_c, k, mu, symmetric) from its configuration; a ValueError names a bad field."""
    from fedbounds.checks.fednmap.spep import constants as sc

    inst, params = dict(config["instance"]["params"]), dict(config["params"])
    for name, want in (("L", sc.L), ("rho", sc.RHO)):
        got = _number(f"instance.{name}", inst.get(name, want))
        if got != want:
            raise ValueError(f"instance.{name}: the stochastic PEP grid is at L = {sc.L:g}, rho = {sc.RHO:g} (any other point "
                             f"with the same rho/L is this one by scale invariance), got {name} = {got:g}")
    n, Q = inst.get("n"), params.get("Q")
    for where, v in (("instance.n", n), ("params.Q", Q)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{where}: expected an integer >= 1, got {v!r}")
    return {"n": int(n), "Q": int(Q), "C_0": _number("params.C_0", params.get("C_0")),  # type: ignore[arg-type]
            "C_c": _number("params.C_c", params.get("C_c")), "k": _number("params.k", params.get("k", sc.K), True),
            "mu": _number("params.mu", params.get("mu", sc.MU), True),
            "symmetric": _form(str(params.get("form", "auto")), int(n))}  # type: ignore[arg-type]


def compute_spep_cell(config: Mapping[str, Any]) -> dict[str, Any]:
    """One certificate of K* (module docstring): the evidence row, plus ``form``."""
    from fedbounds.checks.fednmap.spep.constants import round_noise

    p = _point(config)
    cert = round_noise(p["n"], p["Q"], p["C_0"], p["C_c"], k=p["k"], mu=p["mu"], symmetric=p["symmetric"])
    value = cert.value if (cert.certified or cert.unbounded) else None
    return json_safe({"n": p["n"], "Q": p["Q"], "C_0": p["C_0"], "C_c": p["C_c"], "status": cert.status, "K": value,
                  "values": dict(cert.values), "statuses": dict(cert.statuses), "gram_dim": cert.gram_dim,
                  "form": "symmetric" if p["symmetric"] else "full"})


def cell_work(inst_params: Mapping[str, Any], params: Mapping[str, Any], grid: Mapping[str, list]) -> tuple[float, str, Any]:
    """(operations, field, value) of the spec's most expensive cell, for ``$FEDBOUNDS_MAX_CELL_WORK``.

    Model: building the PEP costs about 1e6 (n Q)^3 (PEPit's expressions over every client's leaves; measured: the
    block form at (n, Q) = (64, 2) took 200 CPU s a cell, (16, 2) 6 s), solving it 6 x 50 s^6 (two solvers, up to three
    variance scales, about 50 interior-point iterations of a Schur complement of order s^2), s the Gram size: n (3Q + 1)
    in the full form, 2 (3Q + 1) in the block form (two blocks whose size does not depend on n). One operation is about
    1e-10 CPU s here (full form (4, 2): 1.4e11 estimated, 10 s measured), so 1e13 is some minutes to an hour.
    The field named is the grid's (or fixed) n, or Q when n is 1."""
    def largest(name: str, section: str, fixed: Mapping[str, Any], default: Any) -> tuple[Any, str]:
        for key in (name, f"{section}.{name}"):
            if key in grid:
                vals = [v for v in grid[key] if isinstance(v, int) and not isinstance(v, bool)]
                return (max(vals) if vals else default), f"grid.{key}"
        return fixed.get(name, default), f"{section}.{name}"

    n, n_where = largest("n", "instance", inst_params, 1)
    Q, q_where = largest("Q", "params", params, 1)
    forms = grid.get("form", grid.get("params.form", [params.get("form", "auto")]))
    n, Q = int(n) if isinstance(n, int) else 1, int(Q) if isinstance(Q, int) else 1
    full = any(f in ("full",) or (f == "auto" and n <= 2) or f not in FORMS for f in forms)
    s = (n if full else 2) * (3 * Q + 1)
    work = _BUILD * float(n * Q) ** 3 + _SOLVES * _ITERATIONS * float(s) ** 6
    return (work, n_where, n) if n > 1 else (work, q_where, Q)


# ---------------------------------------------------------------- the store -> the committed evidence


def evidence_from_store(store: str | Path) -> dict[str, Any]:
    """The evidence JSON from a store of :data:`SPEC`'s cells: the stored rows,
    graded by :func:`fedbounds.checks.fednmap.spep.constants.grade`. A ValueError when the store is missing, holds another
    cell, or a point outside the grade's scale (L = 1, rho = 0.1, mu = 0.1, k = 16)."""
    from fedbounds.checks.fednmap.spep import constants as sc
    from fedbounds.checks.sweep.spec import cell_key
    from fedbounds.checks.sweep.store import Store, check_store_path

    path = Path(store)
    check_store_path(path)
    if not path.exists():
        raise ValueError(f"store {str(path)!r} does not exist: run `fedbounds sweep {SPEC} --store {path}` first")
    rows, fingerprint = [], None
    with Store(path, readonly=True) as st:
        fingerprint = st.fingerprint()
        for r in st.rows(curves=False):
            if r.config.get("cell") != CELL or cell_key(r.config) != r.key:
                raise ValueError(f"store {str(path)!r}: cell {r.key[:12]} is not a {CELL} cell")
            p = _point(r.config)
            if (p["k"], p["mu"]) != (sc.K, sc.MU):
                raise ValueError(f"store {str(path)!r}: cell {r.key[:12]} is at k = {p['k']:g}, mu = {p['mu']:g}; the evidence "
                                 f"is graded at k = {sc.K:g}, mu = {sc.MU:g}")
            rows.append({k: v for k, v in r.result.items() if k != "curves"})  # the sweep's empty curve layout
    if not rows:
        raise ValueError(f"store {str(path)!r} holds no cell")
    rows.sort(key=lambda r: (r["n"], r["Q"], r["C_0"], r["C_c"]))
    data = sc.grade(rows)
    data["command"] = f"fedbounds sweep {SPEC} && python -m fedbounds.checks.studies.spep_grid --write"
    data["spec"] = {"name": SPEC, "fingerprint": fingerprint, "cells": len(rows)}
    return data


CELL = "fedbounds.checks.studies.spep_grid:compute_spep_cell"


def _default_store() -> Path:
    from fedbounds.checks.commands.sweep import default_store
    from fedbounds.checks.sweep.spec import load_spec

    spec = load_spec(SPEC)
    return default_store(spec.name, spec.fingerprint)


def main(argv: list[str] | None = None) -> int:
    """``python -m fedbounds.checks.studies.spep_grid [STORE] [--write]``: the evidence from the store (default: the
    spec's default store), printed, or written to ``theory/fednmap/spep_grid.json`` (atomically)."""
    from fedbounds.checks.fednmap.spep.constants import TARGET

    ap = argparse.ArgumentParser(prog="python -m fedbounds.checks.studies.spep_grid", description=main.__doc__)
    ap.add_argument("store", nargs="?", default=None, help=f"the sweep store (default: {SPEC}'s default store)")
    ap.add_argument("--write", action="store_true", help=f"write {TARGET} instead of printing")
    ap.add_argument("--partial", action="store_true",
                    help=f"with --write: the store may cover fewer cells than {TARGET}; its cells are merged into it (none dropped)")
    ap.add_argument("--target", default=TARGET, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.partial and not args.write:
        print("error: --partial goes with --write (it merges the store into the committed grid)", file=sys.stderr)
        return 2
    if sys.stdout is None and not args.write:
        print("error: standard output is closed; redirect it to a file, or use --write", file=sys.stderr)
        return 2
    try:
        data = evidence_from_store(args.store or _default_store())
        if args.write:
            data = _merge_committed(data, Path(args.target), args.partial)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a folder, a FIFO or an unreadable file named as the store
        print(f"error: {exc.filename or args.store!r}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    text = json.dumps(json_safe(data), indent=1, sort_keys=True)
    if not args.write:
        try:
            print(text, flush=True)
        except BrokenPipeError:
            return 141
        except OSError as exc:
            print(f"error: cannot write standard output: {exc.strerror or exc}", file=sys.stderr)
            return 2
        return 0
    from fedbounds.checks.runtime.install import write_evidence

    return write_evidence(Path(args.target), text, f"{data['spec']['cells']} cells")


def _cell(row: Mapping[str, Any]) -> tuple:
    return (row["n"], row["Q"], row["C_0"], row["C_c"])


def _merge_committed(data: dict[str, Any], target: Path, partial: bool) -> dict[str, Any]:
    """``data`` (from a store) checked against the committed grid at ``target`` before it replaces it: a store that
    lacks any committed cell is refused (ValueError) unless ``partial``, which merges the store's rows into the
    committed ones (a cell in both: the store's row), so that no committed cell is ever dropped."""
    from fedbounds.checks.fednmap.spep import constants as sc
    from fedbounds.theory.core.evidence import EvidenceError, load

    if not target.exists():
        return data
    try:
        old = load(target)
    except EvidenceError as exc:
        raise ValueError(f"{exc} (refusing to write over it: restore it first)") from None
    new_cells = {_cell(r) for r in data["rows"]}
    lost = [r for r in old.get("rows", []) if _cell(r) not in new_cells]
    if not lost:
        return data
    if not partial:
        raise ValueError(f"the store covers {len(new_cells)} cells and lacks {len(lost)} of the {len(old.get('rows', []))} "
                         f"cells of {target}; writing it would drop them. Pass --partial to merge the store into the committed grid")
    rows = sorted([*lost, *data["rows"]], key=lambda r: (r["n"], r["Q"], r["C_0"], r["C_c"]))
    merged = sc.grade(rows)
    merged["command"] = data["command"] + " --partial"
    merged["spec"] = {**data["spec"], "cells": len(rows), "merged_from_committed": len(lost)}
    return merged

if __name__ == "__main__":
    sys.exit(main())
