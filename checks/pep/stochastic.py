"""Expected-Gram performance estimation for methods with additive gradient noise (both papers).

The model (Rubbens, Colla, Hendrickx, "Computer-aided analyses of stochastic first-order methods, via interpolation
conditions for stochastic optimization", arXiv 2507.05466; the bounded-variance oracle of both papers'
Assumption 2): a stochastic gradient is ``grad f_i(x) + e`` with E[e | past] = 0 and E[||e||^2 | past] <= sigma^2.

The encoding. Every vector the method touches is a random vector; stack the leaves in V and let the PEP's Gram matrix
be G = E[V V^T] and its function values the expectations E[f(x)]. Each noise sample is one new leaf ``e``. Then

* every interpolation inequality of the class holds per realisation and is linear in (V V^T, values), so it holds
  for (G, E values): the constraints of the deterministic PEP stay valid unchanged;
* E<e, v> = 0 for every leaf v that is fixed before e is drawn (measurable w.r.t. the past: the round's start, the
  client's own earlier leaves, including the gradient and prox subgradient at the point the sample is drawn at)
  and for every leaf that is independent of e given the past (the other clients' leaves of the same round);
  nothing is imposed between e and leaves that may depend on it (the later leaves of its own client, the server's
  next point);
* E||e||^2 <= sigma^2.

So the true (G, E values) of any instance and any admissible noise law is feasible, and the PEP's value is a valid
*upper bound* on the worst expectation of a measure that is linear in (G, values). It is not exact: one f serves all
realisations, and independence is used only through second moments. Only mean measures are supported
(E min is not min E).

The lower bound. :func:`sign_patterns` enumerates a finite-scenario noise law: each draw is e = s u with a fair sign
s = +-1 and a vector u chosen from the past (so E[e | past] = 0 and E||e||^2 = ||u||^2). Building one trajectory
per sign pattern, with the same functions for all of them, gives a deterministic PEP whose feasible points are
true instances with a true noise law (PEPit's finite-sum ``sgd`` example branches the same way): its value is a
*lower bound* on the worst expectation, and the gap to the expected-Gram value is the relaxation's slack.

API (used by the FedNMap and DS FedProxGrad stochastic encodings)::

    ledger = NoiseLedger()                     # one per PEP build, created inside the builder
    ledger.begin(owner=i)                      # leaves created from now on are client i's (this round)
    e = ledger.draw(owner=i)                   # a new leaf, orthogonal to every leaf existing now
    ...                                        # use g + e as the stochastic gradient
    ledger.end()                               # client i's segment ends
    ledger.close_round()                       # e of client i  _|_  every leaf of client j != i in the round
    ledger.apply(problem, sigma2=1.0)          # add E<e, v> = 0 and E||e||^2 <= sigma2 to the PEP

``apply(..., orthogonality=False)`` drops the orthogonality constraints (the negative control: the value must grow
or become unbounded). With ``labels`` (a :class:`fedbounds.checks.pep.symmetric.Labels`), noise leaves are
labelled as their owner's client slots so the PEP can be solved in the client-symmetric block form.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Noise", "NoiseLedger", "sign_patterns"]


@dataclass
class Noise:
    """One noise sample: its leaf ``point``, its ``owner`` (client index or None), a ``tag`` for reports, the
    ``round`` it belongs to, and the leaves it is orthogonal to (ids deduplicated)."""

    point: Any
    owner: int | None
    tag: str
    round: int
    orthogonal: list[Any] = field(default_factory=list)
    _ids: set[int] = field(default_factory=set, repr=False)

    def add(self, leaves: Iterable[Any]) -> None:
        for v in leaves:
            if v is self.point or id(v) in self._ids:
                continue
            self._ids.add(id(v))
            self.orthogonal.append(v)


class NoiseLedger:
    """The noise leaves of one expected-Gram PEP and the constraints they carry (module docstring).

    Create it inside the PEP builder (PEPit's leaf counter is global: a ledger is valid for one build).
    """

    def __init__(self, labels: Any = None) -> None:
        from PEPit import Point

        self.labels = labels
        self.noises: list[Noise] = []
        self._round = 0
        self._owner: int | None = None
        self._start = len(Point.list_of_leaf_points)
        self._segments: dict[int, list[Any]] = {}  # leaves created in each client's segments of this round
        self._seg_start: int | None = None

    # ---- segments: which leaves of the round are whose -------------------------------------------------------
    def begin(self, owner: int) -> None:
        """Start client ``owner``'s segment of the current round (its local loop)."""
        from PEPit import Point

        if self._seg_start is not None:
            raise RuntimeError("NoiseLedger.begin called twice without end()")
        self._owner, self._seg_start = int(owner), len(Point.list_of_leaf_points)

    def end(self) -> None:
        """End the current client segment; the leaves created in it are recorded as that client's."""
        from PEPit import Point

        if self._seg_start is None or self._owner is None:
            raise RuntimeError("NoiseLedger.end called without begin()")
        self._segments.setdefault(self._owner, []).extend(Point.list_of_leaf_points[self._seg_start:])
        self._owner, self._seg_start = None, None

    def close_round(self) -> None:
        """Make every noise of client i in this round orthogonal to every leaf of client j != i in this round
        (independence of the clients' samples given the round's start), then start a new round."""
        if self._seg_start is not None:
            raise RuntimeError("close_round inside a client segment: call end() first")
        for nz in self.noises:
            if nz.round != self._round or nz.owner is None:
                continue
            for j, leaves in self._segments.items():
                if j != nz.owner:
                    nz.add(leaves)
        self._segments = {}
        self._round += 1

    # ---- noise leaves --------------------------------------------------------------------------------------------
    def draw(self, owner: int | None = None, tag: str = "", independent_of: Sequence[Any] = ()) -> Any:
        """A new noise leaf e (a PEPit Point), orthogonal to every leaf that exists now, i.e. fixed before the draw
        (``independent_of``: further leaves known to be independent of e). The caller must create the leaves of
        the point the sample is drawn at (its gradient, its prox subgradient) *before* calling draw."""
        from PEPit import Point

        if owner is None:
            owner = self._owner
        before = list(Point.list_of_leaf_points)
        e = Point()
        if self.labels is not None:
            self.labels.point(e, owner)
        nz = Noise(point=e, owner=owner, tag=tag or f"e{len(self.noises)}", round=self._round)
        nz.add(before)
        nz.add(independent_of)
        self.noises.append(nz)
        return e

    def independent(self, e: Any, leaves: Iterable[Any]) -> None:
        """Declare ``leaves`` independent of the noise leaf ``e`` (E<e, v> = 0 is then imposed)."""
        for nz in self.noises:
            if nz.point is e:
                nz.add(leaves)
                return
        raise KeyError("not a noise leaf of this ledger")

    # ---- constraints -------------------------------------------------------------------------------------------
    def orthogonality(self) -> list[Any]:
        """The Expressions E<e, v> (each must be 0), one per (noise, leaf) pair."""
        return [nz.point * v for nz in self.noises for v in nz.orthogonal]

    def variances(self) -> list[Any]:
        """The Expressions E||e||^2, one per noise leaf."""
        return [nz.point**2 for nz in self.noises]

    def apply(self, problem: Any, sigma2: float = 1.0, orthogonality: bool = True, prune: bool = True) -> int:
        """Add E||e||^2 <= ``sigma2`` for every noise leaf and (unless ``orthogonality`` is False, the negative
        control) E<e, v> = 0 for every recorded pair; returns the number of constraints added. ``prune`` (with
        labels): build one representative of each cross-client pair (:meth:`_prune_for_blocks`); ``prune=False``
        builds them all, so that the PEP is the full one (what an exact certificate of it needs)."""
        sigma2 = float(sigma2)
        if not sigma2 >= 0:
            raise ValueError(f"sigma2 must be >= 0, got {sigma2!r}")
        count = 0
        if self.labels is not None and prune:
            self._prune_for_blocks()
        for var in self.variances():
            problem.add_constraint(var <= sigma2)
            count += 1
        if orthogonality:
            for ip in self.orthogonality():
                problem.add_constraint(ip == 0)
                count += 1
        return count

    def _prune_for_blocks(self) -> None:
        """Block form only: a pair (e of client i, leaf of client j != i) maps to the same B-block row for every j, so
        one representative other client (0, or 1 for client 0) is kept; shared and own leaves are all kept. Same block
        SDP, n-fold fewer rows to build (the reduction would deduplicate them anyway); but for n >= 3 the PEPit problem
        is then a relaxation of the full PEP (a pair (e_2, leaf of client 1) is missing), which no exact certificate
        of the full PEP can be read from."""
        lab = self.labels.points
        for nz in self.noises:
            if nz.owner is None:
                continue
            rep = 1 if nz.owner == 0 else 0
            keep = [v for v in nz.orthogonal
                    if v not in lab or lab[v][0] == "s" or lab[v][1] in (nz.owner, rep)]
            nz.orthogonal, nz._ids = keep, {id(v) for v in keep}

    @property
    def size(self) -> int:
        """Number of noise leaves."""
        return len(self.noises)


def sign_patterns(k: int) -> list[tuple[int, ...]]:
    """All 2^k sign patterns (s_1, ..., s_k), s = +-1, each of probability 2^-k: a finite-scenario noise law with k
    draws e_j = s_j u_j (u_j chosen from the past) is conditionally mean-zero with E||e_j||^2 = ||u_j||^2.

    Averaging a measure over the patterns (one trajectory each, the same functions for all) gives an admissible
    instance's expectation: a lower bound on the expected-Gram PEP's value (module docstring)."""
    if isinstance(k, bool) or int(k) != k or k < 0:
        raise ValueError(f"k must be an integer >= 0, got {k!r}")
    if k > 12:
        raise ValueError(f"k = {k} draws means 2^{k} scenarios; at most 12 are allowed")
    return [tuple(p) for p in itertools.product((1, -1), repeat=int(k))]
