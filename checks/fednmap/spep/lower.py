"""A lower bound on FedNMap's noise floor: the part that does not fall with n, on one instance, through the engine.

Theorem 8 (FedNMap, arXiv 2602.03357) bounds E psi(x_T) - psi* by a contraction plus 36 sigma^2/(m n mu Q) plus
12100 eta_a^2 Q L^2 sigma^2/(mu (1 - gamma rho)^2); the last term does not fall with n. The proved floors of
docs/fednmap-reconstruction.md §10.10 fall slightly slower than 1/n at Q >= 2. This module asks whether an instance
of the class (f L-smooth, mu-PL; noise unbiased with variance sigma^2, Assumption 2) shows an n-independent error.

Mechanism. With Q >= 2 local steps each client's local iterates x_i^l drift from the server point by its own noise
(and by its correction, which is the previous round's noise of that client); for a nonlinear gradient
E[grad f(x + drift)] != grad f(x), a bias of the same sign on every client, which averages out over no number of
clients. As n -> infinity the server is deterministic (client-symmetric mean field) and settles where the mean drift
vanishes,

    h(z) = mean over clients and local steps l of grad f(x_i^l) = 0,   b(Q) = psi(prox z_b) - psi*  (per sigma^2),

the n-independent part of limsup_t E[psi(x_t) - psi*]. At Q = 1 the gradient is taken at the server point (x_i^0 =
x_t), so h = grad f and b = 0 structurally.

Instance (:mod:`fedbounds.algorithms.instances.kinked`): identical clients, phi = 0, 1-D f with curvature L = 1 on
one side of a kink and mu = 0.1 on the other (L-smooth, mu-strongly convex hence proximal PL, both exact); the kink
sits at ``kink`` = kappa * eta_a * sigma from x* = 0. The class is invariant under x -> t x, f -> t^2 f(./t),
sigma -> t sigma, so b/sigma^2 over the class does not depend on sigma, and the kink offset in units of eta_a sigma is
the one shape parameter; a small grid of offsets is searched per Q, under Gaussian and Rademacher noise.

Estimator. h(z) is measured by the engine itself (:func:`fedbounds.algorithms.run.run`, FedNMap variant A,
corrections on, Theorem 5's printed steps at k = 1): each round is a one-round run from the server state (z, c) with
z held and the corrections c carried over; an oracle tap records the exact gradient at the points where the engine
takes it. The tap removes the sampled noise from the mean (its mean is known: zero), which is what makes the
estimate precise enough. The same seeds at every z (common random numbers) make h an ordinary function of z, whose
root is found by Brent's method; independent batches of seeds give a 95% t interval on b. Finite-n errors come from
full engine runs (replicas averaged over a window after a burn-in of several relaxation times).

``python -m fedbounds.checks.fednmap.spep.lower --write`` writes theory/fednmap/theorem8_lower.json (seeded).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["TARGET", "Tap", "compare", "drift", "finite_n", "instance", "n_independent", "printed_drift_term", "root",
           "table"]

L, MU, RHO = 1.0, 0.1, 0.1
TARGET = "theory/fednmap/theorem8_lower.json"
QS: tuple[int, ...] = (1, 2, 4, 8)
#: kink offsets searched, in units of eta_a sigma (negative: the kink on the flat side's far end, L around x*)
KINKS: tuple[float, ...] = (-0.75, -0.5, -0.375, -0.25, -0.125, 0.0, 0.25)
LAWS: tuple[str, ...] = ("gaussian", "rademacher")


def steps(Q: int) -> dict[str, float]:
    """Theorem 5's printed steps at k = 1, window m = 1, rho = 0.1 (:func:`.existence.steps`)."""
    from fedbounds.checks.fednmap.spep.existence import steps as _steps

    return _steps(Q, 1, RHO, 1.0)


def instance(n: int, Q: int, kink_units: float, curvatures: tuple[float, float] = (MU, L)) -> Any:
    """The kinked quadratic with its kink at ``kink_units`` * eta_a (sigma = 1); ``curvatures`` = (left, right)."""
    from fedbounds.algorithms.instances.kinked import kinked_quadratic

    return kinked_quadratic(n=n, p=1, c_left=curvatures[0], c_right=curvatures[1], kink=kink_units * steps(Q)["eta_a"])


