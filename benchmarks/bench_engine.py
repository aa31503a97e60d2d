"""Benchmark: the vectorised engine against the per-client reference loops, on the same work.

Work (issue 3): FedNMap (variant A, with correction) on heterogeneous Lasso, n = 64 clients, Q = 8 local steps,
p = 100, R = 64 Monte Carlo replicas, 200 rounds, additive Gaussian gradient noise. Both implementations consume
exactly the same random draws (one oracle call per (round, local step) on the full (R, n, p) stack); the script
checks that their states agree to 1e-12 before it reports any time.

The reference loops are slow, so by default they run ``--ref-rounds`` rounds only and their time is extrapolated
linearly to ``--rounds`` (every round does the same work, so the per-round time is the honest unit); the
output says when it extrapolates. ``--ref-rounds 200`` times the full run.

The ratio depends on how much of a round is spent in the problem's gradient and the noise draw, which both
implementations share (the reference must call the oracle on the same stack to replay its draws). The script
therefore also times the oracle calls alone and reports the ratio of the non-oracle ("engine") parts.
``--fast-grad`` swaps the instance's einsum gradient for the same formula through batched matmul (BLAS), which
shrinks the shared part.

Times are reported as process CPU time (BLAS pinned to one thread, so this is what an idle machine's wall
clock shows) and as wall-clock time (which, on a shared machine, also counts time spent waiting for a core).

Peak memory: ``tracemalloc`` peak of a short separate run of each implementation (numpy buffers are traced),
plus the process's peak resident set size (``resource.getrusage``). Timing runs are not traced.

Threads: BLAS is pinned to ``--threads`` (default 1) before numpy is imported, so that the comparison is
single-core like the Python loops.

Usage: python benchmarks/bench_engine.py [--rounds 200] [--ref-rounds 5] [--fast-grad] [--exact]
"""

from __future__ import annotations

import argparse
import os
import sys


def _parse() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--Q", type=int, default=8)
    ap.add_argument("--p", type=int, default=100)
    ap.add_argument("--replicas", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=200, help="rounds of the vectorised engine")
    ap.add_argument("--ref-rounds", type=int, default=5, help="rounds of the reference loops (extrapolated to --rounds)")
    ap.add_argument("--sigma2", type=float, default=1.0, help="Gaussian oracle variance")
    ap.add_argument("--exact", action="store_true", help="exact gradients instead of the Gaussian oracle")
    ap.add_argument("--fast-grad", action="store_true", help="instance gradient by batched matmul instead of einsum")
    ap.add_argument("--threads", type=int, default=1, help="BLAS / OpenMP threads")
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_args()


ARGS = _parse() if __name__ == "__main__" else None
if ARGS is not None:
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(ARGS.threads)

import resource  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402

from algorithms.fednmap import FedNMap  # noqa: E402
from algorithms.instances.least_squares import LeastSquares, heterogeneous_least_squares  # noqa: E402
from algorithms.oracles import GaussianOracle  # noqa: E402
from algorithms.reference import fednmap as reference_fednmap  # noqa: E402
from algorithms.regularizers import L1  # noqa: E402
from algorithms.rng import stream  # noqa: E402
from algorithms.run import default_oracle, run  # noqa: E402


class MatmulLeastSquares(LeastSquares):
    """The same least-squares instance with grad f_i(x_i) = H_i x_i - h_i computed by batched matmul."""

    def grad(self, X: np.ndarray) -> np.ndarray:
        Xt = np.moveaxis(X, -2, 0)  # (n, ..., p)
        shape = Xt.shape
        G = np.matmul(Xt.reshape(shape[0], -1, shape[-1]), np.swapaxes(self.hessians, 1, 2)).reshape(shape)
        return np.moveaxis(G, 0, -2) - self.linear


