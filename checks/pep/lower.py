"""Lower bounds on a PEP's worst case from admissible points: the only evidence that can show a bound is violated.

A certificate's value (PEPit's dual value, and a fortiori the bound value + delta of an exact rational certificate,
:mod:`fedbounds.checks.pep.certificate`) is an *upper* bound on the worst case: it can show that a bound holds, never
that it fails. A violation needs a point of the class whose measure exceeds the bound. The objective at the Gram
matrix a solver returns (``SolverRun.primal``) is the measure at a feasible point of the PEP, up to the solver's
primal feasibility error (``primal_violation``, at most :data:`MAX_PRIMAL_VIOLATION` here). When the PEP is exact for
its class (a deterministic PEP with interpolation conditions; a finite-scenario PEP,
:func:`fedbounds.checks.pep.stochastic.sign_patterns`; a noise PEP without orthogonality, whose noise leaves are then
just further vectors), that point is an admissible instance and its value a lower bound on the worst case. The primal
of an expected-Gram PEP is not: that PEP is a relaxation (one f for every realisation), and its primal point need not
be an instance. The caller says which PEP is exact; this module only reads the primal values.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_PRIMAL_VIOLATION", "primal_lower"]

#: a solver's primal point counts as feasible when no constraint is violated by more than this (absolute)
MAX_PRIMAL_VIOLATION = 1e-7


def primal_lower(cert: Any) -> float | None:
    """The smallest primal value among the solvers that returned ``optimal`` with a primal point feasible to
    :data:`MAX_PRIMAL_VIOLATION` (every such point is admissible when the PEP is exact, so the smallest is the
    conservative lower bound), or None when no solver gave one. ``cert``: a
    :class:`fedbounds.checks.pep.solve.Certificate`."""
    vals = [float(r.primal) for r in cert.runs
            if r.status == "optimal" and r.primal is not None and r.primal_violation is not None
            and r.primal_violation <= MAX_PRIMAL_VIOLATION]
    return min(vals) if vals else None
