"""The C_0 window of FedNMap's reconstructed descent, and what the deterministic PEP does and does not identify.

The reconstructed Lyapunov function (docs/fednmap-reconstruction.md §4.2 [I]) has two lost weights, C_0 and C_c.
Its per-round descent L_{t+1} <= L_t - d ||F_nor(z_t)||^2 with d = eta_hat/9 is checked by measure (a) of
:mod:`fedbounds.checks.fednmap.pep.encoding` as the ratio w d T <= 1. Any single reading of that ratio ("eta_hat/9 is loose
by 7.3x") depends on the C_0 we chose; this module publishes it as a curve over C_0 instead, in the per-round form
that telescopes to every T: T = 1 from a *free* correction state (any c_i with sum_i c_i = 0, a superset of the
reachable ones), steps k times Theorem 5's printed ones.

* ``scan``: the ratio w d (and the certified coefficient d*(C_0) = eta_hat / (9 w d) as a multiple of eta_hat) at
  each C_0 of :data:`C0_SCAN`, per (n, Q), C_c = 1.
* ``window``: both ends of the set of C_0 where the descent with eta_hat/9 holds (three-valued probes,
  :mod:`fedbounds.checks.verdicts.threshold`: an undecided probe is reported, never counted as failing): the lower end
  by :func:`~fedbounds.checks.verdicts.threshold.smallest_meeting` on a geometric grid, the upper end by
  :func:`~fedbounds.checks.verdicts.threshold.largest_meeting` from C_0 = 1.
* ``C_c``: the ratio at C_0 = 1 for C_c over :data:`C_C_SCAN`. At sigma = 0 the worst case does not move with C_c
  (measured, below): the deterministic PEP does not identify C_c.
* ``stability``: the largest certified step of the committed ``STEPS`` table as eta_hat*/gamma, against the
  stability limit 2 gamma of the frozen shift v_t = (z_t - x_t)/gamma: on f = 0 and phi = (a/2)||x||^2, v_t = F_nor(z_t)
  = a z_t/(1 + gamma a) and a round maps z to (1 - eta_hat a/(1 + gamma a)) z, whose factor tends to 1 - eta_hat/gamma
  as a grows, so ||F_nor|| grows from round to round once eta_hat > 2 gamma.

* ``steps``: the largest certified step re-searched with both ends of its window (:data:`STEP_POINTS`).
* ``exponent``: measure (b)'s certified exponent over Theorem 8's at several C_0 (:data:`EXPONENT_POINTS`).
* ``recheck``: the committed ``SMALLEST_C0`` points that break monotonicity in n, recomputed (:data:`RECHECK`).

Run ``python -m fedbounds.checks.fednmap.pep.window --write`` (about 30 minutes on 2 loaded cores; ``--only`` one
table) to rewrite
:data:`TARGET`, the JSON evidence that :mod:`fedbounds.theory.fednmap.recovered` and the claims cite; without
``--write`` it prints the JSON. Everything is deterministic (no randomness).

Exact certificates (docs/provenance.md §7): ``python -m fedbounds.checks.fednmap.pep.prove --grid window --write``
(:func:`fedbounds.checks.fednmap.pep.prove.window_target`) rebuilds each certified row of ``scan``, ``C_c``,
``recheck``, ``exponent`` and ``steps`` with this module's builders and proves it exactly: the row becomes ``proved``
with a ``proof`` record (file, exact bound, delta), or stays ``certified`` with the reason. At the pass of 2026-12-02:
45 of 47 (scan 26 of 27, C_c 7 of 7, recheck 4 of 4, exponent 6 of 7, steps 2 of 2; docs/provenance.md §7). A rewrite
by this module drops those records (``certified`` again): run the prove pass after it.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
from typing import Any

from fedbounds.checks.fednmap.pep.encoding import descent_check, theorem5_steps
from fedbounds.checks.pep.solve import DEFAULT_REL_TOL, DEFAULT_SOLVERS, Certificate
from fedbounds.checks.verdicts.threshold import FAILS, MEETS, UNKNOWN, largest_meeting, smallest_meeting

__all__ = ["C0_SCAN", "C_C_SCAN", "POINTS", "TARGET", "c0_window", "main", "ratio_at", "scan_row"]

L, RHO, K = 1.0, 0.1, 16.0
#: (n, Q) of the scan, T = 1, free corrections, steps K x Theorem 5's printed ones
POINTS: tuple[tuple[int, int], ...] = ((1, 1), (2, 1), (2, 2))
#: C_0 values of the published curve
C0_SCAN: tuple[float, ...] = (0.0, 0.0625, 0.125, 0.25, 0.5, 1.0, 2.0, 3.0, 4.0, 4.25, 4.5, 5.0, 5.5, 6.0, 8.0)
#: C_c values at C_0 = 1 (the deterministic PEP's C_c dependence)
C_C_SCAN: tuple[float, ...] = (0.01, 0.1, 1.0, 10.0)
#: the window's resolution (relative)
WINDOW_TOL = 0.01
TARGET = "theory/fednmap/pep_c0_window.json"


def _cert(n: int, Q: int, C_0: float, C_c: float = 1.0, k: float = K, rho: float = RHO) -> Certificate:
    st = theorem5_steps(L, rho, Q)
    return descent_check(L, rho, st["gamma"], k * st["eta_a"], st["eta_s"], n, Q, 1, C_0, C_c, k * st["descent_coef"],
                         initial_correction="free")


def ratio_at(n: int, Q: int, C_0: float, C_c: float = 1.0) -> Certificate:
    """The two-solver certificate of the per-round ratio w d (T = 1, free corrections) at (n, Q, C_0, C_c)."""
    return _cert(n, Q, C_0, C_c)


def _entry(cert: Certificate) -> dict[str, Any]:
    """A certificate as JSON: ``ratio`` is the certified value, None otherwise (``status`` says unbounded or not)."""
    return {"status": cert.status, "ratio": cert.value if cert.certified else None,
            "values": dict(cert.values), "statuses": dict(cert.statuses), "gram_dim": cert.gram_dim}


def scan_row(n: int, Q: int, C_0: float, C_c: float = 1.0) -> dict[str, Any]:
    """One point of the curve: ratio w d, and d*(C_0)/eta_hat = 1/(9 w d) (the certified descent coefficient)."""
    e = _entry(ratio_at(n, Q, C_0, C_c))
    r = e["ratio"]
    e["d_star_over_eta_hat"] = 0.0 if e["status"] == "unbounded" else (None if r is None else 1.0 / (9.0 * r))
    return {"n": n, "Q": Q, "C_0": C_0, "C_c": C_c, **e}


def _outcome(cert: Certificate) -> str:
    if cert.unbounded:
        return FAILS
    if cert.certified:
        return MEETS if cert.value <= 1.0 else FAILS
    return UNKNOWN


def c0_window(n: int, Q: int, C_c: float = 1.0, tol: float = WINDOW_TOL) -> dict[str, Any]:
    """Both ends of the C_0 window where the descent with eta_hat/9 is certified (two solvers per probe).

    ``lower``: the smallest meeting C_0 lies in (lower.low, lower.high]; ``upper``: the largest lies in
    [upper.low, upper.high). Undecided probes are listed per end.
    """
    probe = lambda c0: _outcome(ratio_at(n, Q, c0, C_c))  # noqa: E731
    grid = [0.0] + [2.0 ** (j / 2) / 64 for j in range(0, 13)]  # 0, 1/64 .. 1 by sqrt 2
    lower = smallest_meeting(probe, grid, rel_tol=tol)
    upper = largest_meeting(probe, 1.0, 64.0, factor=2.0, rel_tol=tol)
    return {"n": n, "Q": Q, "C_c": C_c, "lower": lower.to_dict(), "upper": upper.to_dict()}


def stability() -> list[dict[str, Any]]:
    """The committed STEPS rows as eta_hat* / gamma (the frozen shift's stability limit is eta_hat = 2 gamma)."""
    from fedbounds.theory.fednmap import pep_evidence as ev

    out = []
    for r in ev.STEPS:
        if not ev.is_evidence(r) or r.get("k") is None:
            continue
        hi = r.get("k_high")
        out.append({"rho": r["rho"], "n": r["n"], "Q": r["Q"], "T": r["T"], "gamma": r["gamma"], "k": r["k"],
                    "k_high": hi, "eta_hat_over_gamma": r["k"] * r["eta_hat_printed"] / r["gamma"],
                    "eta_hat_over_gamma_high": None if hi is None else hi * r["eta_hat_printed"] / r["gamma"]})
    return out


#: (rho, Q, T, k, C_c) of the committed SMALLEST_C0 table where n = 2's smallest C_0 is below n = 1's, which cannot
#: be (n = 2 contains every n = 1 instance): recomputed with the three-valued search, both n
RECHECK: tuple[tuple[float, int, int, float, float], ...] = ((0.1, 2, 2, 16.0, 1.0), (0.1, 1, 2, 1.0, 0.1))


def recheck_rows() -> list[dict[str, Any]]:
    """The :data:`RECHECK` points by :func:`fedbounds.checks.fednmap.pep.encoding.smallest_constants` (the grid's own settings:
    zero corrections, C_0 from 1/64 by sqrt 2, tolerance 2%), n = 1 and 2: the window (C_0_low, C_0]."""
    from fedbounds.checks.fednmap.pep.encoding import smallest_constants

    rows = []
    for rho, Q, T, k, C_c in RECHECK:
        st = theorem5_steps(L, rho, Q)
        for n in (1, 2):
            (r,) = smallest_constants(L, rho, st["gamma"], k * st["eta_a"], st["eta_s"], n, Q, T, k * st["descent_coef"],
                                      (C_c,), C_0_min=1.0 / 64)
            rows.append({"rho": rho, "n": n, "Q": Q, "T": T, "k": k, "C_c": C_c, "C_0_low": r.C_0_low, "C_0": r.C_0,
                         "unknown": list(r.unknown), "solves": r.solves,
                         "status": "none" if r.certificate is None else r.certificate.status, "ratio": r.ratio})
    return rows


#: measure (b) (one-round contraction under the proximal-PL relaxation) over C_0: (n, Q, mu) and the C_0 values
EXPONENT_POINTS: tuple[tuple[int, int, float], ...] = ((2, 1, 0.1), (2, 2, 0.5))
EXPONENT_C0: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0)


