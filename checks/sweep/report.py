"""Turn a sweep store into the linear-speedup figures and CSV tables.

FedNMap's linear speedup (Theorems 5 and 8; Table 1 rates sigma^2/(nQT)): in the noise-dominated regime the
rounds needed to reach a fixed target fall as 1/(nQ), so log(rounds) against log n (at fixed Q) and against
log Q (at fixed n) should have slope -1. For every spec in the store this module writes

- ``cells.csv``: one row per stored cell (coordinates, seed, status, rounds to target, final value,
  divergence round); an unknown number is an empty field, never NaN;
- ``points.csv``: one row per grid point with the seeds pooled (mean rounds and its two-sided confidence
  interval), after picking, at every point, the ``tune`` values (e.g. the step size) with the fewest mean
  rounds among those whose every seed reached the target;
- ``slopes.csv`` and ``<spec>_rounds_vs_<axis>.png``: rounds against each axis on log-log scales, one line
  per value of the other axes, with the OLS slope of log rounds on log axis over all seeds and its t-interval
  (:func:`fedbounds.checks.verdicts.stats.loglog_slope`), and a reference line of the expected slope; with two or more axes also
  ``<spec>_rounds_vs_product.png`` (rounds against n*Q in ONE panel: one line per method or other grid value,
  its fitted slope rounded to 2 decimals in the legend).

A point enters a fit only when every one of its seeds reached the target (a censored or diverged seed would
bias the mean); the excluded points are counted in ``slopes.csv``.

A report never pools configurations: it reads only a store bound to one configuration, and refuses one
holding a cell outside that configuration or a cell that fails its checksum.
"""

from __future__ import annotations

import csv
import dataclasses
import itertools
import json
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from fedbounds.checks.sweep.spec import SpecError, canonical_json, parse_spec
from fedbounds.checks.sweep.store import CellRow, Store, StoreError

__all__ = ["Point", "ReportFiles", "pool_points", "write_report"]


@dataclass
class Point:
    """A grid point with its seeds pooled (after tuning: the chosen ``tune`` values are in ``coords``)."""

    coords: dict
    seeds: list[int] = field(default_factory=list)
    rounds: list[int | None] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)
    mean: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    candidates: int = 1

    @property
    def complete(self) -> bool:
        """Every seed reached the target (the point can enter a fit)."""
        return bool(self.rounds) and all(r is not None for r in self.rounds)


@dataclass
class ReportFiles:
    """What :func:`write_report` wrote."""

    cells_csv: Path
    points_csv: Path
    slopes_csv: Path
    figures: list[Path]
    slopes: list[dict]
    notes: list[str]
    #: the specs the store records for its configuration, attached to the report (``<name>.spec.toml``)
    specs: list[Path] = field(default_factory=list)
    #: the study's scope for the page: per spec its algorithm, instance, grid, axes and expected slope; cells, seconds
    study: dict = field(default_factory=dict)

    def moved_to(self, folder: Path) -> ReportFiles:
        """The same files, at their places in ``folder`` (after the staging folder was installed there)."""
        return dataclasses.replace(
            self,
            cells_csv=folder / self.cells_csv.name,
            points_csv=folder / self.points_csv.name,
            slopes_csv=folder / self.slopes_csv.name,
            figures=[folder / f.name for f in self.figures],
            specs=[folder / f.name for f in self.specs],
        )


def _fmt(v: Any) -> str:
    """CSV text of a value: empty for None (and for a non-finite float: the CSV never holds NaN)."""
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ""
    if isinstance(v, dict | list):
        return canonical_json(v)
    return str(v)


def _label(coords: dict, keys: Sequence[str]) -> str:
    return ", ".join(f"{k}={coords[k]:g}" if isinstance(coords[k], int | float) else f"{k}={coords[k]}" for k in keys)


def _order(coords_json: str) -> tuple:
    """Sort key of a coordinate dict given as canonical JSON: numbers numerically (Q=2 before Q=16)."""
    return tuple((0, v, "") if isinstance(v, int | float) else (1, 0, canonical_json(v)) for v in json.loads(coords_json).values())


