"""``fedbounds report STORE``: turn a sweep store into the speedup figures and CSV tables.

Writes ``cells.csv`` (every stored cell), ``points.csv`` (seeds pooled per grid point), ``slopes.csv`` (the
fitted log-log slopes of rounds to target against n and Q, with confidence intervals) and one PNG per axis,
and prints where they are. Exit status 0; 2 when the store is missing or empty.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``fedbounds report``."""
    parser.add_argument("store", metavar="STORE", help="a SQLite store written by `fedbounds sweep`")
    parser.add_argument("--out", metavar="DIR", help="output folder (default: <store without suffix>-report/ beside the store)")


def run(args: argparse.Namespace) -> int:
    """Write the report and print the paths."""
    from fedbounds.checks.sweep.report import write_report

    store = Path(args.store)
    if not store.exists():
        raise ValueError(f"store {str(store)!r} does not exist")
    out = Path(args.out) if args.out else store.with_name(f"{store.stem}-report")
    files = write_report(store, out)
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
    return 0
