"""Run and write the two exact studies: ``results/fednmap_speedup_inside/`` and ``results/heterogeneity/``.

    python -m fedbounds.checks.studies.exact speedup_inside [--out DIR] [--processes 2]
    python -m fedbounds.checks.studies.exact heterogeneity  [--out DIR] [--processes 2]

Each runs ``fedbounds sweep <spec> --store reports/sweeps/<spec>-study.sqlite`` (speedup_inside:
``fednmap_speedup_inside`` and its cap companion ``fednmap_speedup_inside_cap``; heterogeneity: ``heterogeneity``
(exact) and ``heterogeneity_lasso`` (Monte Carlo)), samples the CPU time of the sweep's process
tree from /proc, then writes the study's CSVs, a figure, ``RUN.json`` (command, commit, sha256 of the files that
decide the numbers, wall, CPU, load) and ``index.html``. Exact cells have no replicas: their slopes carry the
least-squares fit's residuals, not intervals.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from fedbounds.checks.runtime.cpu import tree_cpu

__all__ = ["fit_slope", "main", "write_heterogeneity", "write_speedup_inside"]

ROOT = Path(__file__).resolve().parents[2]
DECIDING = ["algorithms/closed_form.py", "algorithms/exact.py", "algorithms/instances/quadratic.py", "algorithms/fednmap.py",
            "algorithms/baselines.py", "checks/fednmap/inside.py", "checks/studies/exact_cells.py", "theory/fednmap/formulas.py"]


def fit_slope(x: list[float], y: list[float]) -> dict[str, Any]:
    """Least-squares slope of log y on log x, with the fit's residuals (exact y: no interval, the residuals say how
    far the points are from a power law)."""
    lx, ly = np.log(np.asarray(x, dtype=float)), np.log(np.asarray(y, dtype=float))
    A = np.column_stack([np.ones_like(lx), lx])
    coef, *_ = np.linalg.lstsq(A, ly, rcond=None)
    res = ly - A @ coef
    return {"slope": float(coef[1]), "points": int(lx.size), "rms_residual_log": float(np.sqrt(np.mean(res**2))),
            "max_abs_residual_log": float(np.max(np.abs(res)))}


def _rows(store: Path) -> list[Any]:
    from fedbounds.checks.sweep.store import Store

    with Store(store, readonly=True) as st:
        return list(st.rows(curves=False))


def _write_csv(path: Path, header: list[str], rows: list[list[Any]]) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        for r in rows:
            w.writerow(["" if v is None else (repr(v) if isinstance(v, float) else v) for v in r])
    os.replace(tmp, path)


def _inside_cells(rows: list[Any]) -> list[dict[str, Any]]:
    out = []
    for r in rows:
        res, c = r.result, r.coords
        out.append({"method": res.get("method"), "steps": res.get("steps_kind"), "n": int(r.config["instance"]["params"]["n"]),
                    "Q": int(r.config["params"]["Q"]), "heterogeneity": float(r.config["instance"]["params"].get("heterogeneity", 0.0)),
                    "scope": res["scope"], "rounds_to_target": res["rounds_to_target"], "floor": res["floor"],
                    "floor_over_target": res["floor_over_target"],
                    **{k: res["steps"][k] for k in ("gamma", "eta_hat", "eta_a", "eta_s", "m")},
                    "k": res.get("k"), "cap_binds": res["cap_binds"], "eta_hat_rule_over_cap": res["eta_hat_rule_over_cap"],
                    "nQ_cap": res["nQ_cap"], "theorem8_variance_term": res["theorem8_variance_term"],
                    "theorem8_drift_term": res["theorem8_drift_term"], "cf_method": res["closed_form"]["method"],
                    "reachable_dim": res["closed_form"]["reachable_dim"], "spectral_radius": res["closed_form"]["spectral_radius"],
                    "probe_cpu_s": res["closed_form"]["probe_cpu_s"], "closed_form_cpu_s": res["closed_form"]["closed_form_cpu_s"],
                    "cell_s": r.elapsed, "coords": c})
    return sorted(out, key=lambda d: (d["method"], d["steps"], d["heterogeneity"], d["n"], d["Q"]))


_CELL_COLS = ["method", "steps", "n", "Q", "heterogeneity", "scope", "rounds_to_target", "floor", "floor_over_target", "gamma", "eta_hat",
              "eta_a", "eta_s", "m", "k", "cap_binds", "eta_hat_rule_over_cap", "nQ_cap", "theorem8_variance_term", "theorem8_drift_term",
              "cf_method", "reachable_dim", "spectral_radius", "probe_cpu_s", "closed_form_cpu_s", "cell_s"]


def write_speedup_inside(store: Path, out: Path, cap_store: Path | None = None) -> dict[str, Any]:
    """cells.csv, slopes.csv (with the Monte Carlo study's slopes beside), rounds_vs_nQ.png, and from ``cap_store``
    (the companion spec at target 0.1) cap.csv; returns a summary."""
    cap = _write_cap(cap_store, out) if cap_store is not None and cap_store.exists() else None
    cells = _inside_cells(_rows(store))
    out.mkdir(parents=True, exist_ok=True)
    _write_csv(out / "cells.csv", _CELL_COLS, [[d[k] for k in _CELL_COLS] for d in cells])
    slopes = []
    for steps in ("printed", "pep"):
        sub = [d for d in cells if d["steps"] == steps and d["rounds_to_target"]]
        series = [("nQ", "all", sub, lambda d: d["n"] * d["Q"])]
        series += [("n", f"Q={Q}", [d for d in sub if d["Q"] == Q], lambda d: d["n"]) for Q in sorted({d["Q"] for d in sub})]
        series += [("Q", f"n={n}", [d for d in sub if d["n"] == n], lambda d: d["Q"]) for n in sorted({d["n"] for d in sub})]
        for axis, name, pts, xf in series:
            if len(pts) >= 2:
                f = fit_slope([xf(d) for d in pts], [d["rounds_to_target"] for d in pts])
                slopes.append({"steps": steps, "axis": axis, "series": name, **f,
                               "scopes": ";".join(sorted({d["scope"] for d in pts}))})
    mc = ROOT / "results/fednmap_speedup/slopes.csv"
    mc_rows = {}
    if mc.exists():
        with mc.open() as fh:
            mc_rows = {(r["axis"], r["series"]): r for r in csv.DictReader(fh) if r["method"] == "fednmap"}
    header = ["steps", "axis", "series", "slope", "points", "rms_residual_log", "max_abs_residual_log", "interval", "scopes",
              "monte_carlo_slope", "monte_carlo_boot_low", "monte_carlo_boot_high"]
    rows = []
    for s in slopes:
        m = mc_rows.get((s["axis"], s["series"]), {})
        rows.append([s["steps"], s["axis"], s["series"], s["slope"], s["points"], s["rms_residual_log"], s["max_abs_residual_log"],
                     "none: exact numbers, no replicas (see the residuals)", s["scopes"], m.get("slope") or None,
                     m.get("boot_low") or None, m.get("boot_high") or None])
    _write_csv(out / "slopes.csv", header, rows)
    _figure_speedup(cells, out / "rounds_vs_nQ.png")
    pr = [d for d in cells if d["steps"] == "printed"]
    return {"cells": len(cells), "reached": sum(d["rounds_to_target"] is not None for d in cells),
            "slope_nQ": {s["steps"]: s["slope"] for s in slopes if s["axis"] == "nQ"},
            "rounds_range_printed": [min(d["rounds_to_target"] for d in pr if d["rounds_to_target"]),
                                     max(d["rounds_to_target"] for d in pr if d["rounds_to_target"])],
            "max_eta_hat_rule_over_cap": max(d["eta_hat_rule_over_cap"] for d in cells),
            "nQ_cap": cells[0]["nQ_cap"], "cell_s": sum(d["cell_s"] for d in cells), "cap_study": cap}


def _write_cap(store: Path, out: Path) -> dict[str, Any]:
    """cap.csv: the target-0.1 cells (the cap binds from nQ_cap), and the slopes in nQ below and above nQ_cap."""
    cells = _inside_cells(_rows(store))
    out.mkdir(parents=True, exist_ok=True)
    _write_csv(out / "cap.csv", _CELL_COLS, [[d[k] for k in _CELL_COLS] for d in cells])
    nq_cap = cells[0]["nQ_cap"]
    below = [d for d in cells if d["n"] * d["Q"] < nq_cap and d["rounds_to_target"]]
    above = [d for d in cells if d["n"] * d["Q"] >= nq_cap and d["rounds_to_target"]]
    fit = {name: fit_slope([d["n"] * d["Q"] for d in pts], [d["rounds_to_target"] for d in pts]) if len(pts) >= 2 else None
           for name, pts in (("below_cap", below), ("above_cap", above))}
    return {"target": cells[0]["coords"].get("target", 0.1), "nQ_cap": nq_cap, "points": len(cells),
            "rounds": {f"n={d['n']},Q={d['Q']}": d["rounds_to_target"] for d in cells}, "slope_nQ": fit}


def _figure_speedup(cells: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=False)
    panels = ((axes[0], "printed", "Theorem 5's printed steps (inside)"), (axes[1], "pep", "PEP-certified multiple k = 192"))
    for ax, steps, title in panels:
        for Q in sorted({d["Q"] for d in cells}):
            pts = sorted((d["n"] * Q, d["rounds_to_target"]) for d in cells
                         if d["steps"] == steps and d["Q"] == Q and d["rounds_to_target"])
            if pts:
                ax.loglog(*zip(*pts), marker="o", ms=3, label=f"Q={Q}")
        ref = [d for d in cells if d["steps"] == steps and d["n"] == 1 and d["Q"] == 1 and d["rounds_to_target"]]
        if ref:
            x = np.array([1, 16384])
            ax.loglog(x, ref[0]["rounds_to_target"] / x, "k--", lw=1, label="slope -1")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("n Q")
        ax.set_ylabel("exact rounds to E[psi - psi*] <= 0.01")
        ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    tmp = path.with_name(path.stem + ".tmp.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, path)


def write_heterogeneity(exact_store: Path, lasso_store: Path, out: Path) -> dict[str, Any]:
    """exact_cells.csv, lasso_cells.csv / lasso_points.csv (the Monte Carlo study's tables), loses_target.csv,
    floors_vs_heterogeneity.png; returns a summary."""
    out.mkdir(parents=True, exist_ok=True)
    cells = _inside_cells(_rows(exact_store))
    _write_csv(out / "exact_cells.csv", _CELL_COLS, [[d[k] for k in _CELL_COLS] for d in cells])
    lasso = _lasso_cells(_rows(lasso_store))
    cols = ["method", "heterogeneity", "eta_s", "decision", "rounds_to_target", "ci_low", "ci_high", "replicas_used", "floor", "floor_low",
            "floor_high", "cell_s"]
    _write_csv(out / "lasso_cells.csv", cols, [[d[k] for k in cols] for d in lasso])
    lasso_pts = _lasso_points(lasso)
    _write_csv(out / "lasso_points.csv", cols, [[d[k] for k in cols] for d in lasso_pts.values()])
    lose = _loss_rows(cells, lasso_pts)
    _write_csv(out / "loses_target.csv", LOSS_COLS, lose)
    _figure_heterogeneity(cells, lasso_pts, out / "floors_vs_heterogeneity.png")
    sc = {(d["steps"], d["heterogeneity"]): d for d in cells if d["method"] == "scaffold_prox"}
    fa = {(d["steps"], d["heterogeneity"]): d for d in cells if d["method"] == "fedavg_prox"}
    rel = [abs(sc[k]["floor"] - fa[k]["floor"]) / fa[k]["floor"] for k in sc if k in fa and fa[k]["floor"]]
    ls = {d["heterogeneity"]: d for d in lasso_pts.values() if d["method"] == "scaffold_prox"}
    la = {d["heterogeneity"]: d for d in lasso_pts.values() if d["method"] == "fedavg_prox"}
    rel_l = [abs(ls[h]["floor"] - la[h]["floor"]) / la[h]["floor"] for h in ls if h in la and la[h]["floor"] and ls[h]["floor"] is not None]
    return {"exact_cells": len(cells), "lasso_cells": len(lasso), "lasso_replicas": sum(d["replicas_used"] for d in lasso),
            "scaffold_vs_fedavg_floor_rel_diff_exact": [min(rel), max(rel)] if rel else None,
            "scaffold_vs_fedavg_floor_rel_diff_lasso": [min(rel_l), max(rel_l)] if rel_l else None,
            "cell_s_exact": sum(d["cell_s"] for d in cells), "cell_s_lasso": sum(d["cell_s"] for d in lasso)}


LOSS_COLS = ["study", "steps", "method", "last_reached_heterogeneity", "first_lost_heterogeneity", "floor_at_lowest", "floor_at_highest",
             "status_per_heterogeneity", "scope"]


def _loss_rows(cells: list[dict[str, Any]], lasso_pts: dict) -> list[list[Any]]:
    """loses_target.csv's rows: per study, step rule and method, where it loses the target (see :func:`_bracket`)."""
    # lose the target: bracketed between the last heterogeneity that reaches it and the first of the final run that
    # does not (the grid does not say where in between)
    lose: list[list[Any]] = []
    methods = ("fednmap", "fednmap_nocorr", "fedavg_prox", "scaffold_prox")
    for steps in ("printed", "pep"):
        for method in methods:
            mine = [d for d in cells if d["steps"] == steps and d["method"] == method]
            pts = sorted((d["heterogeneity"], _label("reached" if d["rounds_to_target"] is not None else "not_reached", d["floor"]),
                          d["floor"]) for d in mine)
            lose.append(["exact (closed form)", steps, method, *_bracket(pts), pts[0][2], pts[-1][2], _statuses(pts), mine[0]["scope"]])
    for method in methods:
        pts = sorted((d["heterogeneity"], _label(d["decision"], d["floor"]), d["floor"])
                     for d in lasso_pts.values() if d["method"] == method)
        lose.append(["Monte Carlo (Lasso, n = 8, Q = 4)", "practical (eta_a Q = 0.5, eta_s = s n Q)", method, *_bracket(pts),
                     pts[0][2] if pts else None, pts[-1][2] if pts else None, _statuses(pts),
                     "outside Theorem 5's printed conditions and the PEP-certified steps"])
    return lose


#: a floor at or above this is labelled diverged, not merely not reached: every start in these studies has
#: psi(x_0) - psi* below 10, so such a floor means the iterates left for infinity (1e58 at heterogeneity 4)
DIVERGED_FLOOR = 1e6


def _label(status: str, floor: float | None) -> str:
    """The status, with a non-finite floor or one >= :data:`DIVERGED_FLOOR` labelled "diverged"."""
    if status in ("reached", "undecided", "diverged") or floor is None:
        return status
    return "diverged" if not math.isfinite(floor) or floor >= DIVERGED_FLOOR else status


def _bracket(pts: list[tuple]) -> tuple[float | None, float | None]:
    """(last reached, first lost): the first lost is the smallest heterogeneity from which on every point is decided
    not to reach the target (not_reached or diverged); the last reached is the largest heterogeneity below it that
    reaches it. (None, None) when the last point reaches the target or is undecided; the threshold lies in the
    bracket (points between the two are undecided)."""
    first = None
    for h, status, _ in reversed(pts):
        if status in ("not_reached", "diverged"):
            first = h
        else:
            break
    if first is None:
        return None, None
    below = [h for h, status, _ in pts if h < first and status == "reached"]
    return (max(below) if below else None), first


def _statuses(pts: list[tuple]) -> str:
    return " ".join(f"{h:g}:{status}" for h, status, _ in pts)


def _lasso_cells(rows: list[Any]) -> list[dict[str, Any]]:
    out = []
    for r in rows:
        res = r.result
        fl = res.get("floor") or [None, None, None]
        ci = res.get("rtt_ci") or [None, None]
        out.append({"method": res.get("method"), "heterogeneity": float(r.config["instance"]["params"]["heterogeneity"]),
                    "eta_s": float(r.coords["eta_s"]), "decision": res.get("decision"), "rounds_to_target": res.get("rounds_to_target"),
                    "ci_low": ci[0], "ci_high": ci[1], "replicas_used": res.get("replicas_used"), "floor": fl[0], "floor_low": fl[1],
                    "floor_high": fl[2], "cell_s": r.elapsed})
    return sorted(out, key=lambda d: (d["method"], d["heterogeneity"], d["eta_s"]))


def _lasso_points(cells: list[dict[str, Any]]) -> dict[tuple[str, float], dict[str, Any]]:
    """Per (method, heterogeneity), the step constant with the fewest rounds among the cells decided "reached"
    (else the one with the lowest floor), as the speedup study chooses it."""
    out: dict[tuple[str, float], dict[str, Any]] = {}
    for d in cells:
        key = (d["method"], d["heterogeneity"])
        best = out.get(key)
        score = (0, d["rounds_to_target"]) if d["decision"] == "reached" else (1, d["floor"] if d["floor"] is not None else math.inf)
        if best is None or score < best["_score"]:
            out[key] = {**d, "_score": score}
    return {k: {kk: vv for kk, vv in v.items() if kk != "_score"} for k, v in sorted(out.items())}


#: line styles that keep overlapping curves visible (FedNMap under SCAFFOLD-prox, the uncorrected under FedAvg-prox)
_STYLE = {"fednmap": {"ls": "-", "marker": "o", "ms": 5, "lw": 2.5}, "fednmap_nocorr": {"ls": "--", "marker": "s", "ms": 4, "lw": 2},
          "fedavg_prox": {"ls": ":", "marker": "x", "ms": 6, "lw": 1.5}, "scaffold_prox": {"ls": "-.", "marker": "+", "ms": 7, "lw": 1.2}}


def _figure_heterogeneity(cells: list[dict[str, Any]], lasso: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for ax, steps in ((axes[0], "printed"), (axes[1], "pep")):
        for method in ("fednmap", "fednmap_nocorr", "fedavg_prox", "scaffold_prox"):
            pts = sorted((max(d["heterogeneity"], 0.1), d["floor"]) for d in cells if d["steps"] == steps and d["method"] == method)
            ax.loglog(*zip(*pts), label=method, **_STYLE[method])
        ax.axhline(0.01, color="k", lw=0.8, ls=":", label="target 0.01")
        ax.set_title(f"exact floors, {'printed steps (inside)' if steps == 'printed' else 'PEP-certified steps'}; n = Q = 2", fontsize=9)
        ax.set_xlabel("heterogeneity zeta (0 drawn at 0.1)")
        ax.set_ylabel("lim E[psi - psi*]")
        ax.legend(fontsize=7)
    ax = axes[2]
    for method in ("fednmap", "fednmap_nocorr", "fedavg_prox", "scaffold_prox"):
        pts = sorted((h, d["floor"]) for (m, h), d in lasso.items() if m == method and d["floor"])
        if pts:
            ax.semilogy(*zip(*pts), label=method, **_STYLE[method])
    ax.axhline(1e-3, color="k", lw=0.8, ls=":", label="target 1e-3")
    ax.set_ylim(1e-4, 10.0)  # above: off scale (1e58 at 4 for FedAvg-prox); missing points diverged
    ax.set_title("Lasso, practical steps (outside), MC final-window mean; n = 8, Q = 4\n(no point: diverged)", fontsize=9)
    ax.set_xlabel("heterogeneity")
    ax.legend(fontsize=7)
    fig.tight_layout()
    tmp = path.with_name(path.stem + ".tmp.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, path)


def _sweep(spec: str, store: Path, processes: int) -> dict[str, Any]:
    fedbounds = str(Path(sys.executable).with_name("fedbounds"))
    cmd = ["nice", "-n", "5", fedbounds, "sweep", spec, "--store", str(store), "--processes", str(processes), "--no-progress"]
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"})
    seen: dict[int, float] = {}
    while proc.poll() is None:
        tree_cpu(proc.pid, seen)
        time.sleep(0.5)
    return {"command": " ".join(["nice", "-n", "5", "fedbounds", *cmd[4:]]), "exit_status": proc.returncode,
            "wall_s": round(time.perf_counter() - t0, 1), "cpu_s_sampled": round(sum(seen.values()), 1),
            "loadavg_before": [round(x, 2) for x in load0], "loadavg_after": [round(x, 2) for x in os.getloadavg()]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("study", choices=["speedup_inside", "heterogeneity"])
    ap.add_argument("--out", help="results folder (default: results/fednmap_speedup_inside or results/heterogeneity)")
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--write-only", action="store_true", help="rewrite the tables from the stores; keep RUN.json's sweep timings")
    ap.add_argument("--add-sweep", action="append", metavar="FILE", help="with --write-only: add a separately timed sweep's JSON")
    args = ap.parse_args(argv)
    if args.study == "speedup_inside":
        specs = ["fednmap_speedup_inside", "fednmap_speedup_inside_cap"]
    else:
        specs = ["heterogeneity", "heterogeneity_lasso"]
    folder = "fednmap_speedup_inside" if args.study == "speedup_inside" else "heterogeneity"
    out = Path(args.out) if args.out else ROOT / "results" / folder
    stores = [ROOT / "reports/sweeps" / f"{s}-study.sqlite" for s in specs]
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    deciding = DECIDING + [f"checks/specs/{s}.toml" for s in specs]
    dirty = subprocess.run(["git", "status", "--porcelain", "--", *deciding], cwd=ROOT, capture_output=True, text=True).stdout.split("\n")
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    if args.write_only:
        old = json.loads((out / "RUN.json").read_text())
        runs, started, head = old["sweeps"], old["started"], old["git_head"]
        for extra in args.add_sweep or []:  # a sweep timed separately (its JSON from _sweep), e.g. a spec added later
            runs.append(json.loads(Path(extra).read_text().strip().splitlines()[-1]))
        dirty = [f"   {f}" for f in old.get("uncommitted_changes_to", [])]
    else:
        runs = [_sweep(s, st, args.processes) for s, st in zip(specs, stores)]
    if any(r["exit_status"] != 0 for r in runs):
        print(f"studies.exact: a sweep failed: {runs}", file=sys.stderr)
        return 2
    if args.study == "speedup_inside":
        summary = write_speedup_inside(stores[0], out, stores[1])
    else:
        summary = write_heterogeneity(stores[0], stores[1], out)
    run = {"driver": f"python -m fedbounds.checks.studies.exact {args.study}", "sweeps": runs, "git_head": head,
           "uncommitted_changes_to": [line[3:] for line in dirty if line.strip()],
           "sha256": {f: hashlib.sha256((ROOT / f).read_bytes()).hexdigest() for f in deciding}, "started": started,
           "wall_s": round(sum(r["wall_s"] for r in runs), 1), "cpu_s_sampled": round(sum(r["cpu_s_sampled"] for r in runs), 1),
           "cores": os.cpu_count(), "note": "2 cores shared with other engineers' jobs (see the load averages); sweeps at nice 5",
           **summary}
    tmp = out / "RUN.json.tmp"
    tmp.write_text(json.dumps(run, indent=1, default=lambda v: None if isinstance(v, float) and not math.isfinite(v) else str(v)) + "\n")
    os.replace(tmp, out / "RUN.json")
    print(json.dumps(run, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
