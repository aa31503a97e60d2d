"""Plain reference implementations: per-replica, per-client loops that read like the pseudocode.

They exist to cross-check the vectorised engine. Each function ``name(problem, params, *, rounds, replicas,
seed, oracle)`` returns the history of the algorithm's state, ``{field: array (rounds + 1, R, ...)}``, with the
field names of the vectorised state (``z``, ``x``, ``c``, ``ci``). Every stochastic gradient is computed on its
own client's point, one replica and one client at a time, as grad f_i(x) + xi[r, i]: the exact gradient of client
i alone (``_common.client_grad``) plus the noise the engine drew at round t, local step l, replayed by drawing the
same (R, n, p) array from ``stream(seed, t, l)`` with ``oracle.noise`` and reading entry [r, i]
(``_common.round_noise``). So the references replay the engine's draws exactly without sharing its vectorised
gradient; they need an additive-noise oracle (Gaussian or exact). Params must be complete here (the defaults are
spelled out below); nothing is validated, which is the vectorised engine's job.
"""

from __future__ import annotations

from collections.abc import Callable

from fedbounds.algorithms.reference.baselines import fedavg_prox, fedda, fedmid, fedprox_prox, norm_sgd, prox_sgd, scaffold_prox
from fedbounds.algorithms.reference.fednmap import fednmap

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
