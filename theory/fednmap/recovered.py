"""FedNMap's Lyapunov constants and step factors recovered by performance estimation (docs/fednmap-reconstruction.md §10).

The paper's copy lost C_0 and C_c of its Lyapunov function L_t and the explicit form of Theorem 5. For deterministic
rounds the worst case over the *whole* assumption class (every L-smooth f_i, every rho-weakly convex phi) is a small
semidefinite program, a performance estimation problem (PEP). The grid of such certificates is computed by
``python -m fedbounds.checks.fednmap.pep_grid --write`` and committed as :mod:`fedbounds.theory.fednmap.pep_evidence`;
this module turns it into two claims:

* ``fednmap.pep.lyapunov_constants`` (*reconstructed*): with (C_0, C_c) = (1, 1), the reconstructed per-round
  descent L_{t+1} <= L_t - (eta_hat/9)||F_nor(z_t)||^2 holds over the class, in its T-round form
  L_0 - L_T >= (eta_hat/9) T min_t ||F_nor(z_t)||^2 from zero corrections, at every certified grid point.
* ``fednmap.pep.largest_step`` (*remark* on Theorem 5's conditions): the largest multiple k of the printed
  (eta_hat, eta_a) at which some (C_0, C_c) still certifies that descent.

The evidence strings are built from the committed rows, so they always state what the data says. Only rows whose
two-solver certificate is ``certified`` count; the others are listed as not certified.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from fedbounds.theory.fednmap import pep_evidence as ev

__all__ = ["certified", "descent_summary", "largest_step_summary", "not_certified", "smallest_c0_summary"]


def certified(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows whose certificate is ``certified`` (both solvers optimal and agreeing)."""
    return [r for r in rows if r.get("status") == "certified" and r.get("value") is not None]


