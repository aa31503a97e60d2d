"""Theorem 8's noise constants against the stochastic PEP of one FedNMap round (docs/fednmap-reconstruction.md §10).

At a parameter point (L = 1, rho = 0.1, mu = 0.1, steps k = 16 times Theorem 5's printed ones at m = 1, the scale of
the C_0 window study) :func:`round_noise` certifies the per-round noise coefficient K*(C_0, C_c) of
:mod:`fedbounds.checks.fednmap.spep.encoding` with d = eta_hat/9 and d_c = Theorem 8's exponent, and :func:`theorem8_comparison`
evaluates the sympy translation of :mod:`fedbounds.theory.fednmap.stochastic`: the certified floor K sigma^2/e8
against the printed floor at m = 1, and the room of each printed constant (36 and 12100).

Verdict scope: on the *reconstructed* Lyapunov shape, outside Theorem 5's printed steps (k = 16 times them; the SDPs at
k = 1 are too ill-conditioned), at one mu. ``holds``: certified, certified floor <= printed floor (m = 1);
``violated``: certified, above it (on this shape: evidence against the pair (C_0, C_c), not yet against the paper);
``no descent``: K* = +inf (the deterministic descent with eta_hat/9 fails at this (C_0, C_c)); ``unknown``: the solvers
could not decide (never counted as failing).

The committed evidence :data:`TARGET` is the sweep ``checks/specs/fednmap_spep_grid.toml`` (``fedbounds sweep
fednmap_spep_grid``, then ``python -m fedbounds.checks.studies.spep_grid --write``), graded by :func:`grade`. Run as a
module, this file prints a fresh solve of the original 90-point grid, or ``--regrade`` the committed rows; it writes
nothing, so the committed file is always the sweep's.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import sys
from pathlib import Path
from typing import Any

from fedbounds.checks.fednmap.pep.encoding import theorem5_steps, theorem8_exponent
from fedbounds.checks.fednmap.spep.encoding import noise_coefficient
from fedbounds.checks.pep.solve import Certificate
from fedbounds.checks.runtime.jsonsafe import json_safe
from fedbounds.theory.fednmap.pep_evidence import EVIDENCE

__all__ = ["C0_GRID", "CC_GRID", "POINTS", "TARGET", "grid", "main", "point_steps", "round_noise", "split", "theorem8_comparison"]

L, RHO, MU, K = 1.0, 0.1, 0.1, 16.0
#: (n, Q) of the evidence grid (T = 1, free corrections)
POINTS: tuple[tuple[int, int], ...] = ((1, 1), (2, 1), (2, 2))
C0_GRID: tuple[float, ...] = (0.0, 0.5, 1.0, 2.0, 4.0)
CC_GRID: tuple[float, ...] = (1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0)
TARGET = "theory/fednmap/spep_grid.json"


def point_steps(n: int, Q: int, k: float = K) -> dict[str, float]:
    """gamma, eta_a, eta_s, eta_hat and d = eta_hat/9 at k times Theorem 5's printed steps (m = 1; theory layer)."""
    st = theorem5_steps(L, RHO, Q)
    eta_a = k * st["eta_a"]
    eta_hat = st["eta_s"] * eta_a * Q
    return {"gamma": st["gamma"], "eta_a": eta_a, "eta_s": st["eta_s"], "eta_hat": eta_hat,
            "d": k * st["descent_coef"], "n": n, "Q": Q}


def round_noise(n: int, Q: int, C_0: float, C_c: float, k: float = K, mu: float = MU, **kw: Any) -> Certificate:
    """K*(C_0, C_c) at the point (module docstring); ``kw`` goes to :func:`~fedbounds.checks.fednmap.spep.encoding.noise_coefficient`
    (``symmetric``, ``orthogonality``, ``scenario``, ``solvers``)."""
    p = point_steps(n, Q, k)
    d_c = theorem8_exponent(p["eta_hat"], mu, p["gamma"], C_0)
    return noise_coefficient(L, RHO, p["gamma"], p["eta_a"], p["eta_s"], n, Q, C_0, C_c, p["d"], d_c, **kw)


def theorem8_comparison(K_value: float | None, n: int, Q: int, C_0: float, C_c: float, K_var: float | None = None,
                        kappa: float | None = None, k: float = K, mu: float = MU, s_var: float = 1.0,
                        s_drift: float = 1.0) -> dict[str, Any]:
    """The certified floor against Theorem 8's (m = 1) with its terms scaled by (s_var, s_drift), from the sympy of
    :mod:`fedbounds.theory.fednmap.stochastic`: ``floor_ratio`` and ``verdict`` (the floor), ``allowance`` (K_8),
    and, given the split K = K_var + kappa C_c, ``room_36`` and ``room_12100`` with their own verdicts."""
    from fedbounds.theory.core.evaluate import evaluate
    from fedbounds.theory.fednmap import stochastic as S

    p = point_steps(n, Q, k)
    v = {"L": L, "rho": RHO, "gamma": p["gamma"], "eta_hat": p["eta_hat"], "eta_a": p["eta_a"], "n": n, "Q": Q, "mu": mu,
         "C_0": C_0, "C_c": C_c, "sigma2": 1.0, "s_var": s_var, "s_drift": s_drift}
    out: dict[str, Any] = {"allowance": evaluate(S.round_noise_allowance, v), "K": K_value}
    if K_var is not None and kappa is not None and K_var > 0 and kappa >= 0:
        r36 = evaluate(S.room_variance, {**v, "K_var": K_var})
        r121 = evaluate(S.room_drift, {**v, "kappa": kappa}) if kappa > 0 else math.inf  # n = 1: no correction noise
        out.update(room_36=r36, room_12100=r121, verdict_36=_side(r36), verdict_12100=_side(r121))
    if K_value is None:
        return {**out, "verdict": "unknown", "floor_ratio": None}
    if math.isinf(K_value):
        return {**out, "verdict": "no descent", "floor_ratio": math.inf}
    ratio = evaluate(S.floor_ratio, {**v, "K_sigma": K_value})
    return {**out, "floor_ratio": ratio, "verdict": "holds" if ratio <= 1.0 else "violated"}