def oracle(law: str, n: int, sigma2: float = 1.0) -> Any:
    """Assumption 2 noise with variance exactly sigma2: Gaussian, or a fair sign times sigma (Rademacher)."""
    from fedbounds.algorithms.oracles import GaussianOracle, SignOracle

    if law == "gaussian":
        return GaussianOracle(sigma2)
    if law == "rademacher":
        return SignOracle(np.full((n, 1), math.sqrt(sigma2)))
    raise ValueError(f"law must be one of {LAWS}, got {law!r}")


@dataclass(eq=False)
class Tap:
    """An oracle that passes ``inner``'s samples through and records, per call, the mean over replicas and clients of
    the exact gradient at the points asked for (the engine's local iterates)."""

    inner: Any
    means: list[float] = field(default_factory=list)

    def sample(self, problem: Any, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        self.means.append(float(np.mean(problem.grad(X))))
        return self.inner.sample(problem, X, rng)


def _params(Q: int, z: float, c: np.ndarray | None) -> dict[str, Any]:
    st = steps(Q)
    return {"gamma": st["gamma"], "eta_a": st["eta_a"], "eta_s": st["eta_s"], "Q": Q, "variant": "A",
            "correction": True, "z0": np.array([z]), "c0": c}


def drift(problem: Any, Q: int, z: float, law: str, seed: int, rounds: int = 4, burn: int = 2) -> float:
    """h(z) (per sigma = 1): the mean exact gradient at the engine's local iterates over ``rounds`` rounds after
    ``burn`` rounds, the server held at z and each client's correction carried from round to round. Seeds
    ``seed * 1000 + k`` (k the round): the same at every z."""
    from fedbounds.algorithms.run import run

    c = None
    total = 0.0
    for k in range(burn + rounds):
        tap = Tap(oracle(law, problem.n))
        tr = run("fednmap", problem, _params(Q, z, c), rounds=1, replicas=1, seed=seed * 1000 + k, oracle=tap, metrics=())
        tr.raise_if_diverged()
        c = tr.final.c[0]
        if k >= burn:
            total += float(np.mean(tap.means))
    return total / rounds


def root(problem: Any, Q: int, law: str, seed: int, clients_rounds: int = 4, burn: int = 2, span: float = 20.0) -> float:
    """The z where :func:`drift` vanishes (Brent's method on [-span, span] * eta_a; common random numbers)."""
    from scipy.optimize import brentq

    ea = steps(Q)["eta_a"]

    def h(u: float) -> float:
        return drift(problem, Q, u * ea, law, seed, clients_rounds, burn)

    lo, hi = -span, span
    if not h(lo) < 0 < h(hi):
        raise RuntimeError(f"internal error: the mean drift does not change sign on [{lo}, {hi}] eta_a")
    return brentq(h, lo, hi, xtol=1e-4, rtol=1e-10) * ea


def _interval(values: list[float]) -> dict[str, Any]:
    """The batches' mean and two-sided 95% t interval (:func:`fedbounds.checks.verdicts.stats.mean_ci`)."""
    from fedbounds.checks.verdicts.stats import mean_ci

    m, low, high = mean_ci(np.asarray(values, float), 0.95, one_sided=False)
    return {"mean": m, "low": low, "high": high, "batches": len(values)}


def n_independent(Q: int, kink_units: float, law: str = "gaussian", clients: int = 20000, batches: int = 6,
                  rounds: int = 4, burn: int = 2, seed: int = 1, curvatures: tuple[float, float] = (MU, L)) -> dict[str, Any]:
    """b(Q) per sigma^2 on the instance: per batch of seeds the root z_b and psi(z_b) - psi*; mean and 95% interval
    over the batches, for b and for z_b / (eta_a sigma)."""
    pb = instance(clients, Q, kink_units, curvatures)
    ea = steps(Q)["eta_a"]
    zs, bs = [], []
    for j in range(batches):
        z = root(pb, Q, law, seed * 100 + j, rounds, burn)
        zs.append(z / ea)
        bs.append(float(pb.psi(np.array([z]))))
    return {"Q": Q, "kink_units": kink_units, "law": law, "curvatures": list(curvatures), "clients": clients,
            "rounds": rounds, "burn": burn, "b": _interval(bs), "z_over_eta_a": _interval(zs), "b_batches": bs}


def finite_n(n: int, Q: int, kink_units: float, law: str = "gaussian", replicas: int = 200, rounds: int = 20000,
             burn: int = 14000, seed: int = 7, curvatures: tuple[float, float] = (MU, L)) -> dict[str, Any]:
    """The stationary error per sigma^2 at n clients: E psi(x_t) - psi* averaged over rounds (burn, rounds] and over
    independent replicas (95% t interval across replicas); the run starts at x* = 0."""
    from fedbounds.algorithms.run import run

    pb = instance(n, Q, kink_units, curvatures)
    acc = np.zeros(replicas)

    def cb(t: int, state: Any) -> None:
        if t > burn:
            acc[:] += pb.psi(state.x)

    tr = run("fednmap", pb, _params(Q, 0.0, None), rounds=rounds, replicas=replicas, seed=seed, oracle=oracle(law, n),
             metrics=(), callback=cb)
    tr.raise_if_diverged()
    per = acc / (rounds - burn)
    return {"n": n, "Q": Q, "kink_units": kink_units, "law": law, "replicas": replicas, "rounds": rounds, "burn": burn,
            "error": _interval(list(per))}


def printed_drift_term(Q: int) -> float:
    """Theorem 8's n-independent term 12100 eta_a^2 Q L^2/(mu (1 - gamma rho)^2) per sigma^2 (sympy, formulas.py)."""
    from fedbounds.theory.core.evaluate import evaluate
    from fedbounds.theory.fednmap import formulas as fm

    st = steps(Q)
    return evaluate(fm.theorem8_drift, {"L": L, "rho": RHO, "gamma": st["gamma"], "eta_a": st["eta_a"], "Q": Q, "mu": MU,
                                        "sigma2": 1.0})


def proved_floors(path: Path | str | None = None) -> dict[int, dict[int, float]]:
    """Q -> n -> the proved floor per sigma^2 of the committed speedup table (this installation's, wherever the command
    runs: :data:`fedbounds.theory.fednmap.theorem8_c0.SPEEDUP_FILE`; checked before it is trusted)."""
    from fedbounds.theory.core.evidence import load
    from fedbounds.theory.fednmap.theorem8_c0 import SPEEDUP_FILE

    rows = load(SPEEDUP_FILE if path is None else path)["k=1"]["rows"]
    out: dict[int, dict[int, float]] = {}
    for r in rows:
        if r.get("status") == "proved" and r.get("floor") is not None:
            out.setdefault(int(r["Q"]), {})[int(r["n"])] = float(r["floor"])
    return out


def fit_a_over_n_plus_b(ns: list[int], floors: list[float]) -> dict[str, Any]:
    """floor = a/n + b by least squares on relative residuals, with 95% t intervals
    (:func:`fedbounds.checks.fednmap.spep.existence.fit_inverse` at the powers (1, 0)), keyed a, a_low, ..., b_high."""
    from fedbounds.checks.fednmap.spep.existence import fit_inverse

    fit = fit_inverse(list(ns), list(floors), (1.0, 0.0))
    (a, b), (a_lo, b_lo), (a_hi, b_hi) = fit["coefficients"], fit["low"], fit["high"]
    return {"a": a, "a_low": a_lo, "a_high": a_hi, "b": b, "b_low": b_lo, "b_high": b_hi, "points": fit["points"]}


def compare(lower: dict[int, dict[str, Any]], finite: list[dict[str, Any]]) -> dict[str, Any]:
    """Per Q: b_lower against (a) the proved floors' fitted n-independent part, (b) the printed 12100-term, (c) the
    proved floor at n = 64; and every finite-n error against the proved floor at its (n, Q) (it must lie below)."""
    floors = proved_floors()
    rows = []
    for Q, rec in sorted(lower.items()):
        fl = floors.get(Q, {})
        ns = sorted(fl)
        fit = fit_a_over_n_plus_b(ns, [fl[n] for n in ns]) if len(ns) >= 3 else None
        b = rec["b"]
        rows.append({"Q": Q, "b_lower": b["mean"], "b_lower_low": b["low"], "b_lower_high": b["high"],
                     "kink_units": rec["kink_units"], "law": rec["law"], "proved_fit": fit,
                     "printed_drift_term": printed_drift_term(Q), "proved_floor_n64": fl.get(64)})
    checks = []
    for f in finite:
        proved = floors.get(f["Q"], {}).get(f["n"])
        checks.append({"n": f["n"], "Q": f["Q"], "kink_units": f["kink_units"], "error_high": f["error"]["high"],
                       "proved_floor": proved, "below": None if proved is None else bool(f["error"]["high"] <= proved)})
    return {"rows": rows, "finite_vs_proved": checks, "all_below": all(c["below"] is not False for c in checks)}


def table(quick: bool = False, log: Any = sys.stderr) -> dict[str, Any]:
    """Everything the data file holds (see the module docstring). ``quick``: fewer clients and rounds (a smoke run)."""
    t0, c0 = time.time(), time.process_time()
    clients, batches = (2000, 3) if quick else (20000, 6)
    search = []
    for Q in QS[1:]:
        for law in LAWS:
            for kk in KINKS:
                rec = n_independent(Q, kk, law, clients=clients // 2, batches=2, seed=11)
                search.append(rec)
                print(json.dumps({k: rec[k] for k in ("Q", "kink_units", "law")} | {"b": rec["b"]["mean"]}), file=log, flush=True)
    best: dict[int, dict[str, Any]] = {}
    for Q in QS:
        if Q == 1:
            best[Q] = n_independent(Q, 0.0, "gaussian", clients=clients, batches=batches, seed=1)
            continue
        cand = max((r for r in search if r["Q"] == Q), key=lambda r: r["b"]["mean"])
        best[Q] = n_independent(Q, cand["kink_units"], cand["law"], clients=clients, batches=batches, seed=1)
        print(json.dumps({"best": Q, "b": best[Q]["b"]}), file=log, flush=True)
    # the kink removed (curvature mu on both sides): by the reflection symmetry x -> -x, noise -> -noise the root is x*
    # exactly, so what the control returns is the estimator's own resolution; a second, independent replication at Q = 8
    controls = [n_independent(Q, 0.0, "gaussian", clients=clients, batches=batches, seed=1, curvatures=(MU, MU)) for Q in (2, 8)]
    controls.append(n_independent(8, 0.0, "gaussian", clients=clients, batches=2 * batches, seed=3, curvatures=(MU, MU)))
    finite = []
    for Q in (1, 8):
        for n in (1, 8, 64):
            kk = best[Q]["kink_units"]
            finite.append(finite_n(n, Q, kk, best[Q]["law"], replicas=40 if quick else 100, rounds=3000 if quick else 12000,
                                   burn=2000 if quick else 9000))
            print(json.dumps({"finite": (n, Q), "error": finite[-1]["error"]}), file=log, flush=True)
    out = {"generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
           "command": "python -m fedbounds.checks.fednmap.spep.lower --write" + (" --quick" if quick else ""),
           "point": {"L": L, "mu": MU, "rho": RHO, "m": 1, "k": 1.0, "variant": "A", "correction": True,
                     "steps": {Q: steps(Q) for Q in QS}, "instance": "kinked_quadratic: identical clients, phi = 0, p = 1",
                     "units": "errors per sigma^2; kink offsets in units of eta_a sigma"},
           "search": search, "b": {str(Q): best[Q] for Q in QS}, "controls_linear_gradient": controls, "finite_n": finite,
           "comparison": compare(best, finite),
           "runtime": {"wall_s": round(time.time() - t0, 1), "cpu_s": round(time.process_time() - c0, 1)}}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fedbounds.checks.fednmap.spep.lower", description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help=f"write {TARGET}")
    ap.add_argument("--quick", action="store_true", help="a smoke run (fewer clients, batches and rounds)")
    ap.add_argument("--out", default=None, help=f"where --write writes (default: this checkout's {TARGET})")
    try:
        args = ap.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0) and 2
    from fedbounds.checks.runtime.install import evidence_path, refuse_unwritable
    from fedbounds.theory.core.evidence import EvidenceError

    out = evidence_path(TARGET) if args.out is None else Path(args.out)
    if args.write and refuse_unwritable(out):  # before minutes of runs, not after
        return 2
    try:
        data = table(quick=args.quick)
        if args.write:
            from fedbounds.checks.runtime.install import write_evidence
            from fedbounds.checks.runtime.jsonsafe import json_safe

            rc = write_evidence(out, json.dumps(json_safe(data), indent=1, sort_keys=True) + "\n", "the lower-bound instance")
            if rc:
                return rc
        else:
            print(json.dumps(data["comparison"], indent=1, default=float))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (OSError, ValueError, EvidenceError) as exc:
        print(f"lower: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        print(f"lower: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    if not data["comparison"]["all_below"]:
        print("lower: a finite-n error of the instance exceeds the proved floor (a bug somewhere)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
