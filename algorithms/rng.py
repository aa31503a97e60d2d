"""Random streams of the engine: one independent numpy ``Generator`` per (seed, round t, local step l).

Every algorithm draws its stochastic gradients at round ``t``, local step ``l`` from
``stream(seed, t, l)`` and calls the oracle ONCE per (t, l) on the full ``(R, n, p)`` stack of client points
(R replicas, n clients). A reference implementation that loops over replicas and clients replays exactly the
same draws by building the same stack, calling the oracle once with the same stream and indexing ``[r, i]``.

The streams come from ``np.random.SeedSequence(seed, spawn_key=(t, l, *extra))``: they are independent of
each other and of call order, so a round can be replayed on its own. Algorithms that need further draws in the
same (t, l) (for example a random direction besides the gradient noise) use an ``extra`` key, e.g.
``stream(seed, t, l, 1)``; the plain ``stream(seed, t, l)`` is reserved for the oracle. No global numpy RNG is
ever used.
"""

from __future__ import annotations

import numpy as np
from fedbounds.algorithms._validate import check_integer


def _check_key(name: str, value: int) -> int:
    return check_integer(name, value, 0)


def stream(seed: int, t: int, l: int, *extra: int) -> np.random.Generator:
    """The Generator for round ``t``, local step ``l`` (and optional further keys ``extra``) of run ``seed``.

    All keys must be integers >= 0; ``seed`` is any integer >= 0 accepted by ``SeedSequence``.
    """
    keys = (_check_key("t", t), _check_key("l", l), *(_check_key("extra", e) for e in extra))
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(_check_key("seed", seed), spawn_key=keys)))