def exponent_rows() -> list[dict[str, Any]]:
    """Certified exponent 1 - q over Theorem 8's 2 eta_hat mu/(9 (1 + gamma mu C_0)) at each C_0 (C_c = 1, k = 16,
    free corrections): the "x7.4" of the earlier text is this ratio at C_0 = 1, one point of a curve."""
    from fedbounds.checks.fednmap.pep.encoding import pl_contraction_pep, theorem8_exponent

    rows = []
    for n, Q, mu in EXPONENT_POINTS:
        st = theorem5_steps(L, RHO, Q)
        for C_0 in EXPONENT_C0:
            cert = pl_contraction_pep(L, RHO, st["gamma"], K * st["eta_a"], st["eta_s"], n, Q, mu, C_0, 1.0)
            e8 = theorem8_exponent(K * st["eta_hat"], mu, st["gamma"], C_0)
            cexp = -cert.value if cert.certified else None
            rows.append({"n": n, "Q": Q, "mu": mu, "C_0": C_0, "C_c": 1.0, "status": cert.status, "exponent_certified": cexp,
                         "exponent_theorem8": e8, "ratio": None if cexp is None else cexp / e8})
    return rows


#: (rho, n, Q, T) at which the largest certified step is re-searched with both ends recorded (1% resolution)
STEP_POINTS: tuple[tuple[float, int, int, int], ...] = ((0.1, 1, 1, 1), (0.5, 1, 1, 1))


