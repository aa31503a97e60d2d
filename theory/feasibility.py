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

Each theorem is a declaration (:class:`TheoremSpec`: its parameters with their ranges, its conditions and
guarantee as the formulas modules' sympy expressions, its unknown constants, its aliases) in its paper's
``feasibility`` module, and one generic solver (:func:`fedbounds.theory.core.feasibility.solve`) answers
every query. The papers are found through :data:`fedbounds.theory.registry.PAPER_PACKAGES`: each paper
package's ``feasibility.DECLARATIONS``. A new theorem is one more declaration, or, at run time,
:func:`register_theorem` (docs/adding-a-paper.md)::

    >>> import sympy as sp
    >>> L_, R0, eta_, T_ = sp.symbols("L R_0 eta T", positive=True)
    >>> spec = TheoremSpec(
    ...     name="textbook.prox_grad", title="Proximal gradient (convex composite)",
    ...     constants=(Param("L", L_, "positive", required=True), Param("R0", R0, "nonnegative")),
    ...     params=(Param("eta", eta_), Param("T", T_, "integer", horizon=True)),
    ...     conditions=(Condition("step", "eta <= 1/L", "verbatim", "eta", bound=1 / L_),),
    ...     guarantee=GuaranteeSpec("textbook.prox_grad", "F(x_T) - F*", "<=", T_,
    ...                             terms=(TermSpec("R_0^2/(2 eta T)", R0**2 / (2 * eta_ * T_)),), floor=0.0),
    ...     unknowns=(Unknown(R0, "R0", "||x_0 - x*||"),))
    >>> _ = register_theorem(spec)
    >>> feasibility("textbook.prox_grad", {"L": 2, "R0": 3}, target=0.007).rounds_needed.rounds
    1286
    >>> unregister_theorem("textbook.prox_grad")

Example::

    >>> res = feasibility("fednmap.theorem8", {"L": 1, "rho": 0.1, "n": 10, "Q": 5, "sigma": 1, "mu": 0.1})
    >>> round(res.step_sizes["gamma_max"], 6)
    0.181818
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from fedbounds.theory.core.feasibility import (
    Condition,
    ConditionResult,
    FeasibilityResult,
    Guarantee,
    GuaranteeSpec,
    Param,
    ParamBound,
    RoundsNeeded,
    Table1Row,
    Term,
    TermSpec,
    TheoremSpec,
    Unknown,
    epsilon_from,
    register_theorem,
    registered,
    resolve_alias,
    solve,
    unregister_theorem,
)
from fedbounds.theory.fednmap.feasibility_table1 import ProblemClass
from fedbounds.theory.registry import PAPER_PACKAGES

__all__ = [
    "ALIASES",
    "THEOREMS",
    "Condition",
    "ConditionResult",
    "FeasibilityResult",
    "Guarantee",
    "GuaranteeSpec",
    "Param",
    "ParamBound",
    "ProblemClass",
    "RoundsNeeded",
    "Table1Row",
    "Term",
    "TermSpec",
    "TheoremSpec",
    "Unknown",
    "declarations",
    "feasibility",
    "register_theorem",
    "resolve_theorem",
    "unregister_theorem",
]

_loaded: set[str] = set()


def _paper_modules() -> list[Any]:
    """Each paper package's ``feasibility`` module (papers without one are skipped), installed ones included
    (:func:`fedbounds.theory.registry.discover_papers`)."""
    from fedbounds.theory.registry import discover_papers

    discover_papers()
    modules = []
    for package in PAPER_PACKAGES:
        try:
            modules.append(importlib.import_module(f"{package}.feasibility"))
        except ModuleNotFoundError as exc:
            if exc.name != f"{package}.feasibility":
                raise
    return modules


def _load_papers() -> None:
    """Register the declarations of every paper package in the registry (``<package>.feasibility``)."""
    for module in _paper_modules():
        if module.__name__ in _loaded:
            continue
        _loaded.add(module.__name__)
        for spec in getattr(module, "DECLARATIONS", ()):
            register_theorem(spec, replace=True)


def report_sections(result: Any) -> tuple[Any, ...]:
    """The extra sections the result's paper adds to its report (its ``feasibility.report_sections`` hook, if any;
    FedNMap: the PEP-certified steps)."""
    for module in _paper_modules():
        hook = getattr(module, "report_sections", None)
        if hook is not None and result.theorem in {s.name for s in getattr(module, "DECLARATIONS", ())}:
            return tuple(hook(result))
    return ()


_load_papers()

#: the papers' theorems (registered at import, in the registry's paper order)
THEOREMS: tuple[str, ...] = tuple(s.name for s in registered())
#: the papers' short aliases (each theorem's first alias, in order)
ALIASES: tuple[str, ...] = tuple(dict.fromkeys(s.aliases[0] for s in registered() if s.aliases))


def declarations() -> tuple[TheoremSpec, ...]:
    """Every registered theorem's declaration: the papers' and any added by :func:`register_theorem`."""
    _load_papers()
    return registered()


def _names() -> str:
    specs = declarations()
    aliases = dict.fromkeys(s.aliases[0] for s in specs if s.aliases)
    return ", ".join([s.name for s in specs] + list(aliases))


def resolve_theorem(theorem: str, constants: Mapping[str, Any] | None = None, params: Mapping[str, Any] | None = None) -> str:
    """The full theorem name for ``theorem`` (an alias is resolved from the inputs); ValueError if unknown."""
    _load_papers()
    given = [k for k, v in {**(constants or {}), **(params or {})}.items() if v is not None]
    name = resolve_alias(theorem, given) if isinstance(theorem, str) else None
    if name is None:
        raise ValueError(f"theorem must be one of {_names()}, got {theorem!r}")
    return name


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

    Invalid or contradictory input raises ValueError naming the parameter and its allowed range; so does
    input whose answer double precision cannot hold (L = 1e308, say), naming the most extreme input.
    """
    if not isinstance(theorem, str):
        raise ValueError(f"theorem must be one of {_names()}, got {theorem!r}")
    if not isinstance(constants, Mapping):
        raise ValueError(f"constants must be a mapping of names to values, got {type(constants).__name__}")
    params = dict(params or {})
    name = resolve_theorem(theorem, constants, params)
    eps = epsilon_from(target)
    spec = next(s for s in declarations() if s.name == name)
    return solve(spec, constants, params, eps, problem)