def main(args: argparse.Namespace) -> int:
    problem = heterogeneous_least_squares(n=args.n, p=args.p, m=20, heterogeneity=1.0, phi=L1(0.01), seed=args.seed)
    if args.fast_grad:
        problem = MatmulLeastSquares(problem.A, problem.b, problem.phi)
    oracle = default_oracle() if args.exact else GaussianOracle(args.sigma2)
    gamma = 1.0 / float(np.linalg.eigvalsh(problem.hessians).max())
    params = {"gamma": gamma, "eta_a": 0.05 * gamma, "eta_s": 2.0, "Q": args.Q}
    R = args.replicas
    work = f"FedNMap n={args.n} Q={args.Q} p={args.p} replicas={R}"
    print(f"work: {work}; oracle: {'exact' if args.exact else f'Gaussian sigma2={args.sigma2}'}; "
          f"gradient: {'batched matmul' if args.fast_grad else 'instance einsum'}; threads: {args.threads}")

    # 1. same draws, same states: the reference and the engine agree on the first rounds
    k = min(args.ref_rounds, 2)
    alg = FedNMap()
    state = alg.init(problem, alg.validate(problem, params), oracle, R, args.seed)
    for t in range(k):
        state = alg.step(state, t)
    ref = reference_fednmap(problem, params, rounds=k, replicas=R, seed=args.seed, oracle=oracle)
    err = max(float(np.max(np.abs(ref[f][-1] - getattr(state, f)))) for f in ("z", "x", "c"))
    print(f"agreement after {k} rounds: max |engine - reference| = {err:.2e}")
    if not err <= 1e-12:
        print("engine and reference disagree; not timing", file=sys.stderr)
        return 1

    # 2. timing (untraced): wall clock and process CPU time (single-threaded BLAS, so CPU time is what an idle
    # machine's wall clock would show; on a shared machine the wall clock also counts time spent waiting)
    def timed(fn):  # -> (wall s, cpu s)
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        return time.perf_counter() - w0, time.process_time() - c0

    holder = {}
    w_vec, c_vec = timed(lambda: holder.setdefault("tr", run("fednmap", problem, params, rounds=args.rounds, replicas=R,
                                                             seed=args.seed, oracle=oracle, metrics=())))
    holder["tr"].raise_if_diverged()
    w_ref, c_ref = timed(lambda: reference_fednmap(problem, params, rounds=args.ref_rounds, replicas=R, seed=args.seed, oracle=oracle))

    # the shared part: the oracle calls alone (stream + gradient + noise), on points of the right shape
    X = np.broadcast_to(state.x[:, None, :], (R, args.n, args.p)).copy()
    m = min(args.rounds, 5)

    def oracle_only() -> None:
        for t in range(m):
            for l in range(args.Q):
                oracle.sample(problem, X, stream(args.seed, t, l))

    w_orc, c_orc = timed(oracle_only)

    scale = args.rounds / args.ref_rounds
    extrap = "" if args.ref_rounds == args.rounds else f"; measured {args.ref_rounds} rounds, extrapolated linearly to {args.rounds}"
    for label, vec, ref, orc in (("CPU time", c_vec, c_ref, c_orc), ("wall time", w_vec, w_ref, w_orc)):
        per_vec, per_ref, per_orc = vec / args.rounds, ref / args.ref_rounds, orc / m
        print(f"[{label}] vectorised engine: {args.rounds} rounds in {vec:.2f} s ({1e3 * per_vec:.1f} ms/round)")
        print(f"[{label}] reference loops:   {args.rounds} rounds in {ref * scale:.2f} s ({1e3 * per_ref:.1f} ms/round{extrap})")
        print(f"[{label}] ratio (reference / vectorised): {ref * scale / vec:.1f}x")
        eng_vec, eng_ref = per_vec - per_orc, per_ref - per_orc
        print(f"[{label}] oracle calls alone (shared by both): {1e3 * per_orc:.1f} ms/round", end="")
        if eng_vec > 0:
            detail = f"({1e3 * eng_ref:.1f} vs {1e3 * eng_vec:.1f} ms/round)"
            print(f"; engine-only ratio (time outside the oracle): {eng_ref / eng_vec:.1f}x {detail}")
        else:
            print()

    # 3. peak memory (separate, traced, short runs)
    tracemalloc.start()
    run("fednmap", problem, params, rounds=2, replicas=R, seed=args.seed, oracle=oracle, metrics=())
    peak_vec = tracemalloc.get_traced_memory()[1]
    tracemalloc.reset_peak()
    reference_fednmap(problem, params, rounds=1, replicas=R, seed=args.seed, oracle=oracle)
    peak_ref = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB -> MB on Linux
    print(f"peak traced memory: vectorised {peak_vec / 2**20:.1f} MiB, reference {peak_ref / 2**20:.1f} MiB "
          f"(one (R, n, p) float64 array = {R * args.n * args.p * 8 / 2**20:.1f} MiB); process peak RSS {rss:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main(ARGS))
