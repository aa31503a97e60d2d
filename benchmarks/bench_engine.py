"""Benchmark: the vectorised engine against the plain reference loops, on the same work.

Work: FedNMap (variant A, with correction) on heterogeneous Lasso, n = 64 clients, Q = 8 local steps,
p = 100, R = 64 Monte Carlo replicas, 200 rounds, additive Gaussian gradient noise (sigma2 = 1). Both sides

* consume exactly the same random draws: the engine calls ``oracle.sample`` once per (round, local step) on the
  full (R, n, p) stack; the reference (``fedbounds.algorithms.reference.fednmap``: for each replica, for each client, for
  each local step, ``g = H_i x_i - h_i + xi[r, i]``) draws the same noise array from the same stream and reads
  entry [r, i];
* record the same metrics every round for every replica: psi(x_t) - psi* and ||F_nor(z_t)||^2 (the engine
  through ``run(..., metrics=...)``, the reference with a per-replica loop over its recorded z_t and x_t).

Before timing, the script checks that the two trajectories (z, x, c) agree to 1e-12 and their metrics to 1e-9.

Timing. Each side runs in a fresh child process (``--child``), ``--repeat`` times; each child reports the
process CPU time (``time.process_time``) and the wall-clock time of its run alone (imports and the certified
solution x*, which both sides share, are excluded). CPU time is the main figure: on a shared machine the wall
clock also counts time spent waiting for a core. The ratio is median reference time per round over median
engine time per round (and the same with the fastest repeat of each side). The reference loops are slow, so by
default they run ``--ref-rounds`` rounds and their time is extrapolated linearly to ``--rounds`` (every round does
the same work; the output says when it extrapolates). ``--ref-rounds 200`` times the full run.

Threads. ``--threads 1`` (default) pins BLAS/OpenMP to one thread in both children (OPENBLAS_NUM_THREADS=1 etc.):
the fair single-core comparison, since the reference loops run on one core. ``--threads k`` lets BLAS use k.

Shared floor. The script also times what both sides must do alike, per round: the Q noise draws of shape
(R, n, p) (``oracle.noise``). It bounds the ratio: ratio <= (reference time) / (noise time).

Page faults. Where returning freed memory to the OS is costly (a VM whose page faults are slow), every fresh
(R, n, p) array the engine or the oracle allocates costs its page faults again; ``--keep-freed-memory`` (a
diagnostic, off by default) runs both children with glibc's trim and mmap thresholds raised so that freed
blocks are reused, which shows how much of the engine's time that is.

Peak memory: per side, the ``tracemalloc`` peak of a separate traced run of ``--mem-rounds`` rounds (numpy
buffers are traced), and the child process's peak resident set size (``ru_maxrss``) over its timed run.

Usage (from the repository root):
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_engine.py [--rounds 200] [--ref-rounds 20] [--repeat 3]
        [--threads 1] [--exact] [--mem-rounds 5] [--keep-freed-memory]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
#: --keep-freed-memory: glibc keeps freed blocks instead of returning them to the OS (32 MiB is the largest mmap threshold)
MALLOC_VARS = {"MALLOC_TRIM_THRESHOLD_": str(2**30), "MALLOC_MMAP_THRESHOLD_": str(2**25)}
METRICS = ("psi_gap", "normal_map_sq")


def _parse(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--Q", type=int, default=8)
    ap.add_argument("--p", type=int, default=100)
    ap.add_argument("--m", type=int, default=20, help="samples per client of the least-squares instance")
    ap.add_argument("--replicas", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=200, help="rounds of the vectorised engine")
    ap.add_argument("--ref-rounds", type=int, default=20, help="rounds of the reference loops (extrapolated to --rounds)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs of each side (fresh process each)")
    ap.add_argument("--mem-rounds", type=int, default=5, help="rounds of the traced (tracemalloc) run of each side")
    ap.add_argument("--sigma2", type=float, default=1.0, help="Gaussian oracle variance")
    ap.add_argument("--exact", action="store_true", help="exact gradients instead of the Gaussian oracle")
    ap.add_argument("--threads", type=int, default=1, help="BLAS / OpenMP threads (1: the fair single-core comparison)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep-freed-memory", action="store_true",
                    help="diagnostic: glibc malloc keeps freed memory (MALLOC_TRIM_THRESHOLD_/MALLOC_MMAP_THRESHOLD_) in both children")
    ap.add_argument("--fast-grad", action="store_true", help="no effect (old command lines): the instance gradient is batched matmul")
    ap.add_argument("--child", choices=("engine", "reference"), help=argparse.SUPPRESS)
    ap.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    return ap.parse_args(argv)


ARGS = _parse() if __name__ == "__main__" else None
if ARGS is not None:
    for var in THREAD_VARS:  # before numpy is imported
        os.environ[var] = str(ARGS.threads)

import resource  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402
from fedbounds.algorithms.base import normal_map  # noqa: E402
from fedbounds.algorithms.fednmap import FedNMap  # noqa: E402
from fedbounds.algorithms.instances.least_squares import heterogeneous_least_squares  # noqa: E402
from fedbounds.algorithms.oracles import GaussianOracle  # noqa: E402
from fedbounds.algorithms.reference import fednmap as reference_fednmap  # noqa: E402
from fedbounds.algorithms.regularizers import L1  # noqa: E402
from fedbounds.algorithms.rng import stream  # noqa: E402
from fedbounds.algorithms.run import default_oracle, run  # noqa: E402


def setup(args: argparse.Namespace):
    """The instance (with its certified solution computed), oracle and FedNMap params of the benchmark."""
    problem = heterogeneous_least_squares(n=args.n, p=args.p, m=args.m, heterogeneity=1.0, phi=L1(0.01), seed=args.seed)
    problem.solution()  # cached on the instance: psi* for the psi_gap metric, outside every timing
    oracle = default_oracle() if args.exact else GaussianOracle(args.sigma2)
    gamma = 1.0 / float(np.linalg.eigvalsh(problem.hessians).max())
    params = {"gamma": gamma, "eta_a": 0.05 * gamma, "eta_s": 2.0, "Q": args.Q}
    return problem, oracle, params


def engine_run(problem, oracle, params, args, rounds: int) -> dict[str, np.ndarray]:
    """The vectorised engine with the benchmark's metrics; metric name -> (rounds + 1, R)."""
    tr = run("fednmap", problem, params, rounds=rounds, replicas=args.replicas, seed=args.seed, oracle=oracle, metrics=METRICS)
    tr.raise_if_diverged()
    return tr.metrics


