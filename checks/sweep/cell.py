"""One sweep cell: build the instance and oracle, run the algorithm, summarise the trajectory.

:func:`compute_cell` is a pure function of its configuration (seed included): the instance comes from
``fedbounds.algorithms.instances.make_instance``, the oracle from ``fedbounds.algorithms.oracles.make_oracle``, the trajectory from
``fedbounds.algorithms.run.run`` with the cell's seed (every random draw is ``fedbounds.algorithms.rng.stream(seed, t, l)``), and
the summary from :func:`fedbounds.checks.fednmap.speedup.rounds_to_target`. The same configuration gives the same bytes in any
process on any machine with the same library versions.

The headline number is the rounds needed to reach the target accuracy (FedNMap, Theorems 5 and 8: in the
noise-dominated regime they fall as 1/(nQ), the linear speedup), measured on the replica mean of the target
metric (e.g. E||F_nor^gamma(z_t)||^2 or E[psi(x_t) - psi*]) and required to stay below the target at every
later recorded round.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["METHODS", "STATUSES", "compute_cell", "compute_study_cell", "prepare", "summarize"]

#: A cell's ``status``: reached the target and stayed below; never got (or stayed) below within its rounds;
#: diverged (a non-finite or overflowing iterate; ``divergence_round`` says when).
STATUSES = ("reached", "not_reached", "diverged")


def prepare() -> None:
    """Import the engine and the statistics (called once per process by the runner, before any cell, so that
    every BLAS library is loaded when the runner limits BLAS to one thread)."""
    import fedbounds.algorithms.instances
    import fedbounds.algorithms.run
    import fedbounds.checks.fednmap.speedup
    import fedbounds.checks.studies.fednmap_speedup

    try:
        import fedbounds.algorithms.oracles  # noqa: F401
    except ImportError:  # pragma: no cover - only a spec without an oracle can run then
        pass


def _finite_or_none(v: float) -> float | None:
    v = float(v)
    return v if math.isfinite(v) else None


def summarize(
    metrics: Mapping[str, np.ndarray],
    target: Mapping[str, Any],
    divergence: Any = None,
) -> dict[str, Any]:
    """Summarise per-replica metric arrays (each ``(rounds_completed + 1, R)``) against a target.

    Returns a JSON-able dict (no NaN anywhere: a non-finite number becomes ``None``) plus ``"curves"``, the
    replica-mean curve of every metric as float64 arrays. ``divergence`` is ``None`` or an object with
    ``round``, ``replica`` and ``reason`` (``fedbounds.algorithms.run.Divergence``).
    """
    from fedbounds.checks.fednmap.speedup import rounds_to_target

    name = target["metric"]
    if name not in metrics:
        raise ValueError(f"target metric {name!r} was not recorded (recorded: {sorted(metrics)})")
    curves: dict[str, np.ndarray] = {}
    with np.errstate(over="ignore", invalid="ignore"):  # a mean that overflows is reported as None below
        for m, values in metrics.items():
            a = np.asarray(values, dtype=float)
            curves[m] = a.mean(axis=1) if a.ndim == 2 else a.reshape(-1)
        rtt = rounds_to_target(
            np.asarray(metrics[name], dtype=float),
            float(target["value"]),
            upper=bool(target.get("upper", False)),
            level=float(target.get("level", 0.95)),
        )
    tgt = curves[name]
    rounds_completed = int(tgt.size - 1)
    if divergence is not None:
        status = "diverged"
        rtt = None  # it did not stay below the target: the run blew up afterwards
    else:
        status = "reached" if rtt is not None else "not_reached"
    return {
        "status": status,
        "rounds_to_target": rtt,
        "target_metric": name,
        "target": float(target["value"]),
        "final": _finite_or_none(tgt[-1]) if tgt.size else None,
        "best": _finite_or_none(np.min(tgt)) if tgt.size and np.all(np.isfinite(tgt)) else None,
        "final_metrics": {m: (_finite_or_none(c[-1]) if c.size else None) for m, c in sorted(curves.items())},
        "rounds_completed": rounds_completed,
        "divergence_round": None if divergence is None else int(divergence.round),
        "divergence_replica": None if divergence is None else int(divergence.replica),
        "divergence_reason": None if divergence is None else str(divergence.reason),
        "curves": curves,
    }


def compute_cell(config: Mapping[str, Any]) -> dict[str, Any]:
    """Run one cell (see :mod:`fedbounds.checks.sweep.spec` for the configuration layout) and summarise it.

    ``config`` holds ``algorithm``, ``instance`` (``{"name", "params"}``), ``oracle`` (a spec for
    ``make_oracle`` or ``None`` for the engine's default), ``params``, ``rounds``, ``replicas``, ``metrics``,
    ``target`` and ``seed``. Returns :func:`summarize` of the trajectory.
    """
    from fedbounds.algorithms.instances import make_instance
    from fedbounds.algorithms.run import run

    inst = config["instance"]
    problem = make_instance(inst["name"], **dict(inst["params"]))
    oracle = None
    if config.get("oracle") is not None:
        from fedbounds.algorithms.oracles import make_oracle

        oracle = make_oracle(dict(config["oracle"]))
    traj = run(
        config["algorithm"],
        problem,
        dict(config["params"]),
        rounds=int(config["rounds"]),
        replicas=int(config["replicas"]),
        seed=int(config["seed"]),
        oracle=oracle,
        metrics=tuple(config["metrics"]),
    )
    return summarize(traj.metrics, config["target"], traj.divergence)


# ---------------------------------------------------------------------------------------------- the speedup study

#: the algorithms of the linear-speedup study: grid name -> (engine name, fixed extra parameters). The baselines
#: are the negative controls of docs/baselines.md: FedAvg and SCAFFOLD with a server prox, and FedNMap with its
#: correction switched off (c = 0), all at the same steps.
METHODS: dict[str, tuple[str, dict]] = {
    "fednmap": ("fednmap", {}),
    "fednmap_nocorr": ("fednmap", {"correction": False}),
    "fedavg_prox": ("fedavg_prox", {}),
    "scaffold_prox": ("scaffold_prox", {}),
}


def _study_params(method: str, params: Mapping[str, Any], problem: Any) -> tuple[str, dict]:
    """(engine name, engine parameters) of ``method`` at the cell's parameters. The baselines take eta_a, eta_s,
    Q and start at x0 = prox_{gamma phi}(z0), FedNMap's own x_0, so that every method starts at the same point."""
    if method not in METHODS:
        raise ValueError(f"params.method: expected one of {sorted(METHODS)}, got {method!r}")
    engine, extra = METHODS[method]
    if engine == "fednmap":
        return engine, {**params, **extra}
    out = {k: params[k] for k in ("eta_a", "eta_s", "Q") if k in params}
    if params.get("z0") is not None:
        out["x0"] = problem.phi.prox(np.asarray(params["z0"], dtype=float)[None, :], float(params["gamma"]))[0]
    return engine, {**out, **extra}


def _salt(config: Mapping[str, Any]) -> int:
    """A hash of the cell's configuration without its seed: the seed salt of independent streams (crn off)."""
    import hashlib
    import json

    body = {k: v for k, v in config.items() if k != "seed"}
    return int(hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()[:15], 16)


def compute_study_cell(config: Mapping[str, Any]) -> dict[str, Any]:
    """One cell of the linear-speedup study, decided with as few replicas as it needs.

    Like :func:`compute_cell`, plus: ``params.method`` names the algorithm (a key of :data:`METHODS`), and
    ``params.efficiency`` holds the settings of :mod:`fedbounds.checks.studies.fednmap_speedup` (common random
    numbers, antithetic pairs, sequential replicas with ``replicas`` as the block size, exact moments). Only the
    target metric is recorded. The result adds ``decision`` (reached / not_reached / diverged / undecided),
    ``replicas_used``, ``units``, ``blocks``, ``rtt_ci`` (percentile bootstrap), ``rtt_boot`` (the bootstrap
    rounds-to-target, -1 = not reached; the slopes' bootstrap resamples them) and ``floor`` (final-window mean
    and interval)."""
    from fedbounds.algorithms.instances import make_instance
    from fedbounds.algorithms.run import run
    from fedbounds.checks.studies.fednmap_speedup import (
        AntitheticOracle,
        engine_seed,
        exact_target_curve,
        sequential_replicas,
        validate_efficiency,
    )

    params = dict(config["params"])
    method = str(params.pop("method", config["algorithm"]))
    eff = validate_efficiency(params.pop("efficiency", None))
    inst = config["instance"]
    problem = make_instance(inst["name"], **dict(inst["params"]))
    engine, eparams = _study_params(method, params, problem)
    target = config["target"]
    metric, rounds, block, seed = target["metric"], int(config["rounds"]), int(config["replicas"]), int(config["seed"])
    oracle_spec = dict(config.get("oracle") or {})
    if oracle_spec.get("kind") != "gaussian":
        raise ValueError(f"the study cell needs a Gaussian oracle, got {oracle_spec!r}")
    sigma2 = float(oracle_spec["sigma2"])
    if eff["exact"]:
        units = exact_target_curve(engine, problem, eparams, rounds=rounds, sigma2=sigma2, metric=metric)
        out = summarize({metric: units}, target)
        rtt = out["rounds_to_target"]
        out.update(decision=out["status"], replicas_used=0, units=0, blocks=0, rtt_ci=[rtt, rtt], rtt_boot=[],
                   floor=[_finite_or_none(units[-max(1, int(eff["window"] * rounds)) :].mean())] * 3, method=method)
        return out
    if eff["antithetic"] and block % 2:
        raise ValueError(f"replicas: antithetic pairs need an even block size, got {block}")
    from fedbounds.algorithms.oracles import GaussianOracle

    oracle = AntitheticOracle(sigma2) if eff["antithetic"] else GaussianOracle(sigma2)
    salt = 0 if eff["crn"] else _salt(config)

    def run_block(b: int, R: int) -> tuple[np.ndarray, Any]:
        traj = run(engine, problem, eparams, rounds=rounds, replicas=R, seed=engine_seed(seed, b, salt), oracle=oracle, metrics=(metric,))
        return traj.metrics[metric], traj.divergence

    d, units, divergence = sequential_replicas(run_block, float(target["value"]), eff, block=block, seed=seed)
    out = summarize({metric: units}, target, divergence)
    out.update(
        decision=d.status,
        replicas_used=d.replicas,
        units=d.units,
        blocks=d.blocks,
        rtt_ci=[_finite_or_none(d.ci[0]), _finite_or_none(d.ci[1])],
        rtt_boot=d.boot,
        floor=[_finite_or_none(v) for v in d.floor],
        method=method,
    )
    return out
