"""Run the linear-speedup study and write its results here, with the command, commit, wall and CPU time.

    .venv/bin/python results/fednmap_speedup/run_study.py [--store PATH] [--processes 2]

runs ``nice -n 5 fedbounds sweep fednmap_speedup --store PATH --processes N --no-progress``, samples the CPU
time of the sweep's whole process tree (the worker processes are not children the parent waits for, so
``getrusage(RUSAGE_CHILDREN)`` misses them; /proc is read every half second, and each process's last sample
counts), then writes cells.csv, points.csv, slopes.csv and the figures
(``fedbounds.checks.studies.fednmap_speedup.write_study``) and RUN.json: the exact command, ``git rev-parse HEAD``,
whether the working tree had uncommitted changes to the files that decide the result (and their sha256),
wall and CPU seconds, and the load average before and after (other engineers share the machine's cores).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from fedbounds.checks.runtime.cpu import tree_cpu

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
#: the files whose content decides the numbers (besides the engine)
DECIDING = [
    "checks/specs/fednmap_speedup.toml",
    "checks/sweep/cell.py",
    "checks/studies/fednmap_speedup.py",
    "checks/sweep/spec.py",
    "algorithms/fednmap.py",
    "algorithms/baselines.py",
    "algorithms/run.py",
    "algorithms/instances/least_squares.py",
]


def _page(out: Path, run: dict) -> None:
    """index.html: the slopes, the figures and the run's metadata on one self-contained page."""
    import csv

    from fedbounds.checks.report.html import write_index_html

    with (out / "slopes.csv").open() as fh:
        slopes = [r for r in csv.DictReader(fh) if r["axis"] == "nQ" or r["series"] in ("Q=1", "Q=4", "n=1", "n=8")]
    report = {
        "spec": "fednmap_speedup: rounds to E[psi - psi*] <= 1e-3 against n and Q",
        "slopes": slopes,
        "figures": [f"rounds_vs_{a}.png" for a in ("n", "Q", "nQ")],
        **run,
    }
    write_index_html(out, report)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", default=str(ROOT / "reports/sweeps/fednmap_speedup-study.sqlite"))
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--spec", default="fednmap_speedup", help="the spec (a trial on a smaller one)")
    ap.add_argument("--out", default=str(HERE), help="where the results go")
    args = ap.parse_args()
    fedbounds = str(Path(sys.executable).with_name("fedbounds"))
    cmd = ["nice", "-n", "5", fedbounds, "sweep", args.spec, "--store", args.store, "--processes", str(args.processes), "--no-progress"]
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--", *DECIDING], cwd=ROOT, capture_output=True, text=True).stdout.split("\n")
    digests = {f: hashlib.sha256((ROOT / f).read_bytes()).hexdigest() for f in DECIDING}
    load0 = os.getloadavg()
    t0, started = time.perf_counter(), time.strftime("%Y-%m-%d %H:%M:%S %Z")
    proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"})
    seen: dict[int, float] = {}
    while proc.poll() is None:
        tree_cpu(proc.pid, seen)
        time.sleep(0.5)
    wall = time.perf_counter() - t0
    load1 = os.getloadavg()
    from fedbounds.checks.studies.fednmap_speedup import write_study

    out = Path(args.out)
    summary = write_study(args.store, out)
    run = {
        "command": " ".join(["nice", "-n", "5", "fedbounds", *cmd[4:]]),
        "then": f"python -m fedbounds.checks.studies.fednmap_speedup {args.store} {args.out}",
        "driver": "python results/fednmap_speedup/run_study.py",
        "git_head": head,
        "uncommitted_changes_to": [line[3:] for line in dirty if line.strip()],
        "sha256": digests,
        "started": started,
        "exit_status": proc.returncode,
        "wall_s": round(wall, 1),
        "cpu_s_sampled": round(sum(seen.values()), 1),
        "processes_sampled": len(seen),
        "loadavg_before": [round(x, 2) for x in load0],
        "loadavg_after": [round(x, 2) for x in load1],
        "cores": os.cpu_count(),
        "note": "2 cores shared with other engineers' jobs (see the load averages); the sweep ran at nice 5",
        **summary,
    }
    (out / "RUN.json").write_text(json.dumps(run, indent=1) + "\n")
    _page(out, run)
    print(json.dumps(run, indent=1))
    return proc.returncode


if __name__ == "__main__":
    raise SystemExit(main())
