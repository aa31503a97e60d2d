"""The parameter feasibility calculator: which parameters a theorem admits, which condition binds, and what
the theorem then guarantees.

It answers from the theory layer's own sympy expressions (:mod:`fedbounds.theory.fednmap.formulas`,
:mod:`fedbounds.theory.ds_fedproxgrad.formulas`, Table 1 from :mod:`fedbounds.theory.fednmap.table1`); it retypes no formula. Theorems:

* ``fednmap.theorem5``: FedNMap, Theorem 5 (nonconvex; conditions verbatim, bound lost: rate as an O-expression);
* ``fednmap.theorem8``: FedNMap, Theorem 8 (proximal PL; bound verbatim with C_0 and E[L_0] unknown);
* ``ds.theorem5_3``: DS FedProxGrad, Theorem 5.3 (Robbins-Monro schedule eta_r = c/(r+1)^alpha; liminf);
* ``ds.corollary_ii``: DS FedProxGrad, Corollary (ii) (eta = c/sqrt(R); explicit O(1/sqrt(R)) bound).

Aliases: ``fednmap`` (Theorem 8 when mu is given, else Theorem 5) and ``ds-fedproxgrad`` (Theorem 5.3 when
alpha is given, else Corollary (ii)).

Example::

    >>> res = feasibility("fednmap.theorem8", {"L": 1, "rho": 0.1, "n": 10, "Q": 5, "sigma": 1, "mu": 0.1})
    >>> round(res.step_sizes["gamma_max"], 6)
    0.181818
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fedbounds.theory.core.feasibility import (
    ConditionResult,
    FeasibilityResult,
    Guarantee,
    ParamBound,
    RoundsNeeded,
    Table1Row,
    Term,
    epsilon_from,
)
from fedbounds.theory.ds_fedproxgrad.feasibility import ds_feasibility
from fedbounds.theory.fednmap.feasibility import fednmap_feasibility
from fedbounds.theory.fednmap.feasibility_table1 import ProblemClass

THEOREMS: tuple[str, ...] = ("fednmap.theorem5", "fednmap.theorem8", "ds.theorem5_3", "ds.corollary_ii")
ALIASES: tuple[str, ...] = ("fednmap", "ds-fedproxgrad")

__all__ = [
    "ALIASES",
    "THEOREMS",
    "ConditionResult",
    "FeasibilityResult",
    "Guarantee",
    "ParamBound",
    "ProblemClass",
    "RoundsNeeded",
    "Table1Row",
    "Term",
    "feasibility",
    "resolve_theorem",
]


def resolve_theorem(theorem: str, constants: Mapping[str, Any] | None = None, params: Mapping[str, Any] | None = None) -> str:
    """The full theorem name for ``theorem`` (an alias is resolved from the inputs); ValueError if unknown."""
    constants = constants or {}
    params = params or {}
    if theorem in THEOREMS:
        return theorem
    if theorem == "fednmap":
        return "fednmap.theorem8" if constants.get("mu") is not None else "fednmap.theorem5"
    if theorem in ("ds-fedproxgrad", "ds_fedproxgrad", "ds"):
        return "ds.theorem5_3" if params.get("alpha") is not None else "ds.corollary_ii"
    raise ValueError(f"theorem must be one of {', '.join(THEOREMS + ALIASES)}, got {theorem!r}")


def feasibility(
    theorem: str,
    constants: Mapping[str, Any],
    params: Mapping[str, Any] | None = None,
    target: float | Mapping[str, Any] | None = None,
    *,
    problem: ProblemClass | Mapping[str, Any] | None = None,
) -> FeasibilityResult:
    """Which parameters ``theorem`` admits for the problem ``constants``, and what it then guarantees.

    ``constants``: FedNMap ``L, rho, n, Q, sigma`` (or ``sigma2``) and optionally ``mu`` (PL; needed by
    Theorem 8), ``C_0``, ``EL_0`` (Theorem 8's unknowns, if you know them), ``Delta_f``, ``grad0_sq``,
    ``zeta2``; DS FedProxGrad ``L_f, L_r, lam, G, B, G_r, sigma`` and optionally ``rho``, ``Delta_0``.
    Values may be numbers or objects with a ``.value`` (``fedbounds.algorithms.base.Constant``).

    ``params`` (all optional; a missing one is set to its largest admissible value): FedNMap ``gamma,
    eta_a, eta_s`` (or ``eta_hat``), ``m``, horizon ``T``; DS ``c, alpha, c_gamma, eta, gamma_r``, horizon ``R``.

    ``target``: the accuracy epsilon (> 0), a number or ``{"epsilon": ...}``: the result then carries the
    rounds needed (exact where every constant is known, symbolic or an O-expression, flagged, otherwise).

    ``problem``: FedNMap's problem class for the Table 1 comparison (see :class:`ProblemClass`); mu and
    rho complete it.

    Invalid or contradictory input raises ValueError naming the parameter and its allowed range.
    """
    if not isinstance(theorem, str):
        raise ValueError(f"theorem must be one of {', '.join(THEOREMS + ALIASES)}, got {theorem!r}")
    if not isinstance(constants, Mapping):
        raise ValueError(f"constants must be a mapping of names to values, got {type(constants).__name__}")
    params = dict(params or {})
    name = resolve_theorem(theorem, constants, params)
    eps = epsilon_from(target)
    if name.startswith("fednmap."):
        return fednmap_feasibility(name, constants, params, eps, problem)
    if problem is not None:
        raise ValueError("problem (the Table 1 problem class) applies to FedNMap only")
    return ds_feasibility(name, constants, params, eps)
