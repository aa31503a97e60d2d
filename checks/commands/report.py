"""``fedbounds report STORE``: turn a sweep store into the speedup figures and CSV tables.

STORE is a store's path, or a spec (a shipped name such as ``tiny``, or a TOML file) whose default store
``fedbounds sweep`` wrote (``reports/sweeps/<name>-<fingerprint>.sqlite``, relative to the current folder).

Writes ``cells.csv`` (every stored cell), ``points.csv`` (seeds pooled per grid point), ``slopes.csv`` (the
fitted log-log slopes of rounds to target against n and Q, with confidence intervals) and one PNG per axis,
and prints where they are. The report is staged and installed whole (the previous report in the folder, and only
its files, replaced at the end; kept if anything fails). Exit status 0; 2 when the store is missing, empty, damaged, or holds cells outside
its configuration (a report never pools configurations), or when the output folder cannot be written.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path
from typing import Any

from fedbounds.checks.commands import path_arg


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``fedbounds report``."""
    parser.add_argument("store", type=path_arg, metavar="STORE",
        help="a store written by `fedbounds sweep`, or the spec whose default store to read")
    parser.add_argument("--out", type=path_arg, metavar="DIR",
        help="output folder (default: <store without suffix>-report/ beside the store)")


def run(args: argparse.Namespace) -> int:
    """Write the report and print the paths."""
    from fedbounds.checks.report.html import write_index_html
    from fedbounds.checks.runtime.install import install, staging
    from fedbounds.checks.sweep.report import write_report
    from fedbounds.checks.sweep.store import check_store_path

    store = resolve_store(args.store)
    check_store_path(store)
    out = Path(args.out) if args.out else store.resolve().with_name(f"{store.stem}-report")
    stage = staging(out, "report")
    try:
        started = time.perf_counter()
        staged = write_report(store, stage)
        write_index_html(stage, _page(store, staged, time.perf_counter() - started))
        new = [p.name for p in (staged.cells_csv, staged.points_csv, staged.slopes_csv, *staged.figures, *staged.specs)]
        new.append("index.html")
        (stage / MANIFEST).write_text(json.dumps(new), encoding="utf-8")
        install(stage, out, new, _previous_files(out), index=MANIFEST)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
        from fedbounds.checks.runtime.install import remove_if_empty

        remove_if_empty(out)
    files = staged.moved_to(out)
    page = out / "index.html"
    for s in files.slopes:
        if s["slope"] is None:
            continue
        where = "; ".join(x for x in (s["panel"], s["series"]) if x)
        print(
            f"{s['spec']}: rounds vs {s['axis']} ({where}): slope {s['slope']:.3f} "
            f"[{s['ci_low']:.3f}, {s['ci_high']:.3f}] over {s['points']} points (expected {s['expected_slope']:g})"
        )
    for note in files.notes:
        print(f"note: {note}")
    print(f"cells:   {files.cells_csv}")
    print(f"points:  {files.points_csv}")
    print(f"slopes:  {files.slopes_csv}")
    for fig in files.figures:
        print(f"figure:  {fig}")
    print(f"page:    {page}")
    return 0


def _page(store: Path, staged: Any, seconds: float) -> dict[str, Any]:
    """The sweep page's content: the study's scope and its specs (attached beside the page), the slopes with every
    series whose interval excludes the claimed slope highlighted, the notes, and the run (commit, command, machine,
    times)."""
    from fedbounds.checks.report.html import Cell
    from fedbounds.checks.report.suite import run_metadata

    slopes = []
    missed = []
    for s in staged.slopes:
        row = dict(s)
        if s.get("contains_expected") is False:
            row["contains_expected"] = Cell("NO: the interval excludes it", "verdict violated")
            missed.append(f"{s['spec']}, rounds vs {s['axis']} ({'; '.join(x for x in (s.get('panel'), s.get('series')) if x)})")
        slopes.append(row)
    notes = [f"the interval excludes the claimed slope: {m}" for m in missed] + list(staged.notes)
    notes += [f"scope of {name}: {text}" for name, text in staged.study.get("specs", {}).items()]
    notes += [f"spec {p.name} (attached beside this page)" for p in staged.specs]
    meta = run_metadata()
    return {
        "title": "Sweep report: " + ", ".join(staged.study.get("specs", {})),
        "slopes": slopes,
        "figures": [f.name for f in staged.figures],
        "notes": notes,
        **meta,
        "store": str(store),
        "cells": staged.study.get("cells"),
        "cell seconds (sum)": staged.study.get("cell_seconds"),
        "elapsed_s": round(seconds, 3),
        "specs": [p.name for p in staged.specs],
    }


#: the list of files the report in a folder consists of (written last, read by the next report into that folder)
MANIFEST = ".fedbounds-report.json"


def _previous_files(out: Path) -> list[str]:
    """The files of the report already in ``out``: its manifest's list (plain names), else the fixed names."""
    try:
        names = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
        listed = [str(n) for n in names if isinstance(n, str) and n == Path(n).name]
    except (OSError, ValueError, TypeError):
        listed = []
    return listed or ["cells.csv", "points.csv", "slopes.csv", "index.html"]


def resolve_store(text: str) -> Path:
    """The store named by ``text``: a path to an existing file that is not a spec, else the default store of
    the spec ``text`` names; a ValueError when neither exists."""
    path = Path(text)
    if path.exists() and path.suffix != ".toml":
        return path
    from fedbounds.checks.commands.sweep import default_store
    from fedbounds.checks.sweep.spec import load_spec

    try:
        spec = load_spec(text)
    except ValueError:
        if path.exists():
            raise
        if path.is_symlink():
            raise ValueError(f"store {text!r} is a symbolic link that leads nowhere (dangling, or a loop), and it names no "
                             "spec") from None
        raise ValueError(f"store {text!r} does not exist, and it names no spec") from None
    store = default_store(spec.name, spec.fingerprint)
    if not store.exists():
        raise ValueError(f"spec {spec.name!r} has no store at {str(store)!r} yet: run `fedbounds sweep {text}` first")
    from fedbounds.checks.sweep.store import Store

    with Store(store, readonly=True) as st:  # a store renamed or copied over: its recorded spec must be this one
        held = st.fingerprint()
        writers = sorted({name for name, _ in st.specs()}) if held is not None and held != spec.fingerprint else []
    if held is not None and held != spec.fingerprint:
        by = f"spec {', '.join(map(repr, writers))}" if writers else "another spec"
        raise ValueError(f"store {str(store)!r} was written by {by} (fingerprint {held[:12]}); spec {spec.name!r} "
                         f"is {spec.fingerprint[:12]}: the report would describe the other spec's cells")
    return store