def _spec_settings(store: Store) -> tuple[dict[str, dict], set[str]]:
    """(name -> {"grid_keys", "axes", "tune", "expected_slope", "level"} from the latest valid spec text of the
    store's configuration, the keys of that configuration's cells)."""
    fingerprint = store.fingerprint()
    out: dict[str, dict] = {}
    keys: set[str] = set()
    for name, source in store.specs():
        try:
            spec = parse_spec(source, source=f"stored spec {name!r}")
        except SpecError:
            continue
        if spec.fingerprint != fingerprint:
            continue
        out[name] = {"grid_keys": list(spec.grid), **spec.report}
        keys = {c.key for c in spec.iter_cells()}
    return out, keys


def pool_points(rows: Iterable[CellRow], grid_keys: Sequence[str], tune: Sequence[str], level: float = 0.95) -> list[Point]:
    """Pool the seeds of every grid point, then, for every point of the grid without the ``tune`` keys, keep
    the candidate with the fewest mean rounds among the complete ones (or, if none is complete, the one with
    the most seeds that reached the target, marked incomplete)."""
    from fedbounds.checks.verdicts.stats import mean_ci

    by_point: dict[str, Point] = {}
    for row in rows:
        coords = {k: row.coords[k] for k in grid_keys if k in row.coords}
        pk = canonical_json(coords)
        pt = by_point.setdefault(pk, Point(coords=coords))
        pt.seeds.append(int(row.coords.get("seed", row.config.get("seed", 0))))
        pt.rounds.append(row.result.get("rounds_to_target"))
        pt.statuses.append(str(row.result.get("status", "")))
    for pt in by_point.values():
        order = np.argsort(pt.seeds, kind="stable")
        pt.seeds = [pt.seeds[i] for i in order]
        pt.rounds = [pt.rounds[i] for i in order]
        pt.statuses = [pt.statuses[i] for i in order]
        if pt.complete:
            vals = np.asarray(pt.rounds, dtype=float)
            if vals.size >= 2:
                m, lo, hi = mean_ci(vals, level=level, one_sided=False)
                pt.mean, pt.ci_low, pt.ci_high = float(m), float(lo), float(hi)
            else:
                pt.mean = float(vals[0])
    if not tune:
        return list(by_point.values())
    groups: dict[str, list[Point]] = defaultdict(list)
    for pt in by_point.values():
        base = {k: v for k, v in pt.coords.items() if k not in tune}
        groups[canonical_json(base)].append(pt)
    chosen = []
    for cands in groups.values():
        complete = [p for p in cands if p.complete]
        if complete:
            best = min(complete, key=lambda p: (p.mean, canonical_json(p.coords)))
        else:
            best = max(cands, key=lambda p: (sum(r is not None for r in p.rounds), canonical_json(p.coords)))
        best.candidates = len(cands)
        chosen.append(best)
    return chosen


def _fit(points: Sequence[Point], xkey: str | Sequence[str], level: float) -> tuple[Any, int]:
    """loglog_slope over every seed of the complete points; returns (SlopeFit or None, excluded count)."""
    from fedbounds.checks.verdicts.stats import loglog_slope

    keys = [xkey] if isinstance(xkey, str) else list(xkey)
    xs, ys = [], []
    excluded = 0
    for p in points:
        if not p.complete:
            excluded += 1
            continue
        x = math.prod(float(p.coords[k]) for k in keys)
        xs.extend([x] * len(p.rounds))
        ys.extend(float(r) for r in p.rounds)  # type: ignore[arg-type]
    try:
        return loglog_slope(np.asarray(xs), np.asarray(ys), level=level), excluded
    except ValueError:
        return None, excluded


