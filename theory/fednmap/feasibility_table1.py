"""The problem class of a FedNMap feasibility query, and the Table 1 comparison (FedNMap, arXiv 2602.03357).

Table 1 itself (methods, assumptions, rates) is data of the theory layer (:mod:`fedbounds.theory.fednmap.table1`); this
module only decides, row by row, whether the problem meets the row's assumptions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import sympy as sp
from fedbounds.theory.core.feasibility import Table1Row, check_keys, text, value_of
from fedbounds.theory.core.symbols import T


@dataclass(frozen=True)
class ProblemClass:
    """What is known about the problem (``None`` = unknown).

    ``f_convex`` / ``f_strongly_convex``: f = (1/n) sum f_i convex / strongly convex; ``pl``: psi satisfies
    the proximal-PL inequality (2) (Assumption 4); ``phi_convex``: phi convex (rho = 0);
    ``quadratic``: every f_i quadratic; ``bounded_heterogeneity``: ||grad f_i - grad f||^2 <= zeta^2
    everywhere; ``bounded_iterates``; ``bounded_subgradients`` (B_psi in Table 1); ``single_local_step``: Q = 1.
    """

    f_convex: bool | None = None
    f_strongly_convex: bool | None = None
    pl: bool | None = None
    phi_convex: bool | None = None
    quadratic: bool | None = None
    bounded_heterogeneity: bool | None = None
    bounded_iterates: bool | None = None
    bounded_subgradients: bool | None = None
    single_local_step: bool | None = None

    def as_dict(self) -> dict[str, bool | None]:
        return asdict(self)


#: aliases accepted in a problem-class mapping
_ALIASES = {
    "convex": "f_convex",
    "strongly_convex": "f_strongly_convex",
    "scvx": "f_strongly_convex",
    "cvx": "f_convex",
    "psi_pl": "pl",
}


def problem_class(consts: Mapping[str, float], given: ProblemClass | Mapping[str, Any] | None) -> ProblemClass:
    """The problem class from the flags given, completed from the constants.

    Inferred: ``phi_convex`` from rho (= 0 iff convex); ``pl`` is True when mu is given (Assumption 4 with
    that mu); ``bounded_heterogeneity`` True when zeta2 is given; ``single_local_step`` from Q; f strongly
    convex implies f convex. Contradictions (mu given but ``pl=False``, ``f_strongly_convex`` without
    ``f_convex``, ``phi_convex`` with rho > 0) raise ValueError.
    """
    if given is None:
        flags: dict[str, Any] = {}
    elif isinstance(given, ProblemClass):
        flags = given.as_dict()
    else:
        flags = {_ALIASES.get(k, k): v for k, v in given.items()}
        check_keys("problem-class flag", flags.keys(), list(ProblemClass.__dataclass_fields__))
    for k, v in flags.items():
        if v is not None and not isinstance(v, bool):
            raise ValueError(f"problem-class flag {k} must be True, False or None, got {v!r}")
    rho = consts.get("rho", 0.0)
    if flags.get("phi_convex") is True and rho > 0:
        raise ValueError(f"phi_convex=True needs rho = 0 (a convex phi), got rho = {rho:g}")
    if flags.get("phi_convex") is None:
        flags["phi_convex"] = rho == 0
    if "mu" in consts:
        if flags.get("pl") is False:
            raise ValueError("pl=False contradicts mu: mu is the proximal-PL constant of Assumption 4 (omit mu, or drop pl=False)")
        flags["pl"] = True
    if flags.get("f_strongly_convex"):
        if flags.get("f_convex") is False:
            raise ValueError("f_strongly_convex=True contradicts f_convex=False")
        flags["f_convex"] = True
        if flags.get("phi_convex") and flags.get("pl") is None:
            flags["pl"] = True  # strongly convex f + convex phi => psi proximal PL (Karimi et al. 2016)
    if "zeta2" in consts and flags.get("bounded_heterogeneity") is None:
        flags["bounded_heterogeneity"] = True
    if flags.get("single_local_step") is None and "Q" in consts:
        flags["single_local_step"] = consts["Q"] == 1
    return ProblemClass(**flags)


def table1_comparison(
    consts: Mapping[str, float],
    given: ProblemClass | Mapping[str, Any] | None,
    env: Mapping[sp.Symbol, float],
    horizon: int | None,
) -> tuple[dict[str, bool | None], tuple[Table1Row, ...]]:
    """The problem class, and the Table 1 rows with whether the problem meets each row's assumptions."""
    pc = problem_class(consts, given)
    from fedbounds.theory.fednmap import table1

    return pc.as_dict(), _rows(table1, pc, env, horizon)


#: requirements every problem of the FedNMap setting meets (no convexity of f; phi weakly convex, Assumption 3)
_ALWAYS_MET = ("f_nonconvex", "phi_weakly_convex")


def _rows(table1: Any, pc: ProblemClass, env: Mapping[sp.Symbol, float], horizon: int | None) -> tuple[Table1Row, ...]:
    """Each Table 1 row with ``applies`` True (every assumption met), False (one fails) or None (one unknown)."""
    rows = []
    tenv = dict(env)
    if horizon is not None:
        tenv[T] = horizon
    for row in table1.TABLE1:
        applies: bool | None = True
        reasons = []
        for req in row.requires:
            if req in _ALWAYS_MET:
                continue
            met = getattr(pc, req, None)
            if met is False:
                applies = False
                reasons.append(f"needs {req}: not met")
            elif met is None:
                if applies:
                    applies = None
                reasons.append(f"needs {req}: unknown")
        rate_value = None if row.rate is None else value_of(row.rate, tenv)
        rows.append(
            Table1Row(
                method=row.method,
                reference=row.reference,
                objective=row.objective,
                regularizer=row.regularizer,
                assumptions=row.assumptions,
                rate="Not established" if row.rate is None else f"{row.rate_kind}({text(row.rate)})",
                applies=applies,
                reasons=tuple(reasons),
                rate_value=rate_value,
            )
        )
    return tuple(rows)
