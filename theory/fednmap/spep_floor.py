"""[D] Theorem 8's noise floor certified by the stochastic PEP at a user's point, beside the printed one (FedNMap,
arXiv 2602.03357, Theorem 8; docs/fednmap-reconstruction.md §10).

The committed evidence ``spep_grid.json`` (the sweep ``fednmap_spep_grid``, ``checks/specs/fednmap_spep_grid.toml``)
holds, per (n, Q, C_0, C_c) at L = 1, rho = 0.1, mu = 0.1, gamma = Theorem 5's largest and steps k = 16 times Theorem
5's printed ones at m = 1 (eta_s = 1), the two-solver certificate of the per-round noise coefficient K of

    E[L_1] <= L_0 - (eta_hat/9) ||F_nor(z_0)||^2 - e8 C_c corr_err_0 + K sigma^2,

from which (:mod:`fedbounds.theory.fednmap.stochastic`) E[psi(x_T)] - psi* <= (1 - e8)^T L_0 + K sigma^2/e8 under
proximal PL: the certified floor ``certified_floor`` = K sigma^2/e8, e8 = Theorem 8's exponent at the row's C_0.
Every certified row is a valid floor (each is a Lyapunov function with its own (C_0, C_c)); the answer is the smallest,
with the C_0 window in which the grid certifies a finite K.

Scale invariance: f_i -> a f_i, phi -> a phi with (L, rho, mu) -> a (L, rho, mu), (gamma, eta_a, eta_hat) -> /a, the
noise e -> a e. The iterates do not move, function values scale by a, gradients by a, so K (function value per
sigma^2) scales by 1/a and C_c (function value per squared gradient) by 1/a; C_0, e8 and floor/printed floor are
unchanged. A point is therefore covered when rho/L, mu/L, gamma L, (n, Q) and the steps eta_a L, eta_hat L are the
grid's (gamma L to :data:`REL_TOL`, the steps to :data:`STEP_TOL`: a step typed to 7 digits), with K = K_grid/L.
Nothing is interpolated or extrapolated: anything else is "not covered", with the nearest grid point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fedbounds.theory.core.evaluate import evaluate
from fedbounds.theory.fednmap import formulas as fm
from fedbounds.theory.fednmap import stochastic as S
from fedbounds.theory.fednmap.pep_evidence import EVIDENCE

__all__ = ["GRID_FILE", "REL_TOL", "STEP_TOL", "CertifiedFloor", "NotCovered", "certified_noise_floor", "load_grid"]

GRID_FILE = Path(__file__).with_name("spep_grid.json")
#: relative tolerance on rho/L, mu/L and gamma L (the grid's gamma is Theorem 5's largest, the calculator's default)
REL_TOL = 1e-9
#: relative tolerance on the steps eta_a L and eta_hat L (typed by the user)
STEP_TOL = 1e-6


def load_grid(path: Path | None = None) -> dict[str, Any]:
    """The committed evidence grid, checked (``{}``, recorded as damaged, when missing or damaged)."""
    from fedbounds.theory.core import evidence

    return evidence.load_or_record(GRID_FILE if path is None else path, {})


def _num(x: Any) -> float | None:
    if x is None:
        return None
    return float(x)  # "inf" included


@dataclass(frozen=True)
class NotCovered:
    """The point is not covered by the certified grid: ``reason`` (one line) and the ``nearest`` grid point."""

    reason: str
    nearest: dict[str, Any] = field(default_factory=dict)

    covered = False

    def to_dict(self) -> dict[str, Any]:
        return {"covered": False, "reason": self.reason, "nearest": dict(self.nearest)}


@dataclass(frozen=True)
class CertifiedFloor:
    """The certified floor at a covered point: the smallest over the grid's certified (C_0, C_c) at (n, Q).

    ``floor``: K sigma^2/e8 at the user's scale; ``printed``: Theorem 8's floor at the point's window m; ``printed_m1``:
    at m = 1 (the certificate's window, the comparison the evidence makes); ``ratio`` = floor/printed_m1; ``K``: the
    per-round coefficient at the user's scale (K_grid/L); ``C_0``, ``C_c``: the pair giving the floor (C_c at the
    user's scale, C_c_grid/L); ``C_0_window``: the grid's C_0 with a certified finite K; ``C_0_no_descent``: the C_0
    where the deterministic descent fails (K = inf); ``rows``: every certified row's floor."""

    n: int
    Q: int
    floor: float
    printed: float
    printed_m1: float
    ratio: float
    K: float
    C_0: float
    C_c: float
    C_0_window: tuple[float, ...]
    C_0_no_descent: tuple[float, ...]
    m: int
    grid_point: dict[str, float]
    rows: tuple[dict[str, float], ...]

    covered = True

    @property
    def scope(self) -> str:
        """Where the certificate holds, in one line."""
        win = f"{min(self.C_0_window):g}..{max(self.C_0_window):g}" if self.C_0_window else "-"
        nod = f" (no descent at C_0 = {', '.join(f'{c:g}' for c in self.C_0_no_descent)})" if self.C_0_no_descent else ""
        g = self.grid_point
        return (f"certified at n = {self.n}, Q = {self.Q}; rho/L = {g['rho']:g}, mu/L = {g['mu']:g}, steps {g['k']:g} x "
                f"Theorem 5's printed ones (m = 1); C_0 window {win} of the grid{nod}; one round from any correction "
                "state, on the reconstructed Lyapunov shape")

    def to_dict(self) -> dict[str, Any]:
        return {"covered": True, "n": self.n, "Q": self.Q, "certified_floor": self.floor, "printed_floor": self.printed,
                "printed_floor_m1": self.printed_m1, "ratio_to_printed_m1": self.ratio, "K": self.K, "C_0": self.C_0,
                "C_c": self.C_c, "C_0_window": list(self.C_0_window), "C_0_no_descent": list(self.C_0_no_descent),
                "m": self.m, "scope": self.scope, "grid_point": dict(self.grid_point), "rows": [dict(r) for r in self.rows]}


def _close(a: float, b: float, tol: float) -> bool:
    return math.isclose(a, b, rel_tol=tol, abs_tol=0.0)


def _nearest(steps: dict[str, dict[str, float]], n: int, Q: int, point: dict[str, Any]) -> dict[str, Any]:
    """The grid's (n, Q) nearest to the user's in log n + log Q, with its scale-free coordinates."""
    pairs = [tuple(int(x) for x in key.split(",")) for key in steps]
    a, b = min(pairs, key=lambda p: (abs(math.log(p[0] / n)) + abs(math.log(p[1] / Q)), p))
    s = steps[f"{a},{b}"]
    L = float(point["L"])
    return {"n": a, "Q": b, "rho_over_L": float(point["rho"]) / L, "mu_over_L": float(point["mu"]) / L,
            "gamma_L": s["gamma"] * L, "eta_a_L": s["eta_a"] * L, "eta_hat_L": s["eta_hat"] * L, "eta_s": s["eta_s"],
            "k": float(point["k"]), "m": int(point.get("m", 1))}


def _describe(p: dict[str, Any]) -> str:
    return (f"(n, Q) = ({p['n']}, {p['Q']}) at rho/L = {p['rho_over_L']:g}, mu/L = {p['mu_over_L']:g}, gamma L = "
            f"{p['gamma_L']:.10g}, eta_a L = {p['eta_a_L']:.10g}, eta_s = {p['eta_s']:g} ({p['k']:g} x Theorem 5's printed "
            f"steps, m = {p['m']})")


def certified_noise_floor(L: float, rho: float, mu: float, n: int, Q: int, gamma: float, eta_a: float, eta_hat: float,
                          sigma2: float, m: int = 1, C_0: float | None = None,
                          grid: dict[str, Any] | None = None) -> CertifiedFloor | NotCovered:
    """The certified noise floor at the point, or why the grid does not cover it (module docstring).

    ``C_0`` given: only that C_0's rows count (it must be a grid value); ``grid``: the evidence (default: the committed
    file, :func:`load_grid`)."""
    g = load_grid() if grid is None else grid
    steps, point, rows = g.get("steps") or {}, g.get("point") or {}, g.get("rows") or []
    if not steps or not rows:
        return NotCovered("no committed stochastic-PEP grid (fedbounds sweep fednmap_spep_grid, then python -m "
                          "fedbounds.checks.studies.spep_grid --write)")
    near = _nearest(steps, n, Q, point)
    gL = float(point["L"])

    def off(what: str) -> NotCovered:
        return NotCovered(f"{what}; not covered by the certified grid (nearest: {_describe(near)})", near)

    if not _close(rho / L, float(point["rho"]) / gL, REL_TOL):
        return off(f"rho/L = {rho / L:.6g} is not the grid's {near['rho_over_L']:g}")
    if not _close(mu / L, float(point["mu"]) / gL, REL_TOL):
        return off(f"mu/L = {mu / L:.6g} is not the grid's {near['mu_over_L']:g}")
    s = steps.get(f"{n},{Q}")
    if s is None:
        return off(f"(n, Q) = ({n}, {Q}) is not a grid pair")
    if not _close(gamma * L, s["gamma"] * gL, REL_TOL):
        return off(f"gamma L = {gamma * L:.10g} is not the grid's {s['gamma'] * gL:.10g} (Theorem 5's largest)")
    if not (_close(eta_a * L, s["eta_a"] * gL, STEP_TOL) and _close(eta_hat * L, s["eta_hat"] * gL, STEP_TOL)):
        return off(f"(eta_a L, eta_hat L) = ({eta_a * L:.10g}, {eta_hat * L:.10g}) are not the grid's "
                   f"({s['eta_a'] * gL:.10g}, {s['eta_hat'] * gL:.10g}) to {STEP_TOL:g}")
    mine = [r for r in rows if (r["n"], r["Q"]) == (n, Q)]
    if C_0 is not None:
        c0s = sorted({float(r["C_0"]) for r in mine})
        if not any(_close(C_0, c, REL_TOL) or C_0 == c for c in c0s):
            return off(f"C_0 = {C_0:g} is not a grid value (grid: C_0 in {{{', '.join(f'{c:g}' for c in c0s)}}})")
        mine = [r for r in mine if float(r["C_0"]) == C_0 or _close(C_0, float(r["C_0"]), REL_TOL)]
    finite = [r for r in mine if r["status"] in EVIDENCE and _num(r["K"]) is not None and math.isfinite(_num(r["K"]))]  # type: ignore[arg-type]
    no_descent = tuple(sorted({float(r["C_0"]) for r in mine if r["status"] == "unbounded"}))
    if not finite:
        return off(f"no certified finite K at (n, Q) = ({n}, {Q})" + (f", C_0 = {C_0:g}" if C_0 is not None else ""))
    base = {"L": L, "rho": rho, "mu": mu, "n": n, "Q": Q, "gamma": gamma, "eta_a": eta_a, "eta_hat": eta_hat, "sigma2": sigma2}
    out = []
    for r in finite:
        v = {**base, "C_0": float(r["C_0"]), "K_sigma": float(r["K"]) * gL / L}
        out.append({"C_0": float(r["C_0"]), "C_c": float(r["C_c"]) * gL / L, "K": v["K_sigma"],
                    "floor": evaluate(S.certified_floor, v)})
    best = min(out, key=lambda r: (r["floor"], r["C_0"], r["C_c"]))
    printed_m1 = evaluate(fm.theorem8_floor, {**base, "m": 1})
    return CertifiedFloor(
        n=n, Q=Q, floor=best["floor"], printed=evaluate(fm.theorem8_floor, {**base, "m": m}), printed_m1=printed_m1,
        ratio=evaluate(S.floor_ratio, {**base, "m": 1, "C_0": best["C_0"], "K_sigma": best["K"], "s_var": 1, "s_drift": 1}),
        K=best["K"], C_0=best["C_0"], C_c=best["C_c"], C_0_window=tuple(sorted({r["C_0"] for r in out})),
        C_0_no_descent=no_descent, m=m,
        grid_point={"rho": float(point["rho"]) / gL, "mu": float(point["mu"]) / gL, "k": float(point["k"]), "gamma": s["gamma"] * gL,
                    "eta_a": s["eta_a"] * gL, "eta_hat": s["eta_hat"] * gL, "eta_s": s["eta_s"]},
        rows=tuple(sorted(out, key=lambda r: (r["C_0"], r["C_c"]))))
