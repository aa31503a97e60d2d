"""Time FedNMap's descent PEP in its full and its client-symmetric block form (docs/fednmap-reconstruction.md §10.4).

Usage (from the repository root):
    python benchmarks/bench_pep_symmetric.py 3,2,2,16 3,3,3,16          # (n, Q, T, k): steps k x Theorem 5's printed ones
    python benchmarks/bench_pep_symmetric.py --block-only 4,3,3,16 6,3,3,16

Prints, per point and form, the two-solver certificate (status, value), each solver's status, duality gap and solve
time, the PSD block sizes (block form) and the wall time with the budget retries of ``descent_check``. L = 1,
rho = 0.1, (C_0, C_c) = (1, 1).
"""

from __future__ import annotations

import argparse
import time
import warnings

from fedbounds.checks.fednmap.pep.encoding import descent_check, theorem5_steps


def _point(text: str) -> tuple[int, int, int, float]:
    n, Q, T, k = text.split(",")
    return int(n), int(Q), int(T), float(k)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("points", nargs="+", type=_point, metavar="n,Q,T,k")
    p.add_argument("--block-only", action="store_true", help="skip the full form (it takes minutes from n = 3, Q = T = 3)")
    args = p.parse_args()
    warnings.simplefilter("ignore")
    for n, Q, T, k in args.points:
        st = theorem5_steps(1.0, 0.1, Q)
        for symmetric in (True,) if args.block_only else (True, False):
            t0 = time.perf_counter()
            c = descent_check(1.0, 0.1, st["gamma"], k * st["eta_a"], st["eta_s"], n, Q, T, 1.0, 1.0, k * st["descent_coef"],
                              symmetric=symmetric)
            wall = time.perf_counter() - t0
            runs = "; ".join(f"{r.solver} {r.status} gap={'-' if r.gap is None else f'{r.gap:.1e}'} {r.seconds:.2f}s" for r in c.runs)
            blocks = c.runs[0].options.get("blocks") if symmetric else None
            form = f"block {blocks}" if symmetric else "full"
            value = "-" if c.value is None else f"{c.value:.7f}"
            print(f"(n, Q, T, k) = ({n}, {Q}, {T}, {k:g})  {form:<14} gram {c.gram_dim:<4} {c.status:<12} {value}  "
                  f"[{runs}]  wall {wall:.1f} s", flush=True)


if __name__ == "__main__":
    main()
