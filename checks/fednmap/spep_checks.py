"""Theorem 8's noise constants against the stochastic PEP of one FedNMap round (issue 21, items 2 and 3).

At a parameter point (L = 1, rho = 0.1, mu = 0.1, steps k = 16 times Theorem 5's printed ones at m = 1, the scale of
the C_0 window study) :func:`round_noise` certifies the per-round noise coefficient K*(C_0, C_c) of
:mod:`fedbounds.checks.fednmap.spep` with d = eta_hat/9 and d_c = Theorem 8's exponent, and :func:`theorem8_comparison`
evaluates the sympy translation of :mod:`fedbounds.theory.fednmap.stochastic`: the certified floor K sigma^2/e8
against the printed floor at m = 1, and the room of each printed constant (36 and 12100).

Verdict scope: on the *reconstructed* Lyapunov shape, outside Theorem 5's printed steps (k = 16 times them; the SDPs at
k = 1 are too ill-conditioned), at one mu. ``holds``: certified, certified floor <= printed floor (m = 1);
``violated``: certified, above it (on this shape: evidence against the pair (C_0, C_c), not yet against the paper);
``no descent``: K* = +inf (the deterministic descent with eta_hat/9 fails at this (C_0, C_c)); ``unknown``: the solvers
could not decide (never counted as failing).

Run ``python -m fedbounds.checks.fednmap.spep_checks --write`` (about a minute on 2 loaded cores) to rewrite
:data:`TARGET`, the JSON evidence (no randomness).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from fedbounds.checks.core.pep import Certificate
from fedbounds.checks.fednmap.pep import theorem5_steps, theorem8_exponent
from fedbounds.checks.fednmap.spep import noise_coefficient

__all__ = ["C0_GRID", "CC_GRID", "POINTS", "TARGET", "grid", "main", "point_steps", "round_noise", "theorem8_comparison"]

L, RHO, MU, K = 1.0, 0.1, 0.1, 16.0
#: (n, Q) of the evidence grid (T = 1, free corrections)
POINTS: tuple[tuple[int, int], ...] = ((1, 1), (2, 1), (2, 2))
C0_GRID: tuple[float, ...] = (0.0, 0.5, 1.0, 2.0, 4.0)
CC_GRID: tuple[float, ...] = (1e-4, 1e-3, 1e-2, 1e-1, 1.0)
TARGET = "checks/fednmap/data/spep_grid.json"


def point_steps(n: int, Q: int, k: float = K) -> dict[str, float]:
    """gamma, eta_a, eta_s, eta_hat and d = eta_hat/9 at k times Theorem 5's printed steps (m = 1; theory layer)."""
    st = theorem5_steps(L, RHO, Q)
    eta_a = k * st["eta_a"]
    eta_hat = st["eta_s"] * eta_a * Q
    return {"gamma": st["gamma"], "eta_a": eta_a, "eta_s": st["eta_s"], "eta_hat": eta_hat,
            "d": k * st["descent_coef"], "n": n, "Q": Q}


def round_noise(n: int, Q: int, C_0: float, C_c: float, k: float = K, mu: float = MU, **kw: Any) -> Certificate:
    """K*(C_0, C_c) at the point (module docstring); ``kw`` goes to :func:`~fedbounds.checks.fednmap.spep.noise_coefficient`
    (``symmetric``, ``orthogonality``, ``scenario``, ``solvers``)."""
    p = point_steps(n, Q, k)
    d_c = theorem8_exponent(p["eta_hat"], mu, p["gamma"], C_0)
    return noise_coefficient(L, RHO, p["gamma"], p["eta_a"], p["eta_s"], n, Q, C_0, C_c, p["d"], d_c, **kw)


def theorem8_comparison(K_value: float | None, n: int, Q: int, C_0: float, k: float = K, mu: float = MU,
                        s_var: float = 1.0, s_drift: float = 1.0) -> dict[str, Any]:
    """The certified floor against Theorem 8's (m = 1) with its terms scaled by (s_var, s_drift), from the sympy of
    :mod:`fedbounds.theory.fednmap.stochastic`: ``floor_ratio``, ``room_36``, ``room_12100`` (inf: the other term
    alone covers it), ``allowance`` (K_8), ``verdict``."""
    from fedbounds.theory.core.evaluate import evaluate
    from fedbounds.theory.fednmap import stochastic as S

    p = point_steps(n, Q, k)
    v = {"L": L, "rho": RHO, "gamma": p["gamma"], "eta_hat": p["eta_hat"], "eta_a": p["eta_a"], "n": n, "Q": Q, "mu": mu,
         "C_0": C_0, "sigma2": 1.0, "s_var": s_var, "s_drift": s_drift}
    out: dict[str, Any] = {"allowance": evaluate(S.round_noise_allowance, v), "K": K_value}
    if K_value is None:
        return {**out, "verdict": "unknown", "floor_ratio": None, "room_36": None, "room_12100": None}
    if math.isinf(K_value):
        return {**out, "verdict": "no descent", "floor_ratio": math.inf, "room_36": 0.0, "room_12100": 0.0}
    v["K_sigma"] = K_value

    def room(expr: Any) -> float:
        r = evaluate(expr, v)
        return math.inf if r < 0 else r  # the other term alone covers the certified floor

    ratio = evaluate(S.floor_ratio, v)
    return {**out, "floor_ratio": ratio, "room_36": room(S.room_variance), "room_12100": room(S.room_drift),
            "verdict": "holds" if ratio <= 1.0 else "violated"}


def _row(n: int, Q: int, C_0: float, C_c: float) -> dict[str, Any]:
    cert = round_noise(n, Q, C_0, C_c)
    value = cert.value if (cert.certified or cert.unbounded) else None
    cmp = theorem8_comparison(value, n, Q, C_0)
    return {"n": n, "Q": Q, "C_0": C_0, "C_c": C_c, "status": cert.status, "values": dict(cert.values),
            "statuses": dict(cert.statuses), "gram_dim": cert.gram_dim, **cmp}


def grid() -> dict[str, Any]:
    """The evidence: K*(C_0, C_c) and the Theorem 8 comparison over :data:`C0_GRID` x :data:`CC_GRID` per point."""
    rows = [_row(n, Q, c0, cc) for n, Q in POINTS for c0 in C0_GRID for cc in CC_GRID]
    return {"generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "command": "python -m fedbounds.checks.fednmap.spep_checks --write",
            "point": {"L": L, "rho": RHO, "mu": MU, "k": K, "T": 1, "corrections": "free", "m": 1,
                      "d": "eta_hat/9", "d_c": "Theorem 8's exponent"},
            "steps": {f"{n},{Q}": point_steps(n, Q) for n, Q in POINTS},
            "rows": rows}


def _json_safe(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return "inf" if x > 0 else ("-inf" if x < 0 else "nan")
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_json_safe(v) for v in x]
    return x


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fedbounds.checks.fednmap.spep_checks", description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help=f"write {TARGET} (atomically) instead of printing")
    args = ap.parse_args(argv)
    text = json.dumps(_json_safe(grid()), indent=1, sort_keys=True)
    if not args.write:
        print(text)
        return 0
    target = Path(TARGET)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        fh.write(text + "\n")
    os.replace(tmp, target)
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
