"""Time the quick check as a user runs it: ``fedbounds check`` in a fresh process, wall and CPU seconds, the load.

    python benchmarks/bench_quick_check.py                # one process (the default of fedbounds check)
    python benchmarks/bench_quick_check.py --jobs 2       # two worker processes
    python benchmarks/bench_quick_check.py --write        # and rewrite the cost table (checks/runtime/costs.py)

It prints the run's wall and CPU seconds (user + system, the command and its worker processes), the load average
before and after (a loaded machine makes both longer: compare runs at a similar load), the seconds to the first
line of output, and per claim its wall and CPU seconds from the report. The README's and ``fedbounds check
--help``'s figure is this benchmark's, on an idle 2-core machine; ``--write`` keeps the estimate that ``fedbounds
check`` prints at start true (:mod:`fedbounds.checks.runtime.costs`). Not a test: a timing depends on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COSTS = ROOT / "checks" / "runtime" / "costs.py"


def _fedbounds() -> list[str]:
    exe = Path(sys.executable).with_name("fedbounds")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "fedbounds.checks.cli"]


def measure(jobs: int, claims: list[str], out: Path) -> dict:
    """Run ``fedbounds check`` once; wall, CPU (children), load, first-line latency, the report."""
    cmd = [*_fedbounds(), "check", "--out", str(out), "--no-progress", "--jobs", str(jobs)]
    for c in claims:
        cmd += ["--claim", c]
    load0 = os.getloadavg()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tempfile.gettempdir())
    assert proc.stdout is not None
    first = proc.stdout.readline()
    t_first = time.perf_counter() - t0
    rest, err = proc.communicate()
    wall = time.perf_counter() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"fedbounds check failed ({proc.returncode}): {err.strip()[-400:]}")
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return {"wall_s": wall, "cpu_s": (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime), "first_line_s": t_first,
            "first_line": first.strip(), "load_before": load0, "load_after": os.getloadavg(), "jobs": jobs,
            "cores": os.cpu_count(), "passed": report.get("passed"), "claims": report["claims"],
            "last_line": (first + rest).strip().splitlines()[-1]}


def render_costs(text: str, result: dict, where: str) -> str:
    """``costs.py`` with its written part (MEASURED, OVERHEAD_CPU_S, QUICK_CPU_S) replaced by ``result``'s figures."""
    per = {c["check_id"]: max(0.1, round(float(c.get("cpu_s") or c["elapsed_s"]), 1)) for c in result["claims"]}
    overhead = max(1.0, round(result["cpu_s"] - sum(per.values()), 1))
    table = "\n".join(f"    {k!r}: {v}," for k, v in per.items())
    body = (f"MEASURED = {where!r}\n"
            "#: the command's own cost besides the claims (imports, report, plots), CPU seconds\n"
            f"OVERHEAD_CPU_S = {overhead}\n"
            "#: CPU seconds per claim in the quick profile\n"
            f"QUICK_CPU_S: dict[str, float] = {{\n{table}\n}}\n")
    start = text.index("MEASURED = ")
    end = text.index("# -- end of the written part")
    return text[:start] + body + text[end:]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (fedbounds check --jobs)")
    ap.add_argument("--claim", action="append", default=[], help="only these claims (default: all)")
    ap.add_argument("--write", action="store_true", help="rewrite the cost table in checks/runtime/costs.py from this run")
    args = ap.parse_args(argv)
    out = Path(tempfile.mkdtemp(prefix="bench-quick-"))
    try:
        r = measure(args.jobs, args.claim, out)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    print(f"first line after {r['first_line_s']:.1f} s: {r['first_line']}")
    print(f"{'claim':44s} {'wall s':>8s} {'cpu s':>8s}  verdict")
    for c in sorted(r["claims"], key=lambda c: -float(c.get("cpu_s") or 0.0)):
        print(f"{c['check_id']:44s} {c['elapsed_s']:8.1f} {float(c.get('cpu_s') or 0.0):8.1f}  {c['verdict']}")
    print(f"claims' CPU: {sum(float(c.get('cpu_s') or 0.0) for c in r['claims']):.1f} s")
    load = " ".join(f"{x:.2f}" for x in r["load_before"]), " ".join(f"{x:.2f}" for x in r["load_after"])
    print(f"quick check, --jobs {r['jobs']} on {r['cores']} cores: {r['wall_s']:.1f} s wall, {r['cpu_s']:.1f} s CPU (user+sys, "
          f"all processes); load average before {load[0]}, after {load[1]}; passed={r['passed']}")
    if args.write:
        if args.claim:
            raise SystemExit("--write needs the whole quick check (no --claim)")
        where = (f"{time.strftime('%Y-%m-%d')}, --jobs {r['jobs']} on {r['cores']} cores, load {r['load_before'][0]:.1f}: "
                 f"{r['wall_s']:.0f} s wall, {r['cpu_s']:.0f} s CPU")
        COSTS.write_text(render_costs(COSTS.read_text(encoding="utf-8"), r, where), encoding="utf-8")
        print(f"cost table written: {COSTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