def _side(room: float) -> str:
    return "holds" if room >= 1.0 else "violated"


def split(rows: list[dict[str, Any]]) -> tuple[float | None, float | None, float | None]:
    """K = K_var + kappa C_c from the certified rows of one (n, Q, C_0): the line through the first two consecutive C_c
    (increasing) on which K increases. Below them K may *rise* as C_c -> 0 (measured at Q = 2, C_0 >= 2: the correction
    state is then too cheap for the deterministic descent, the lower end of the C_c window), which is not noise.
    Returns (K_var, kappa, the largest relative deviation of the later certified rows from that line: how linear K is
    in C_c); kappa below 1e-9 K is 0 (n = 1: no correction state)."""
    pts = sorted((float(r["C_c"]), float(r["K"])) for r in rows if r["status"] in EVIDENCE)
    j = next((i for i in range(len(pts) - 1) if pts[i + 1][1] >= pts[i][1]), None)
    if j is None:
        return None, None, None
    (c1, k1), (c2, k2) = pts[j], pts[j + 1]
    kap = (k2 - k1) / (c2 - c1)
    k_var = k1 - kap * c1
    if abs(kap) < 1e-9 * max(k1, k2):
        kap = 0.0
    resid = max((abs(k_var + kap * c - k) / k for c, k in pts[j + 2:]), default=0.0)
    return k_var, kap, resid


def _row(n: int, Q: int, C_0: float, C_c: float) -> dict[str, Any]:
    cert = round_noise(n, Q, C_0, C_c)
    value = cert.value if (cert.certified or cert.unbounded) else None
    print(f"n={n} Q={Q} C_0={C_0:g} C_c={C_c:g}: {cert.summary()}", file=sys.stderr, flush=True)
    return {"n": n, "Q": Q, "C_0": C_0, "C_c": C_c, "status": cert.status, "K": value, "values": dict(cert.values),
            "statuses": dict(cert.statuses), "gram_dim": cert.gram_dim}


def grid() -> dict[str, Any]:
    """The evidence: K*(C_0, C_c) and the Theorem 8 comparison over :data:`C0_GRID` x :data:`CC_GRID` per point,
    the split K = K_var + kappa C_c per (n, Q, C_0), and per (n, Q) the pair with the most room for both constants."""
    rows = [_row(n, Q, c0, cc) for n, Q in POINTS for c0 in C0_GRID for cc in CC_GRID]
    return grade(rows)


def grade(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Splits, comparisons and the best pair from solved rows (``--regrade`` reruns this on the committed rows)."""
    splits, best, out = [], [], []
    for n, Q in sorted({(r["n"], r["Q"]) for r in rows}):
        cands = []
        for c0 in sorted({r["C_0"] for r in rows if (r["n"], r["Q"]) == (n, Q)}):
            rs = [dict(r) for r in rows if (r["n"], r["Q"], r["C_0"]) == (n, Q, c0)]
            for r in rs:
                r["K"] = _num(r["K"])
            k_var, kap, resid = split(rs)
            p = point_steps(n, Q)
            splits.append({"n": n, "Q": Q, "C_0": c0, "K_var": k_var, "kappa": kap, "max_rel_residual": resid,
                           "K_var_gamma_nQ_over_eta_hat2": None if k_var is None else
                           k_var * p["gamma"] * n * Q / p["eta_hat"] ** 2})
            for r in rs:
                r.update(theorem8_comparison(r["K"], n, Q, c0, r["C_c"], k_var, kap))
                out.append(r)
                if r.get("verdict") == "holds" and "room_36" in r:
                    cands.append((min(r["room_36"], r["room_12100"]), r))
        if cands:
            m_room, r = max(cands, key=lambda t: t[0])
            best.append({"n": n, "Q": Q, "C_0": r["C_0"], "C_c": r["C_c"], "min_room": m_room, "room_36": r["room_36"],
                         "room_12100": r["room_12100"], "floor_ratio": r["floor_ratio"]})
    return {"generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "command": "fedbounds sweep fednmap_spep_grid && python -m fedbounds.checks.studies.spep_grid --write",
            "point": {"L": L, "rho": RHO, "mu": MU, "k": K, "T": 1, "corrections": "free", "m": 1,
                      "d": "eta_hat/9", "d_c": "Theorem 8's exponent"},
            "steps": {f"{n},{Q}": point_steps(n, Q) for n, Q in sorted({(r["n"], r["Q"]) for r in rows})},
            "rows": out, "splits": splits, "best": best}


def _num(x: Any) -> float | None:
    if isinstance(x, str):
        return float(x)
    return None if x is None else float(x)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fedbounds.checks.fednmap.spep.constants", description=__doc__.splitlines()[0])
    ap.add_argument("--regrade", action="store_true", help=f"recompute splits and verdicts from the rows of {TARGET} (no solve)")
    ap.add_argument("--write", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.write:
        print(f"error: {TARGET} is written by its sweep: fedbounds sweep fednmap_spep_grid, then "
              "python -m fedbounds.checks.studies.spep_grid --write", file=sys.stderr)
        return 2
    data = grade(json.loads(Path(TARGET).read_text())["rows"]) if args.regrade else grid()
    print(json.dumps(json_safe(data), indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