def not_certified(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows that are not evidence (inconclusive, unbounded, or no point found)."""
    return [r for r in rows if r not in certified(rows)]


def _point(r: dict[str, Any]) -> str:
    k = f", k={r['k']:g}" if "k" in r and r["k"] is not None and "eta_hat_printed" not in r else ""
    return f"(n={r['n']}, Q={r['Q']}, T={r['T']}{k})"


def _max_gap(rows: Sequence[dict[str, Any]]) -> float:
    gaps = [abs(g) for r in rows for g in (r.get("gaps") or {}).values() if g is not None]
    return max(gaps, default=math.nan)


def descent_summary() -> dict[str, Any]:
    """Figures of the DESCENT table: certified count, worst ratio w d T (<= 1 is the descent), its point, gaps."""
    ok = certified(ev.DESCENT)
    worst = max(ok, key=lambda r: r["value"], default=None)
    return {
        "total": len(ev.DESCENT),
        "certified": len(ok),
        "worst_ratio": None if worst is None else worst["value"],
        "worst_point": None if worst is None else _point(worst),
        "max_abs_gap": _max_gap(ok),
        "gram_dims": sorted({r["gram_dim"] for r in ok}),
        "not_certified": [f"{_point(r)}: {r['status']}" for r in not_certified(ev.DESCENT)],
    }


def smallest_c0_summary() -> dict[float, tuple[float, float] | None]:
    """Per C_c: the range (min, max) over certified grid points of the smallest certified C_0."""
    out: dict[float, tuple[float, float] | None] = {}
    for C_c in sorted({r["C_c"] for r in ev.SMALLEST_C0}):
        vals = [r["C_0"] for r in certified(ev.SMALLEST_C0) if r["C_c"] == C_c and r["C_0"] is not None]
        out[C_c] = (min(vals), max(vals)) if vals else None
    return out


def largest_step_summary() -> dict[str, Any]:
    """Figures of the STEPS table: the certified multipliers k of the printed steps, their range, the rest."""
    ok = [r for r in certified(ev.STEPS) if r.get("k") is not None]
    ks = [r["k"] for r in ok]
    return {
        "total": len(ev.STEPS),
        "certified": len(ok),
        "k_min": min(ks, default=None),
        "k_max": max(ks, default=None),
        "rows": [f"rho={r['rho']:g} {_point(r)}: k={r['k']:.4g} (C_0={r['C_0']:g}, C_c={r['C_c']:g})" for r in ok],
        "not_certified": [f"rho={r['rho']:g} {_point(r)}: {r['status']}" for r in not_certified(ev.STEPS)],
    }


def _solvers() -> str:
    meta = ev.META or {}
    versions = meta.get("versions", {})
    return ", ".join(f"{s} ({versions.get(s.lower(), '?')})" for s in meta.get("solvers", ())) or "none recorded"


def lyapunov_constants_evidence() -> str:
    """The evidence sentence of ``fednmap.pep.lyapunov_constants``, from the committed grid."""
    d = descent_summary()
    c0 = smallest_c0_summary()
    parts = [
        f"numeric: PEP certificates (two solvers, {_solvers()}, agreement rel. tol. {ev.META.get('rel_tol', '?')}): the worst "
        f"ratio w (eta_hat/9) T over the class is <= 1 at {d['certified']} of {d['total']} grid points (L = 1, rho in "
        f"{_values(ev.DESCENT, 'rho')}, (n, Q, T) in {_values(ev.DESCENT, 'n', 'Q', 'T')}, gamma and eta_s at Theorem 5's "
        f"values, eta_a = k x its printed maximum, k in {_values(ev.DESCENT, 'k')}); worst ratio "
        f"{_fmt(d['worst_ratio'])} at {d['worst_point']}, so the certified descent coefficient is at least "
        f"eta_hat/{_fmt(9 * d['worst_ratio']) if d['worst_ratio'] else '?'}; max |duality gap| {_fmt(d['max_abs_gap'])}; "
        f"Gram dimensions {d['gram_dims']}.",
        "Not certified (solver inaccurate at the printed steps, not a counterexample): "
        + ("; ".join(d["not_certified"]) or "none") + ".",
        "Smallest certified C_0 per C_c over the grid (min..max): "
        + "; ".join(f"C_c={k:g}: " + ("none" if v is None else f"{v[0]:.3g}..{v[1]:.3g}") for k, v in c0.items()) + ".",
        "C_0 = 0 (psi alone) gives an unbounded worst case, so psi is not a Lyapunov function of FedNMap (the negative "
        "control of fedbounds check --claim fednmap.pep, recomputed at every run).",
        f"Reproduce: {ev.META.get('command', 'python -m fedbounds.checks.fednmap.pep_grid --write')} "
        f"(generated {ev.META.get('generated', '?')}); check: fedbounds check --claim fednmap.pep.",
    ]
    return " ".join(parts)


def largest_step_evidence() -> str:
    """The evidence sentence of ``fednmap.pep.largest_step``, from the committed grid."""
    s = largest_step_summary()
    return (
        f"numeric: largest multiple k of Theorem 5's printed (eta_hat, eta_a) at which the PEP certifies the descent "
        f"(doubling from k = 16, then bisection to 5%; (C_0, C_c) in {ev.META.get('step_constants')}; solvers "
        f"{_solvers()}): certified at {s['certified']} of {s['total']} points, k from {_fmt(s['k_min'])} to "
        f"{_fmt(s['k_max'])}. " + "; ".join(s["rows"]) + ". Not certified: " + ("; ".join(s["not_certified"]) or "none")
        + f". Reproduce: {ev.META.get('command', 'python -m fedbounds.checks.fednmap.pep_grid --write')}."
    )


def _values(rows: Sequence[dict[str, Any]], *keys: str) -> str:
    vals = sorted({tuple(r[k] for k in keys) for r in rows})
    return ", ".join(f"{v[0]:g}" if len(v) == 1 else "(" + ", ".join(f"{x:g}" for x in v) + ")" for v in vals)


def _fmt(v: float | None) -> str:
    return "?" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.4g}"
