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

__all__ = ["STATUSES", "compute_cell", "prepare", "summarize"]

#: A cell's ``status``: reached the target and stayed below; never got (or stayed) below within its rounds;
#: diverged (a non-finite or overflowing iterate; ``divergence_round`` says when).
STATUSES = ("reached", "not_reached", "diverged")


def prepare() -> None:
    """Import the engine and the statistics (called once per process by the runner, before any cell, so that
    every BLAS library is loaded when the runner limits BLAS to one thread)."""
    import fedbounds.algorithms.instances
    import fedbounds.algorithms.run
    import fedbounds.checks.fednmap.speedup

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
