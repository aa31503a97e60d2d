"""``fedbounds check``: run the bound-checking suite, print the claims table, write report.json and plots.

Exit status: 0 when no claim is violated (except claims recorded as errata, whose violation is the
finding) and every negative control came out violated; 1 otherwise; 2 on bad input (an unknown claim id).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
import traceback
from pathlib import Path

from fedbounds.checks.core.profiles import PROFILES, get_profile
from fedbounds.checks.registry import CheckContext, CheckResult, CheckSpec, select_checks


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", default="quick", choices=sorted(PROFILES), help="budget: quick (default, < 3 min) or full")
    parser.add_argument("--claim", action="append", metavar="ID", help="run only this claim (an id or a family prefix); repeatable")
    parser.add_argument("--out", default="reports", metavar="DIR", help="output folder for report.json and plots (default: reports/)")
    parser.add_argument("--seed", type=int, default=0, help="base seed of every Monte Carlo run (default 0)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def run_checks(specs: list[CheckSpec], ctx_kwargs: dict, progress: bool = True) -> list[tuple[CheckSpec, CheckResult]]:
    """Run ``specs`` in order; an exception inside a check becomes a result with ``error`` set."""
    from tqdm import tqdm

    pairs: list[tuple[CheckSpec, CheckResult]] = []
    bar = tqdm(total=len(specs), disable=not progress, file=sys.stderr, unit="claim", dynamic_ncols=True)
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
            bar.update(1)
    finally:
        bar.close()
    return pairs


def run(args: argparse.Namespace) -> int:
    from fedbounds.checks.core.report import format_table, write_report

    profile = get_profile(args.profile)
    specs = select_checks(args.claim)
    t0 = time.perf_counter()
    pairs = run_checks(specs, {"profile": profile, "seed": int(args.seed)}, progress=not args.no_progress)
    elapsed = time.perf_counter() - t0
    ok = all(spec.accepts(res) for spec, res in pairs)
    meta = {
        "profile": profile.to_dict(),
        "seed": int(args.seed),
        "elapsed_s": elapsed,
        "python": platform.python_version(),
        "passed": ok,
    }
    print(format_table(pairs))
    json_path, pngs = write_report(Path(args.out), pairs, meta)
    print(f"\nprofile {profile.name}, seed {args.seed}: {len(pairs)} claims in {elapsed:.1f} s")
    print(f"report: {json_path}")
    print(f"plots:  {len(pngs)} PNG files in {json_path.parent}/")
    print("result: " + ("PASS" if ok else "FAIL (a claim is violated, a check errored, or a negative control passed)"))
    return 0 if ok else 1