def _plot_axis(spec: str, axis: str | list[str], points: list[Point], settings: dict, out: Path, slopes: list[dict]) -> Path | None:
    """One figure: rounds against ``axis`` (a grid key, or a list whose product is the x value)."""
    from matplotlib.figure import Figure

    keys = [axis] if isinstance(axis, str) else list(axis)
    xname = "*".join(keys)
    level = settings["level"]
    others = [k for k in settings["grid_keys"] if k not in keys and k not in settings["tune"]]
    other_axes = [k for k in others if k in settings["axes"]]
    panel_keys = [k for k in others if k not in other_axes]
    series_keys = other_axes
    if len(keys) > 1:  # the product figure compares everything in ONE panel: one line (and one fit) per series
        series_keys, panel_keys = panel_keys + other_axes, []

    def key_of(p: Point, ks: Sequence[str]) -> str:
        return canonical_json({k: p.coords.get(k) for k in ks})

    panels: dict[str, list[Point]] = defaultdict(list)
    for p in points:
        panels[key_of(p, panel_keys)].append(p)
    if not panels:
        return None
    xvals = {math.prod(float(p.coords[k]) for k in keys) for p in points}
    if len(xvals) < 2:
        return None
    ncols = min(len(panels), 3)
    nrows = math.ceil(len(panels) / ncols)
    fig = Figure(figsize=(5.2 * ncols, 4.2 * nrows), layout="constrained")
    axes_grid = fig.subplots(nrows, ncols, squeeze=False)
    for ax_i, (pk, ppts) in enumerate(sorted(panels.items(), key=lambda kv: _order(kv[0]))):
        ax = axes_grid.flat[ax_i]
        panel_coords = json.loads(pk)
        series: dict[str, list[Point]] = defaultdict(list)
        for p in ppts:
            series[key_of(p, series_keys)].append(p)
        anchor: tuple[float, float] | None = None
        for sk, spts in sorted(series.items(), key=lambda kv: _order(kv[0])):
            spts = sorted(spts, key=lambda p: math.prod(float(p.coords[k]) for k in keys))
            fit, excluded = _fit(spts, keys, level)
            done = [p for p in spts if p.complete]
            sc = json.loads(sk)
            name = _label(sc, series_keys) if series_keys else "all"
            row = {
                "spec": spec,
                "axis": xname,
                "panel": _label(panel_coords, panel_keys),
                "series": name,
                "slope": None if fit is None else fit.slope,
                "ci_low": None if fit is None else fit.ci_low,
                "ci_high": None if fit is None else fit.ci_high,
                "points": len(done),
                "excluded": excluded,
                "expected_slope": settings["expected_slope"],
                "contains_expected": None if fit is None else bool(fit.contains(settings["expected_slope"])),
            }
            slopes.append(row)
            if not done:
                continue
            x = np.array([math.prod(float(p.coords[k]) for k in keys) for p in done])
            y = np.array([p.mean for p in done], dtype=float)
            lo = np.array([p.ci_low if p.ci_low is not None else p.mean for p in done], dtype=float)
            hi = np.array([p.ci_high if p.ci_high is not None else p.mean for p in done], dtype=float)
            # a lower confidence bound under y/10 (few seeds) is drawn at y/10, to keep the axis readable
            yerr = np.vstack([np.clip(y - np.maximum(lo, y * 0.1), 0, None), np.clip(hi - y, 0, None)])
            text = name
            if fit is not None:
                ci = "" if not math.isfinite(fit.ci_low) else f" [{fit.ci_low:.2f}, {fit.ci_high:.2f}]"
                text += f": slope {fit.slope:.2f}{ci}"
            product = len(keys) > 1  # several points share an x = n*Q: markers, and the fitted line as the series' line
            line = ax.errorbar(x, y, yerr=yerr, marker="o", capsize=3, ls="none" if product else "-", label=None if product else text)
            if fit is not None:
                xx = np.geomspace(x.min(), x.max(), 20)
                ax.plot(xx, np.exp(fit.intercept) * xx**fit.slope, ls="-" if product else ":", color=line[0].get_color(),
                        lw=1.5 if product else 1, label=text if product else None)
            elif product:
                line[0].set_label(text)
            if anchor is None or y[0] > anchor[1]:
                anchor = (float(x[0]), float(y[0]))
        if anchor is not None:
            xx = np.geomspace(min(xvals), max(xvals), 20)
            ref = anchor[1] * (xx / anchor[0]) ** settings["expected_slope"]
            ax.plot(xx, ref, ls="--", color="0.5", lw=1, label=f"slope {settings['expected_slope']:g} (reference)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel(xname)
        ax.set_ylabel("rounds to target (mean over seeds)")
        title = _label(panel_coords, panel_keys)
        if settings["tune"]:
            title = (title + "; " if title else "") + f"best {', '.join(settings['tune'])}"
        ax.set_title(title or spec, fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        if ax.get_legend_handles_labels()[0]:  # a panel of a partial store may have nothing labelled yet
            ax.legend(fontsize=7)
    for ax in list(axes_grid.flat)[len(panels) :]:
        ax.set_visible(False)
    fig.suptitle(f"{spec}: rounds to target against {xname} ({int(level * 100)}% CIs)")
    path = out / f"{spec}_rounds_vs_{'product' if len(keys) > 1 else xname}.png"
    fig.savefig(path, dpi=110)
    return path


_CELL_COLUMNS = (
    "status",
    "rounds_to_target",
    "target_metric",
    "target",
    "final",
    "best",
    "rounds_completed",
    "divergence_round",
    "divergence_replica",
    "divergence_reason",
)


def write_report(store_path: str | Path, out_dir: str | Path) -> ReportFiles:
    """Write ``cells.csv``, ``points.csv``, ``slopes.csv`` and the figures for every spec in the store."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with Store(store_path, readonly=True) as store:
        rows = list(store.rows(curves=False))
        settings_by_spec, keys = _spec_settings(store)
        sources = dict(store.specs())
    _settle_wal(Path(store_path))
    if not rows:
        raise ValueError(f"store {str(store_path)!r} holds no cells")
    if not settings_by_spec:
        raise StoreError(f"store {str(store_path)!r} records no spec of its configuration; it cannot be reported")
    foreign = sum(r.key not in keys for r in rows)
    if foreign:
        raise StoreError(
            f"store {str(store_path)!r} holds {foreign} cells outside its configuration; "
            "a report never pools configurations: sweep each configuration into its own store"
        )

    by_spec: dict[str, list[CellRow]] = defaultdict(list)
    for r in rows:
        by_spec[r.spec].append(r)
    notes: list[str] = []

    # cells.csv
    coord_keys: list[str] = []
    for settings in settings_by_spec.values():
        coord_keys.extend(k for k in settings["grid_keys"] if k not in coord_keys)
    for r in rows:
        for k in r.coords:
            if k != "seed" and k not in coord_keys:
                coord_keys.append(k)
    cells_csv = out / "cells.csv"
    with cells_csv.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["spec", "key", "algorithm", "instance", *coord_keys, "seed", "rounds", "replicas", *_CELL_COLUMNS, "elapsed_s"])
        for r in sorted(rows, key=lambda r: (r.spec, canonical_json(r.coords))):
            w.writerow(
                [
                    r.spec,
                    r.key,
                    r.config.get("algorithm"),
                    r.config.get("instance", {}).get("name"),
                    *(_fmt(r.coords.get(k)) for k in coord_keys),
                    _fmt(r.coords.get("seed")),
                    _fmt(r.config.get("rounds")),
                    _fmt(r.config.get("replicas")),
                    *(_fmt(r.result.get(c)) for c in _CELL_COLUMNS),
                    _fmt(round(r.elapsed, 6)),
                ]
            )

    # points, slopes, figures
    figures: list[Path] = []
    slopes: list[dict] = []
    point_rows: list[tuple[str, Point, list[str]]] = []
    for spec_name, srows in sorted(by_spec.items()):
        settings = settings_by_spec.get(spec_name)
        if settings is None:
            grid_keys = [k for k in srows[0].coords if k != "seed"]
            settings = {"grid_keys": grid_keys, "axes": [k for k in ("n", "Q") if k in grid_keys], "tune": [], "expected_slope": -1.0}
            settings["level"] = 0.95
            notes.append(f"{spec_name}: no stored spec; axes {settings['axes']} guessed from the coordinates")
        pts = pool_points(srows, settings["grid_keys"], settings["tune"], settings["level"])
        point_rows.extend((spec_name, p, settings["grid_keys"]) for p in pts)
        drawn = 0
        for axis in settings["axes"]:
            path = _plot_axis(spec_name, axis, pts, settings, out, slopes)
            if path is not None:
                figures.append(path)
                drawn += 1
        if len(settings["axes"]) >= 2 and drawn >= 1:
            path = _plot_axis(spec_name, list(settings["axes"]), pts, settings, out, slopes)
            if path is not None:
                figures.append(path)
        if drawn == 0:
            notes.append(f"{spec_name}: no axis with two or more values; no speedup figure")
        incomplete = sum(not p.complete for p in pts)
        if incomplete:
            notes.append(f"{spec_name}: {incomplete} of {len(pts)} points have a seed that did not reach the target (left out of the fits)")

    points_csv = out / "points.csv"
    with points_csv.open("w", newline="") as fh:
        w = csv.writer(fh)
        all_keys = list(dict.fromkeys(itertools.chain.from_iterable(g for _, _, g in point_rows)))
        w.writerow(["spec", *all_keys, "seeds", "reached", "candidates", "mean_rounds", "ci_low", "ci_high", "statuses"])
        for spec_name, p, _ in point_rows:
            reached = sum(r is not None for r in p.rounds)
            statuses = ";".join(f"{s}:{p.statuses.count(s)}" for s in sorted(set(p.statuses)))
            coords = [_fmt(p.coords.get(k)) for k in all_keys]
            w.writerow([spec_name, *coords, len(p.seeds), reached, p.candidates, _fmt(p.mean), _fmt(p.ci_low), _fmt(p.ci_high), statuses])

    slopes_csv = out / "slopes.csv"
    with slopes_csv.open("w", newline="") as fh:
        cols = ["spec", "axis", "panel", "series", "slope", "ci_low", "ci_high", "points", "excluded"]
        cols += ["expected_slope", "contains_expected"]
        w = csv.writer(fh)
        w.writerow(cols)
        for s in slopes:
            w.writerow([_fmt(s[c]) for c in cols])
    # the specs themselves, attached (the page links them), and the study's scope
    specs = []
    for name in sorted(settings_by_spec):
        path = out / f"{name}.spec.toml"
        path.write_text(sources[name], encoding="utf-8")
        specs.append(path)
    study = {
        "specs": {name: _scope_of(sources[name], by_spec.get(name, [])) for name in sorted(settings_by_spec)},
        "cells": len(rows),
        "cell_seconds": round(sum(r.elapsed for r in rows), 3),
    }
    return ReportFiles(cells_csv, points_csv, slopes_csv, figures, slopes, notes, specs, study)


def _scope_of(source: str, rows: Sequence[CellRow]) -> str:
    """One line: the spec's algorithms, instances, grid (each axis with its values) and the expected slope."""
    spec = parse_spec(source, source="stored spec")
    algorithms = sorted({str(r.config.get("algorithm")) for r in rows})
    instances = sorted({str(r.config.get("instance", {}).get("name")) for r in rows})
    grid = "; ".join(f"{k} in {list(v)}" for k, v in spec.grid.items())
    return (f"{', '.join(algorithms) or '-'} on {', '.join(instances) or '-'}; grid {grid}; "
            f"expected slope {spec.report.get('expected_slope', -1.0)}; {len(rows)} cells")


def _settle_wal(store: Path) -> None:
    """Fold a write-ahead log the read-only report left beside the store back into it, so that SQLite removes the
    ``-wal`` and ``-shm`` files (docs/sweep-store.md: a clean close removes them). Only when no one else has the store
    open (a running sweep keeps its log) and the folder is writable; otherwise the files stay, harmlessly."""
    import os
    import sqlite3

    wal = store.with_name(store.name + "-wal")
    if not wal.exists() or not os.access(store.parent, os.W_OK) or not os.access(store, os.W_OK):
        return
    try:
        con = sqlite3.connect(str(store), timeout=1.0)
        try:
            con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            con.close()  # the last connection to close deletes -wal and -shm
    except sqlite3.Error:
        return
