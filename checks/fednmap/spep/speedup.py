"""Linear speedup at the level of the bound: K*(n, Q) of one stochastic FedNMap round at fixed steps (docs/fednmap-reconstruction.md §10).

At 16 x Theorem 5's printed steps (m = 1; eta_hat does not depend on Q there, eta_a = eta_hat/Q), C_0 = 1, the block
form (:mod:`fedbounds.checks.pep.symmetric`, sizes independent of n) certifies K*(C_0, C_c) at two small C_c and
splits it as K = K_var + kappa C_c (:func:`fedbounds.checks.fednmap.spep.constants.split`). K_var is the C_c = 0
intercept of the line through the two certified values: not itself a certified bound, and, K* being convex in C_c, an
underestimate of K* at C_c = 0. It stands for the noise the 36 sigma^2/(m n mu Q) term pays for; its log-log slopes in n
(per Q), in Q (per n) and in nQ are fitted by least squares with 95% t intervals, beside the empirical study's slopes
(results/fednmap_speedup/slopes.csv, -0.997 in nQ). The committed nQ slope is -0.992 [-0.9947, -0.9896]: close to the
term's 1/(nQ), but its interval excludes -1, so the 1/(nQ) is not exact in K_var. The
correction state's noise kappa C_c does not shrink with n (kappa -> 1/Q): at a fixed C_c it takes over from n ~
K_var/(kappa C_c) on, which the table reports.

Run ``python -m fedbounds.checks.fednmap.spep.speedup --write`` to rewrite :data:`TARGET` (minutes; n up to 64).
``python -m fedbounds.checks.fednmap.pep.prove --grid speedup --write`` then proves each certified K exactly (its
``solves`` entry gets ``status: proved`` and a ``proof`` record, or the reason): 20 of the 24 at n <= 8 at the pass of
2026-12-02; above n = 8 none can be, by design (docs/provenance.md §7). A rewrite by this module drops those records.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from fedbounds.checks.fednmap.spep.constants import point_steps, round_noise, split

__all__ = ["CC_PAIR", "NS", "QS", "TARGET", "fit_slope", "main", "table"]

NS: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)
QS: tuple[int, ...] = (1, 2, 3)
CC_PAIR: tuple[float, float] = (1e-5, 1e-4)
C_0 = 1.0
TARGET = "theory/fednmap/spep_speedup.json"
#: stop growing n at a Q once one point's solves took this many CPU seconds
CPU_CAP = 120.0


def fit_slope(xs: list[float], ys: list[float]) -> dict[str, Any]:
    """Least-squares slope of log y on log x with its 95% t interval (None when fewer than 3 points)."""
    import numpy as np
    from scipy import stats

    lx, ly = np.log(np.asarray(xs, float)), np.log(np.asarray(ys, float))
    k = len(lx)
    if k < 2:
        return {"slope": None, "low": None, "high": None, "points": k}
    A = np.vstack([lx, np.ones_like(lx)]).T
    coef, *_ = np.linalg.lstsq(A, ly, rcond=None)
    if k < 3:
        return {"slope": float(coef[0]), "low": None, "high": None, "points": k}
    resid = ly - A @ coef
    s2 = float(resid @ resid) / (k - 2)
    se = math.sqrt(s2 / float(((lx - lx.mean()) ** 2).sum()))
    t = float(stats.t.ppf(0.975, k - 2))
    return {"slope": float(coef[0]), "low": float(coef[0] - t * se), "high": float(coef[0] + t * se), "points": k}


def table(write_partial: Path | None = None) -> dict[str, Any]:
    """Rows by n (outer) and Q (inner); a Q series stops after a point that is not certified or took more than
    :data:`CPU_CAP` CPU seconds. With ``write_partial``, the table so far is written there after every row."""
    rows: list[dict[str, Any]] = []
    stopped: set[int] = set()
    for n in NS:
        for Q in QS:
            if Q in stopped:
                continue
            t0 = time.process_time()
            rs = []
            for cc in CC_PAIR:
                cert = round_noise(n, Q, C_0, cc, symmetric=n > 1)
                rs.append({"C_c": cc, "K": cert.value if cert.certified else None, "status": cert.status,
                           "values": dict(cert.values), "gram_dim": cert.gram_dim,
                           "blocks": cert.runs[0].options.get("blocks") if n > 1 else None})
            k_var, kap, _ = split([r for r in rs if r["K"] is not None])
            cpu = time.process_time() - t0
            p = point_steps(n, Q)
            rows.append({"n": n, "Q": Q, "K_var": k_var, "kappa": kap, "solves": rs, "cpu_s": round(cpu, 2),
                         "K_var_gamma_nQ_over_eta_hat2": None if k_var is None else k_var * p["gamma"] * n * Q / p["eta_hat"] ** 2,
                         "takeover_C_c": None if not (k_var and kap) else k_var / kap})
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
            if cpu > CPU_CAP or k_var is None:
                stopped.add(Q)
            if write_partial is not None:
                _write(write_partial, _summary(rows))
    return _summary(rows)


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in rows if r["K_var"] is not None and r["K_var"] > 0]
    fits = []
    for Q in QS:
        pts = [r for r in ok if r["Q"] == Q]
        fits.append({"axis": "n", "series": f"Q={Q}", **fit_slope([r["n"] for r in pts], [r["K_var"] for r in pts])})
    for n in NS:
        pts = [r for r in ok if r["n"] == n]
        fits.append({"axis": "Q", "series": f"n={n}", **fit_slope([r["Q"] for r in pts], [r["K_var"] for r in pts])})
    fits.append({"axis": "nQ", "series": "all", **fit_slope([r["n"] * r["Q"] for r in ok], [r["K_var"] for r in ok])})
    return {"command": "python -m fedbounds.checks.fednmap.spep.speedup --write", "C_0": C_0, "C_c_pair": list(CC_PAIR),
            "point": {"L": 1.0, "rho": 0.1, "k": 16.0, "m": 1, "T": 1, "corrections": "free"},
            "rows": rows, "fits": fits, "empirical_nQ_slope": -0.9972412785391959,
            "empirical_source": "results/fednmap_speedup/slopes.csv (fednmap, nQ, all)"}


def _write(target: Path, data: dict[str, Any]) -> None:
    text = json.dumps(data, indent=1, sort_keys=True)
    from fedbounds.checks.runtime.install import write_atomic
    from fedbounds.theory.core.evidence import stamp_text

    write_atomic(target, stamp_text(text))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fedbounds.checks.fednmap.spep.speedup")
    ap.add_argument("--write", action="store_true", help=f"write {TARGET} (atomically)")
    args = ap.parse_args(argv)
    if not args.write:
        print(json.dumps(table(), indent=1, sort_keys=True))
        return 0
    from fedbounds.checks.runtime.install import evidence_path, refuse_unwritable

    target = evidence_path(TARGET)
    if refuse_unwritable(target):
        return 2
    _write(target, table(write_partial=target))
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
