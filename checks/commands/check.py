"""``fedbounds check``: run the bound-checking suite, print the claims table, write report.json and plots.

Exit status: 0 when no claim is violated (except claims recorded as errata, whose violation is the
finding) and every negative control came out violated; 1 otherwise; 2 on bad input (an unknown claim id, an
output folder that cannot be written, tested before any check runs).

The report is written whole or not at all: report.json and the plots go to a temporary folder inside the
output folder (same file system, so a rename is atomic), then move into place with report.json last. A
report.json in the output folder therefore always describes the plots beside it; an interrupted run leaves
the previous report as it was.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import time
import traceback
from pathlib import Path

from fedbounds.checks.commands import path_arg, seed_arg
from fedbounds.checks.core.profiles import PROFILES, Profile, get_profile
from fedbounds.checks.registry import CheckContext, CheckResult, CheckSpec, select_checks


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", default="quick", choices=sorted(PROFILES), help="budget: quick (default, < 3 min) or full")
    parser.add_argument("--claim", action="append", metavar="ID", help="run only this claim (an id or a family prefix); repeatable")
    parser.add_argument("--out", default="reports", type=path_arg, metavar="DIR",
        help="output folder for report.json and plots (default: reports/)")
    parser.add_argument("--seed", type=seed_arg, default=0, help="base seed of every Monte Carlo run (default 0)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    from fedbounds.checks.core.table import add_width_option

    add_width_option(parser)


def run_checks(specs: list[CheckSpec], ctx_kwargs: dict, progress: bool = True) -> list[tuple[CheckSpec, CheckResult]]:
    """Run ``specs`` in order; an exception inside a check becomes a result with ``error`` set."""
    from fedbounds.checks.core.progress import LineProgress
    from fedbounds.checks.core.progress import progress as make_progress

    pairs: list[tuple[CheckSpec, CheckResult]] = []
    bar = make_progress(len(specs), unit="claim", enabled=progress)
    try:
        for spec in specs:
            bar.set_description(spec.check_id)

            def tick(msg: str, _spec: CheckSpec = spec) -> None:
                bar.set_postfix_str(msg[:40], refresh=True)

            ctx = CheckContext(tick=tick, **ctx_kwargs)
            t0 = time.perf_counter()
            try:
                res = spec.func(ctx)
            except Exception as exc:  # a crashing check is reported, not fatal
                tb = traceback.extract_tb(exc.__traceback__)[-1]
                res = CheckResult(spec.check_id, error=f"{type(exc).__name__}: {exc} ({Path(tb.filename).name}:{tb.lineno})")
            res.elapsed = time.perf_counter() - t0
            pairs.append((spec, res))
            if isinstance(bar, LineProgress):
                bar.update(1, result="error" if res.error else res.verdict)
            else:
                bar.update(1)
    finally:
        bar.close()
    return pairs


def selected_checks(claims: list[str] | None) -> list[CheckSpec]:
    """The checks named by ``--claim``: an id, or a family prefix with or without its trailing dot (``ds.``)."""
    if claims is None:
        return select_checks(None)
    return select_checks([c[:-1] if c.endswith(".") and len(c) > 1 else c for c in claims])


def prepare_out(out: Path) -> Path:
    """Create the output folder and a staging folder inside it (which proves it writable); returns the staging
    folder. Raises OSError naming the folder when it cannot be used."""
    from fedbounds.checks.core.install import staging

    return staging(out, "check")


def install(tmp: Path, out: Path) -> tuple[Path, list[Path]]:
    """Move the report written in ``tmp`` into ``out`` (:func:`fedbounds.checks.core.install.install`): report.json
    last, the previous report kept until the new one is whole. Returns (report.json, plots) at their final places."""
    from fedbounds.checks.core.install import install as install_files

    old = [*sorted(_listed_plots(out / "report.json")), "index.html"]
    new = [*sorted(_listed_plots(tmp / "report.json")), *(["index.html"] if (tmp / "index.html").exists() else [])]
    placed = install_files(tmp, out, [*new, "report.json"], old, index="report.json")
    return out / "report.json", [p for p in placed if p.suffix == ".png"]


def _listed_plots(report: Path) -> set[str]:
    """Plot file names a report.json lists (plain names only; an unreadable report lists none)."""
    try:
        claims = json.loads(report.read_text(encoding="utf-8")).get("claims", [])
        names = {str(n) for c in claims for n in c.get("plot_files", [])}
    except (OSError, ValueError, AttributeError, TypeError):
        return set()
    return {n for n in names if n == Path(n).name and n.endswith(".png")}


def run(args: argparse.Namespace) -> int:
    profile = get_profile(args.profile)
    specs = selected_checks(args.claim)
    out = Path(args.out)
    tmp = prepare_out(out)
    try:
        return _run(args, profile, specs, out, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _run(args: argparse.Namespace, profile: Profile, specs: list[CheckSpec], out: Path, tmp: Path) -> int:
    from fedbounds.checks.core.html import write_index_html
    from fedbounds.checks.core.report import format_table, run_metadata, write_report

    started = run_metadata()  # the commit and date the run starts from
    t0 = time.perf_counter()
    pairs = run_checks(specs, {"profile": profile, "seed": int(args.seed)}, progress=not args.no_progress)
    elapsed = time.perf_counter() - t0
    ok = all(spec.accepts(res) for spec, res in pairs)
    meta = {
        **started,
        "profile": profile.to_dict(),
        "seed": int(args.seed),
        "elapsed_s": elapsed,
        "python": platform.python_version(),
        "passed": ok,
    }
    write_report(tmp, pairs, meta)
    write_index_html(tmp, json.loads((tmp / "report.json").read_text(encoding="utf-8")))
    json_path, pngs = install(tmp, out)
    print(format_table(pairs, getattr(args, "width", None)))
    print(f"\nprofile {profile.name}, seed {args.seed}: {len(pairs)} claims in {elapsed:.1f} s")
    print(f"report: {json_path}")
    print(f"plots:  {len(pngs)} PNG files in {json_path.parent}/ (and index.html)")
    print("result: " + ("PASS" if ok else "FAIL (a claim is violated, a check errored, or a negative control passed)"))
    return 0 if ok else 1
