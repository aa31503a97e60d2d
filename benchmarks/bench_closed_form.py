"""Time per cell: Monte Carlo, the exact round loop, and the closed form, at 1e3, 1e5 and 1e7 rounds.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_closed_form.py [--quick]

One cell = FedNMap on the weakly convex quadratic (``fedbounds.algorithms.instances.quadratic``, p = 1, zeta = 1),
Gaussian noise sigma^2 = 1, at Theorem 5's printed steps tuned for eps = 0.01 (``checks.fednmap.inside``), at
(n, Q) = (8, 4) and (64, 16). What each method computes at T rounds:

* Monte Carlo: ``run`` with R = 256 replicas and the psi_gap metric for T rounds (the study's typical block is 32
  to 512 replicas) -- measured at 1e3 rounds, extrapolated linearly in T beyond (the cost per round is constant);
* round loop: ``run_exact`` for T rounds (exact moments, one affine map per round) -- measured at 1e3 and 1e5 rounds
  (1e5 only with --full), extrapolated linearly to 1e7;
* closed form: ``affine_round`` + ``closed_form`` + E[psi_gap] at round T + the rounds to eps by bisection --
  measured at every T (its cost does not grow with T).

CPU seconds (``time.process_time``) of this process; the machine may be shared, so read the ratios.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from fedbounds.algorithms.closed_form import closed_form
from fedbounds.algorithms.exact import affine_round, run_exact
from fedbounds.algorithms.instances.quadratic import weakly_convex_quadratic
from fedbounds.algorithms.oracles import GaussianOracle
from fedbounds.algorithms.run import run
from fedbounds.checks.fednmap.inside import inside_steps

ROUNDS = (10**3, 10**5, 10**7)


def _cell(n: int, Q: int) -> tuple:
    prob = weakly_convex_quadratic(n=n, p=1, heterogeneity=1.0)
    c = prob.constants
    st = inside_steps(L=c["L"].value, rho=c["rho"].value, mu=c["mu"].value, sigma2=1.0, n=n, Q=Q, eps=0.01)
    params = {"gamma": st["gamma"], "eta_a": st["eta_a"], "eta_s": st["eta_s"], "Q": Q, "z0": np.array([3.0])}
    return prob, params


def _cpu(f) -> tuple[float, object]:
    t = time.process_time()
    out = f()
    return time.process_time() - t, out


def bench(n: int, Q: int, full: bool) -> dict:
    prob, params = _cell(n, Q)
    oracle = GaussianOracle(1.0)
    mc_s, _ = _cpu(lambda: run("fednmap", prob, params, rounds=ROUNDS[0], replicas=256, seed=0, oracle=oracle, metrics=("psi_gap",)))
    loop_s, ex = _cpu(lambda: run_exact("fednmap", prob, params, rounds=ROUNDS[0], oracle=oracle))
    loop_at = {ROUNDS[0]: (loop_s, "measured")}
    if full:
        s, _ = _cpu(lambda: run_exact("fednmap", prob, params, rounds=ROUNDS[1], oracle=oracle))
        loop_at[ROUNDS[1]] = (s, "measured")
    per_round = max(v[0] / T for T, v in loop_at.items())
    out = {"n": n, "Q": Q, "rows": []}
    for T in ROUNDS:
        def closed(T: int = T) -> tuple:
            cf = closed_form(affine_round("fednmap", prob, params, oracle=oracle))
            return cf.expectation("psi_gap", T), cf.rounds_to_target("psi_gap", 0.01), cf.method
        cf_s, (val, rtt, method) = _cpu(closed)
        lt, how = loop_at.get(T, (per_round * T, "extrapolated"))
        out["rows"].append({"rounds": T, "monte_carlo_R256_s": mc_s * T / ROUNDS[0],
                            "monte_carlo": "measured" if T == ROUNDS[0] else "extrapolated (linear in T)",
                            "round_loop_s": lt, "round_loop": how, "closed_form_s": cf_s, "closed_form": "measured",
                            "E_psi_gap_at_T": val, "rounds_to_eps": rtt, "evaluator": method})
    if ROUNDS[0] in loop_at:
        cf = closed_form(affine_round("fednmap", prob, params, oracle=oracle))
        out["agreement_at_1e3"] = abs(cf.expectation("psi_gap", ROUNDS[0]) / ex.E_psi_gap[-1] - 1.0)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--full", action="store_true", help="also measure the round loop at 1e5 rounds")
    args = ap.parse_args()
    res = [bench(8, 4, args.full), bench(64, 16, args.full)]
    for r in res:
        print(f"n = {r['n']}, Q = {r['Q']} (closed form vs loop at 1e3 rounds: rel. diff {r.get('agreement_at_1e3', float('nan')):.1e})")
        print(f"  {'rounds':>9}  {'Monte Carlo (R=256)':>24}  {'round loop':>24}  {'closed form':>12}")
        for row in r["rows"]:
            mc = f"{row['monte_carlo_R256_s']:.3g} s" + ("" if row["monte_carlo"] == "measured" else " (extrap.)")
            lp = f"{row['round_loop_s']:.3g} s" + ("" if row["round_loop"] == "measured" else " (extrap.)")
            print(f"  {row['rounds']:>9.0e}  {mc:>24}  {lp:>24}  {row['closed_form_s']:>10.3g} s")
    print(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