def reference_run(problem, oracle, params, args, rounds: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The reference loops, then the same metrics per round and replica; (metrics, history of z and x)."""
    hist = reference_fednmap(problem, params, rounds=rounds, replicas=args.replicas, seed=args.seed, oracle=oracle, keep=("z", "x"))
    psi_star, gamma = problem.solution().psi_star, params["gamma"]
    out = {name: np.empty((rounds + 1, args.replicas)) for name in METRICS}
    for t in range(rounds + 1):
        for r in range(args.replicas):
            x, z = hist["x"][t, r], hist["z"][t, r]
            out["psi_gap"][t, r] = problem.psi(x) - psi_star
            F = normal_map(problem, z, gamma)
            out["normal_map_sq"][t, r] = F @ F
    return out, hist


def child(args: argparse.Namespace) -> int:
    """One side, in its own process: a timed run, then a traced run; prints one JSON line."""
    problem, oracle, params = setup(args)
    rounds = args.rounds if args.child == "engine" else args.ref_rounds
    fn = engine_run if args.child == "engine" else reference_run
    w0, c0 = time.perf_counter(), time.process_time()
    fn(problem, oracle, params, args, rounds)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kB on Linux
    peak = None
    if args.trace:
        tracemalloc.start()
        fn(problem, oracle, params, args, min(args.mem_rounds, rounds))
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    print(json.dumps({"side": args.child, "rounds": rounds, "cpu": cpu, "wall": wall, "maxrss": maxrss, "traced_peak": peak}))
    return 0


def spawn(side: str, argv: list[str], threads: int, trace: bool, keep_freed: bool) -> dict:
    env = {**os.environ, **{var: str(threads) for var in THREAD_VARS}, **(MALLOC_VARS if keep_freed else {})}
    cmd = [sys.executable, __file__, *argv, "--child", side, *(["--trace"] if trace else [])]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{side} child failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(args: argparse.Namespace, argv: list[str]) -> int:
    problem, oracle, params = setup(args)
    R = args.replicas
    print(f"work: FedNMap n={args.n} Q={args.Q} p={args.p} m={args.m} replicas={R} rounds={args.rounds}; "
          f"oracle: {'exact' if args.exact else f'Gaussian sigma2={args.sigma2}'}; metrics per round: {', '.join(METRICS)}")
    kind = "the fair single-core comparison" if args.threads == 1 else "multi-threaded BLAS"
    print(f"threads: BLAS/OpenMP pinned to {args.threads} ({kind}); repeats: {args.repeat} per side, each in a fresh process")
    if args.keep_freed_memory:
        print(f"diagnostic: both children run with {' '.join(f'{k}={v}' for k, v in MALLOC_VARS.items())} (freed memory is kept, "
              "so a new (R, n, p) array does not page-fault)")

    # 1. same draws, same states, same metrics
    k = min(args.ref_rounds, 2)
    alg = FedNMap()
    state = alg.init(problem, alg.validate(problem, params), oracle, R, args.seed)
    for t in range(k):
        state = alg.step(state, t)
    ref = reference_fednmap(problem, params, rounds=k, replicas=R, seed=args.seed, oracle=oracle)
    err = max(float(np.max(np.abs(ref[f][-1] - getattr(state, f)))) for f in ("z", "x", "c"))
    m_eng = engine_run(problem, oracle, params, args, k)
    m_ref, _ = reference_run(problem, oracle, params, args, k)
    m_err = max(float(np.max(np.abs(m_eng[name] - m_ref[name]) / np.maximum(1.0, np.abs(m_ref[name])))) for name in METRICS)
    print(f"agreement after {k} rounds: max |engine - reference| = {err:.2e} on (z, x, c); {m_err:.2e} (relative) on the metrics")
    if not (err <= 1e-12 and m_err <= 1e-9):
        print("engine and reference disagree; not timing", file=sys.stderr)
        return 1

    # 2. timing, each side in fresh processes
    # (the first run of each side also makes a separate traced run for the tracemalloc peak, after its timing)
    sides = ("engine", "reference")
    runs = {side: [spawn(side, argv, args.threads, i == 0, args.keep_freed_memory) for i in range(args.repeat)] for side in sides}

    # 3. the shared floor: the noise draws alone (both sides draw the same Q arrays (R, n, p) per round)
    def noise_round(t: int) -> None:
        if hasattr(oracle, "noise"):
            for l in range(args.Q):
                oracle.noise(stream(args.seed, t, l), (R, args.n, args.p))

    noise_cpu = []
    for _ in range(args.repeat):
        c0 = time.process_time()
        for t in range(5):
            noise_round(t)
        noise_cpu.append((time.process_time() - c0) / 5)

    extrap = args.ref_rounds != args.rounds
    print()
    for label, key in (("CPU time", "cpu"), ("wall time", "wall")):
        per = {side: [r[key] / r["rounds"] for r in rs] for side, rs in runs.items()}
        med = {side: statistics.median(v) for side, v in per.items()}
        best = {side: min(v) for side, v in per.items()}
        print(f"[{label}] vectorised engine: {1e3 * med['engine']:.1f} ms/round median (min {1e3 * best['engine']:.1f}; "
              f"runs {', '.join(f'{1e3 * v:.1f}' for v in per['engine'])}); {args.rounds} rounds in {med['engine'] * args.rounds:.1f} s")
        note = (f"measured over {args.ref_rounds} rounds, extrapolated linearly to {args.rounds}" if extrap
                else f"measured over all {args.rounds} rounds")
        print(f"[{label}] reference loops:   {1e3 * med['reference']:.1f} ms/round median (min {1e3 * best['reference']:.1f}; "
              f"runs {', '.join(f'{1e3 * v:.1f}' for v in per['reference'])}); {args.rounds} rounds in "
              f"{med['reference'] * args.rounds:.1f} s ({note})")
        print(f"[{label}] ratio (reference / vectorised): {med['reference'] / med['engine']:.1f}x (medians), "
              f"{best['reference'] / best['engine']:.1f}x (fastest runs)")
    if hasattr(oracle, "noise"):
        floor = statistics.median(noise_cpu)
        ref_med = statistics.median(r["cpu"] / r["rounds"] for r in runs["reference"])
        eng_med = statistics.median(r["cpu"] / r["rounds"] for r in runs["engine"])
        print(f"[CPU time] shared noise draws alone ({args.Q} x ({R}, {args.n}, {args.p}) per round): {1e3 * floor:.1f} ms/round, "
              f"{100 * floor / eng_med:.0f}% of the engine's round; ratio bound reference / noise = {ref_med / floor:.1f}x")

    # 4. peak memory
    one = R * args.n * args.p * 8 / 2**20
    for side in ("engine", "reference"):
        rs = runs[side]
        traced, rss = rs[0]["traced_peak"] / 2**20, max(r["maxrss"] for r in rs) / 2**20
        print(f"peak traced memory (tracemalloc), {side}: {traced:.1f} MiB over a traced run of {min(args.mem_rounds, rs[0]['rounds'])} "
              f"rounds; peak RSS of its process {rss:.0f} MiB over {rs[0]['rounds']} rounds (interpreter and imports included)")
    print(f"(one (R, n, p) float64 array = {one:.1f} MiB)")
    return 0


if __name__ == "__main__":
    argv = list(sys.argv[1:])
    sys.exit(child(ARGS) if ARGS.child else main(ARGS, argv))
