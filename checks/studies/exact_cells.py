"""Sweep cells computed in closed form (no round loop): exact rounds to target and floors on the weakly convex quadratic.

Named by a spec as ``cell = "fedbounds.checks.studies.exact_cells:compute_inside_cell"``. The configuration is
the sweep's usual dict; the instance is ``weakly_convex_quadratic`` (``fedbounds.algorithms.instances.quadratic``),
the oracle Gaussian, and ``params`` hold

* ``method``: fednmap, fednmap_nocorr, fedavg_prox or scaffold_prox (``fedbounds.checks.sweep.cell.METHODS``);
* ``steps``: "printed" (Theorem 5's printed maxima, tuned as Theorem 8 suggests) or "pep" (the PEP-certified
  multiple of them), from :func:`fedbounds.checks.fednmap.inside.inside_steps` at the target eps; the baselines
  take FedNMap's eta_a, eta_s, Q and start at x_0 = prox(z_0);
* ``z0``: FedNMap's start (a list of p numbers).

One round of the method is probed once into s -> M s + b + N xi (``fedbounds.algorithms.exact.affine_round``); the
target metric's expectation at any round, its limit (the floor), and the rounds until it stays below the target
(``fedbounds.algorithms.closed_form``) need no round loop. ``rounds`` and ``replicas`` of the spec are not used
(exact numbers, no replicas). The result is :func:`fedbounds.checks.sweep.cell.summarize`'s layout plus the steps,
their scope, Theorem 8's terms there and the closed form's timings; its ``curves`` hold E[metric] at log-spaced
rounds (``curve_rounds``), not every round.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["compute_inside_cell", "inside_cell_setup"]

#: rounds at which the curve is recorded (log-spaced, 0 included)
_CURVE_POINTS = 60


def inside_cell_setup(config: Mapping[str, Any]) -> tuple[Any, str, dict, dict, Any]:
    """(problem, engine, engine params, steps, oracle) of a cell's configuration."""
    from fedbounds.algorithms.instances.quadratic import weakly_convex_quadratic
    from fedbounds.algorithms.oracles import GaussianOracle
    from fedbounds.checks.fednmap.inside import inside_steps
    from fedbounds.checks.sweep.cell import METHODS

    inst = config["instance"]
    if inst["name"] != "weakly_convex_quadratic":
        raise ValueError(f"instance.name: the closed-form cell runs on 'weakly_convex_quadratic', got {inst['name']!r}")
    problem = weakly_convex_quadratic(**dict(inst["params"]))
    oracle_spec = dict(config.get("oracle") or {})
    if oracle_spec.get("kind") != "gaussian":
        raise ValueError(f"oracle: the closed-form cell needs a Gaussian oracle, got {oracle_spec!r}")
    sigma2 = float(oracle_spec["sigma2"])
    params = dict(config["params"])
    method = str(params.get("method", "fednmap"))
    if method not in METHODS:
        raise ValueError(f"params.method: expected one of {sorted(METHODS)}, got {method!r}")
    c = problem.constants
    steps = inside_steps(L=c["L"].value, rho=c["rho"].value, mu=c["mu"].value, sigma2=sigma2, n=problem.n, Q=int(params["Q"]),
                         eps=float(config["target"]["value"]), kind=str(params.get("steps", "printed")),
                         cap=bool(params.get("cap", True)))
    engine, extra = METHODS[method]
    z0 = np.asarray(params["z0"], dtype=float)
    if engine == "fednmap":
        eparams = {"gamma": steps["gamma"], "eta_a": steps["eta_a"], "eta_s": steps["eta_s"], "Q": int(params["Q"]), "z0": z0, **extra}
    else:
        eparams = {"eta_a": steps["eta_a"], "eta_s": steps["eta_s"], "Q": int(params["Q"]), **extra,
                   "x0": problem.phi.prox(z0[None, :], steps["gamma"])[0]}
    return problem, engine, eparams, steps, GaussianOracle(sigma2)


def _finite(v: float | None) -> float | None:
    return None if v is None or not math.isfinite(float(v)) else float(v)


def compute_inside_cell(config: Mapping[str, Any]) -> dict[str, Any]:
    """One closed-form cell (module docstring)."""
    from fedbounds.algorithms.closed_form import NoLimit, closed_form
    from fedbounds.algorithms.exact import affine_round

    problem, engine, eparams, steps, oracle = inside_cell_setup(config)
    target = config["target"]
    metric, eps = str(target["metric"]), float(target["value"])
    t0 = time.process_time()
    rnd = affine_round(engine, problem, eparams, oracle=oracle)
    t1 = time.process_time()
    cf = closed_form(rnd)
    try:
        floor = cf.expectation(metric, math.inf)
        rtt = cf.rounds_to_target(metric, eps)
        no_limit = None
    except NoLimit as exc:
        floor, rtt, no_limit = None, None, str(exc)
    t2 = time.process_time()
    horizon = max(10, 4 * (rtt or int(1.0 / max(1e-300, 1.0 - min(cf.spectral_radius, 1.0 - 1e-15)))))
    ts = np.unique(np.concatenate([[0], np.round(np.geomspace(1, horizon, _CURVE_POINTS)).astype(np.int64)]))
    curve = np.array([cf.expectation(metric, int(t)) for t in ts])
    # no limit: a non-decaying mode is excited (spectral radius >= 1 on it), so the moments do not settle: diverged
    status = "reached" if rtt is not None else ("diverged" if no_limit is not None else "not_reached")
    c = problem.constants
    return {
        "status": status,
        "decision": status,
        "rounds_to_target": rtt,
        "target_metric": metric,
        "target": eps,
        "final": _finite(floor),
        "floor": _finite(floor),
        "floor_over_target": None if floor is None else floor / eps,
        "best": _finite(float(np.min(curve))),
        "final_metrics": {metric: _finite(floor)},
        "rounds_completed": None,
        "divergence_round": None,
        "divergence_replica": None,
        "divergence_reason": no_limit,
        "method": str(config["params"].get("method", "fednmap")),
        "steps_kind": str(config["params"].get("steps", "printed")),
        "scope": steps["scope"] if engine == "fednmap" else steps["scope"] + " (FedNMap's steps; the theorem is FedNMap's)",
        "steps": {k: steps[k] for k in ("gamma", "eta_hat", "eta_a", "eta_s", "m")},
        "k": steps.get("k"),
        "cap_binds": steps["cap_binds"],
        "eta_hat_rule_over_cap": steps["eta_hat_over_cap"],
        "nQ_cap": steps["nQ_cap"],
        "theorem8_variance_term": steps["variance_bound"],
        "theorem8_drift_term": steps["drift_bound"],
        "constants": {k: float(v.value) for k, v in c.items()},
        "exact": True,
        "replicas_used": 0,
        "closed_form": {"method": cf.method, "reachable_dim": cf.r, "state_dim": int(rnd.M.shape[0]),
                        "spectral_radius": cf.spectral_radius, "probe_cpu_s": t1 - t0, "closed_form_cpu_s": t2 - t1},
        "curve_rounds": [int(t) for t in ts],
        "curves": {metric: curve},
    }
