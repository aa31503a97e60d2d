"""Plain reference implementations: per-replica, per-client loops that read like the pseudocode.

They exist to cross-check the vectorised engine. Each function ``name(problem, params, *, rounds, replicas,
seed, oracle)`` returns the history of the algorithm's state, ``{field: array (rounds + 1, R, ...)}``, with the
field names of the vectorised state (``z``, ``x``, ``c``, ``ci``). They replay the engine's random draws
exactly: at round t, local step l they stack the per-client points into the full (R, n, p) array, call
``oracle.sample(problem, stack, stream(seed, t, l))`` once, and read client i of replica r from the result
(contract of ``algorithms.rng``). Params must be complete here (the defaults are spelled out below); nothing is
validated, which is the vectorised engine's job.
"""

from __future__ import annotations

from collections.abc import Callable

from algorithms.reference.baselines import fedavg_prox, fedda, fedmid, fedprox_prox, norm_sgd, prox_sgd, scaffold_prox
from algorithms.reference.fednmap import fednmap

REFERENCES: dict[str, Callable[..., dict]] = {
    "fednmap": fednmap,
    "prox_sgd": prox_sgd,
    "norm_sgd": norm_sgd,
    "fedmid": fedmid,
    "fedda": fedda,
    "fedavg_prox": fedavg_prox,
    "scaffold_prox": scaffold_prox,
    "fedprox_prox": fedprox_prox,
}

__all__ = ["REFERENCES", *REFERENCES]