def step_window_rows() -> list[dict[str, Any]]:
    """:func:`fedbounds.checks.fednmap.pep.encoding.largest_certified_step` (the STEPS table's constants, k from 16 by doubling)
    with its window [k, k_high) and eta_hat/gamma at both ends."""
    from fedbounds.checks.fednmap.pep.encoding import largest_certified_step
    from fedbounds.checks.fednmap.pep.grid import STEP_CONSTANTS

    rows = []
    for rho, n, Q, T in STEP_POINTS:
        st = theorem5_steps(L, rho, Q)
        r = largest_certified_step(L, rho, st["gamma"], st["eta_a"], st["eta_s"], n, Q, T, st["descent_coef"],
                                   sorted({c for c, _ in STEP_CONSTANTS}), sorted({c for _, c in STEP_CONSTANTS}),
                                   k_start=16.0, k_max=4096.0, tol=0.01)
        g = st["eta_hat"] / st["gamma"]
        rows.append({"rho": rho, "n": n, "Q": Q, "T": T, "k": r.k, "k_high": r.k_high, "unknown": list(r.unknown),
                     "eta_hat_over_gamma": None if r.k is None else r.k * g,
                     "eta_hat_over_gamma_high": None if r.k_high is None else r.k_high * g,
                     "status": "none" if r.certificate is None else r.certificate.status, "C_0": r.C_0, "C_c": r.C_c})
    return rows


TABLES = ("scan", "windows", "C_c", "stability", "recheck", "exponent", "steps")


def compute(which: tuple[str, ...] = TABLES, old: dict[str, Any] | None = None) -> dict[str, Any]:
    """The tables of the evidence file: those in ``which`` recomputed, the others kept from ``old``."""
    old = old or {}
    fns = {"scan": lambda: [scan_row(n, Q, c0) for n, Q in POINTS for c0 in C0_SCAN],
           "windows": lambda: [c0_window(n, Q) for n, Q in POINTS],
           "C_c": lambda: [scan_row(n, Q, 1.0, cc) for n, Q in POINTS if n > 1 for cc in C_C_SCAN],
           "stability": stability, "recheck": recheck_rows, "exponent": exponent_rows,
           "steps": step_window_rows}
    tables = {name: (fns[name]() if name in which else old.get(name, [])) for name in TABLES}
    return {
        "meta": {"command": "python -m fedbounds.checks.fednmap.pep.window --write",
                 "generated": _dt.date.today().isoformat(), "solvers": list(DEFAULT_SOLVERS), "rel_tol": DEFAULT_REL_TOL,
                 "L": L, "rho": RHO, "k": K, "T": 1, "initial_correction": "free",
                 "steps": "gamma = Theorem 5's largest, eta_a = k x its printed maximum, eta_s printed",
                 "window_tol": WINDOW_TOL},
        **tables,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fedbounds.checks.fednmap.pep.window", description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help=f"rewrite {TARGET} (else print it)")
    parser.add_argument("--only", choices=TABLES, action="append", help="recompute only these tables (repeatable)")
    args = parser.parse_args(argv)
    from fedbounds.checks.runtime.install import evidence_path, refuse_unwritable, write_evidence

    target = evidence_path(TARGET)
    if args.write and refuse_unwritable(target):
        return 2
    old = json.loads(target.read_text()) if target.exists() else {}
    text = json.dumps(compute(tuple(args.only or TABLES), old), indent=1, allow_nan=False) + "\n"
    if args.write:
        return write_evidence(target, text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
