"""The declaration language: a theorem's parameters, conditions, guarantee and unknown constants as data
(:class:`TheoremSpec`), and the registry of declared theorems."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import sympy as sp
from fedbounds.theory.core.feasibility.numeric import (
    check_int,
    check_positive,
    sigma2_from,
)
from fedbounds.theory.core.feasibility.results import (
    ConditionResult,
    Guarantee,
    RoundsNeeded,
    Table1Row,
)

# ---------------------------------------------------------------------------------------------------------
# declarations: a theorem's parameters, conditions, guarantee and unknown constants, as data
# ---------------------------------------------------------------------------------------------------------

_DOMAINS = {"positive": "> 0", "nonnegative": ">= 0", "integer": "an integer >= {minimum}", "sigma2": ">= 0"}


@dataclass(frozen=True)
class Param:
    """One input of a theorem: a problem constant or a parameter (step size, window, horizon).

    ``domain``: ``"positive"`` (> 0), ``"nonnegative"`` (>= 0), ``"integer"`` (>= ``minimum``) or ``"sigma2"``
    (the noise variance, given as ``sigma2`` or ``sigma``). ``default``: a number, or the name of another
    constant (DS FedProxGrad: rho defaults to L_f), used when the input is missing; ``default_note`` then
    goes to the result's notes. ``horizon``: this parameter is the guarantee's horizon (T, R). ``cap``: an
    expression in the constants that the parameter must stay below (FedNMap: gamma < 1/rho), used as the
    end of its implied feasible interval.
    """

    name: str
    symbol: sp.Symbol | None
    domain: str = "positive"
    required: bool = False
    minimum: int = 1
    default: float | str | None = None
    default_note: str = ""
    horizon: bool = False
    cap: sp.Expr | None = None
    required_message: str = ""
    help: str = ""
    #: the command-line flag (default ``--`` + the name with ``_`` as ``-``: ``eta_a`` -> ``--eta-a``)
    flag: str = ""

    def allowed(self) -> str:
        """The allowed range in words: ``> 0``, ``>= 0``, ``an integer >= 1``."""
        return _DOMAINS[self.domain].format(minimum=self.minimum)

    def keys(self) -> tuple[str, ...]:
        """The input names that set this parameter (``sigma`` and ``sigma2`` for the noise variance)."""
        return ("sigma", "sigma2") if self.domain == "sigma2" else (self.name,)

    def flags(self) -> tuple[tuple[str, str], ...]:
        """``(flag, input name)`` pairs for the command line (``fedbounds feasible`` builds its options from them)."""
        if self.domain == "sigma2":
            return (("--sigma", "sigma"), ("--sigma2", "sigma2"))
        return ((self.flag or "--" + self.name.replace("_", "-"), self.name),)

    def check(self, values: Mapping[str, Any]) -> float:
        """The validated value from ``values`` (ValueError naming the parameter and its range)."""
        if self.domain == "sigma2":
            return sigma2_from(values)
        value = values[self.name]
        if self.domain == "integer":
            return check_int(self.name, value, self.minimum)
        return check_positive(self.name, value, strict=self.domain == "positive")


@dataclass(frozen=True)
class Condition:
    """One hypothesis of a theorem: ``value <= bound``, or (``region``) ``parameter`` in a set.

    ``value`` is the expression compared (default: the parameter's symbol), ``lhs`` the same value written in
    the free parameters for the bounds the condition implies on each of ``implied`` (FedNMap: etahat =
    eta_s eta_a Q). ``unless_zero`` names a constant whose value 0 removes the condition (rho = 0: no
    weak-convexity bound); ``if_given`` lists parameters of which one must be given for the condition to be
    shown; ``given_by`` the parameters whose being given means the value was given (else
    ``note_if_not_given``). ``note`` may use ``{key}`` fields of the result's step sizes.
    """

    name: str
    label: str
    status: str
    parameter: str
    bound: sp.Expr | None = None
    value: sp.Expr | None = None
    lhs: sp.Expr | None = None
    implied: tuple[sp.Symbol, ...] = ()
    region: sp.Basic | None = None
    required: bool = True
    unless_zero: str | None = None
    if_given: tuple[str, ...] = ()
    given_by: tuple[str, ...] = ()
    note_if_not_given: str = ""
    note: str = ""


@dataclass(frozen=True)
class TermSpec:
    """One term of a guarantee. ``flag``: ``"exact"`` (exact once its constants are known) or ``"O"`` (an
    O-term: constants lost). ``note`` is always shown; ``note_if_unknown`` while a declared unknown remains."""

    name: str
    expression: sp.Expr
    flag: str = "exact"
    note: str = ""
    note_if_unknown: str = ""


@dataclass(frozen=True)
class Unknown:
    """A constant the paper leaves unknown: where it may be given (``key``) and how it is reported."""

    symbol: sp.Symbol
    key: str
    description: str


@dataclass(frozen=True)
class GuaranteeSpec:
    """What the theorem promises: ``quantity relation sum(terms)`` at the horizon ``horizon``.

    ``floor``: the bound as the horizon grows (an expression, a number, or None). ``complexity``: the paper's
    O-complexity in epsilon, reported beside the rounds. ``rounds_start``: the smallest horizon (a number,
    or a step-size key such as ``"R_min"``). ``note`` may use ``{key}`` fields of the step sizes.

    The hooks handle what is genuinely special: ``build`` (the whole guarantee), ``symbolic_rounds`` (the
    rounds in the unknown constants), ``unreachable_hint`` (what would reach epsilon), ``rounds`` (the
    whole rounds answer). Without hooks the generic solver evaluates the terms, finds the exact rounds by
    search, and solves the bound for the horizon with sympy when an unknown remains.
    """

    claim: str
    quantity: str
    relation: str = "<="
    horizon: sp.Symbol | None = None
    terms: tuple[TermSpec, ...] = ()
    floor: sp.Expr | float | None = None
    complexity: sp.Expr | None = None
    rounds_start: int | str = 0
    note: str = ""
    note_if_unknown: str = ""
    build: Callable[[Point], Guarantee] | None = None
    symbolic_rounds: Callable[[Point, float], RoundsNeeded] | None = None
    unreachable_hint: Callable[[Point, float], tuple[str, dict[str, float] | None]] | None = None
    rounds: Callable[[Point, float], RoundsNeeded] | None = None

    @property
    def bound(self) -> sp.Expr:
        """The bound: the sum of the terms."""
        return sp.Add(*(t.expression for t in self.terms))


@dataclass(frozen=True)
class TheoremSpec:
    """A theorem of the feasibility calculator, as data; :func:`solve` is the one solver that reads it.

    ``constants`` / ``params``: the inputs in report order (see :class:`Param`); ``key_aliases``: other
    spellings of constant names. ``derived``: constants computed from others, ``(name, symbol, expr)``
    (DS FedProxGrad's L_F). ``conditions``, ``guarantee`` and ``unknowns`` are the theorem's content.
    ``aliases``: other names of the theorem; where several theorems share an alias, the one whose
    ``alias_when`` input is given is chosen, else the one without ``alias_when``.

    Hooks (small, named, per theorem): ``checks`` validate combinations of inputs; ``choose`` sets the point
    (default: every missing parameter at its largest admissible value, :func:`choose_largest`); ``finish``
    adds what only this theorem reports (FedNMap's Table 1, DS FedProxGrad's constant-step floor).
    ``region``: ``(name, margin)`` pairs, margins >= 0 iff met, for plots in the plane of two of
    ``region_symbols``; ``region_links``: ``(axis, replaced symbol, expression)``.
    """

    name: str
    title: str
    constants: tuple[Param, ...]
    params: tuple[Param, ...]
    conditions: tuple[Condition, ...]
    guarantee: GuaranteeSpec
    unknowns: tuple[Unknown, ...] = ()
    aliases: tuple[str, ...] = ()
    alias_when: str | None = None
    key_aliases: tuple[tuple[str, str], ...] = ()
    required_for: str = ""
    derived: tuple[tuple[str, sp.Symbol, sp.Expr], ...] = ()
    notes: tuple[str, ...] = ()
    checks: tuple[Callable[[Point], None], ...] = ()
    choose: Callable[[Point], None] | None = None
    finish: tuple[Callable[[Point], None], ...] = ()
    region: tuple[tuple[str, sp.Expr, str | None], ...] = ()
    region_symbols: tuple[tuple[str, sp.Symbol], ...] = ()
    region_links: tuple[tuple[str, sp.Symbol, sp.Expr], ...] = ()
    accepts_problem: bool = False
    implied_rel_tol: float = 0.0
    binding_ties: str = "first"
    #: yes/no facts about the problem (``(name, help)``), passed as ``problem`` (FedNMap's Table 1 class)
    problem_flags: tuple[tuple[str, str], ...] = ()
    #: the plot's default plane (two of ``region_symbols``)
    default_axes: tuple[str, str] | None = None
    #: one line for ``fedbounds feasible --help``: what the theorem says and where it is documented
    summary: str = ""
    #: what the answer stands on where it is not the theorem's own text (FedNMap Theorem 8: Theorem 5's conditions
    #: stand in for its lost ones); printed right under the answer, empty for a theorem that stands on its own
    footing: str = ""

    def param(self, name: str) -> Param | None:
        """The constant or parameter called ``name``."""
        return next((p for p in self.constants + self.params if p.name == name), None)

    def name_of(self, symbol: sp.Symbol) -> str:
        """The input name of a parameter symbol (its sympy name if it has none)."""
        return next((p.name for p in self.params if p.symbol == symbol), str(symbol))

    @property
    def horizon(self) -> Param | None:
        """The horizon parameter (T, R), if any."""
        return next((p for p in self.params if p.horizon), None)


@dataclass
class Point:
    """The solver's working state for one query: the validated inputs and what the hooks add.

    ``consts`` / ``params``: the validated inputs by name; ``env``: symbol -> value (constants, derived
    constants and the chosen parameters); ``chosen``, ``step_sizes``, ``notes``, ``info`` (scratch for the
    hooks), and the pieces of the answer once they exist.
    """

    spec: TheoremSpec
    consts: dict[str, float]
    params: dict[str, float]
    given: tuple[str, ...]
    env: dict[sp.Symbol, float]
    eps: float | None
    horizon: int | None
    problem: Any = None
    raw: dict[str, float] = field(default_factory=dict)
    chosen: dict[str, float] = field(default_factory=dict)
    step_sizes: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    derived: dict[str, float] = field(default_factory=dict)
    conditions: tuple[ConditionResult, ...] = ()
    binding_by_parameter: dict[str, str] = field(default_factory=dict)
    guarantee: Guarantee | None = None
    rounds: RoundsNeeded | None = None
    table1: tuple[Table1Row, ...] = ()
    problem_class: dict[str, bool | None] = field(default_factory=dict)



# ---------------------------------------------------------------------------------------------------------
# the registry of declared theorems
# ---------------------------------------------------------------------------------------------------------

_REGISTRY: dict[str, TheoremSpec] = {}


def register_theorem(spec: TheoremSpec, *, replace: bool = False) -> TheoremSpec:
    """Make ``spec`` answerable by :func:`fedbounds.theory.feasibility.feasibility` (and ``fedbounds feasible``'s solver).

    A new theorem costs only this declaration: its parameters with their ranges, its conditions and
    guarantee as sympy expressions from a formulas module, its unknown constants and aliases. ValueError if
    the name is taken (unless ``replace``) or the declaration is inconsistent. Returns ``spec``.
    """
    if not isinstance(spec, TheoremSpec):
        raise ValueError(f"register_theorem needs a TheoremSpec, got {type(spec).__name__}")
    if spec.name in _REGISTRY and not replace:
        raise ValueError(f"theorem {spec.name!r} is already registered")
    names = [p.name for p in spec.constants + spec.params]
    if len(set(names)) != len(names):
        raise ValueError(f"{spec.name}: duplicate input names in {names}")
    for c in spec.conditions:
        if c.region is None and c.bound is None:
            raise ValueError(f"{spec.name}: condition {c.name!r} has neither a bound nor a region")
        if c.value is None and c.region is None and (spec.param(c.parameter) is None or spec.param(c.parameter).symbol is None):
            raise ValueError(f"{spec.name}: condition {c.name!r} compares {c.parameter!r}, which is no declared parameter")
    _REGISTRY[spec.name] = spec
    return spec


def unregister_theorem(name: str) -> None:
    """Remove a registered theorem (no error if it is not registered)."""
    _REGISTRY.pop(name, None)


def registered() -> tuple[TheoremSpec, ...]:
    """The registered declarations, in registration order."""
    return tuple(_REGISTRY.values())


def resolve_alias(name: str, given: Iterable[str]) -> str | None:
    """The theorem called ``name`` or aliased by it (chosen by which inputs are ``given``); None if unknown."""
    if name in _REGISTRY:
        return name
    given = set(given)
    candidates = [s for s in _REGISTRY.values() if name in s.aliases]
    for s in candidates:
        if s.alias_when is not None and s.alias_when in given:
            return s.name
    return next((s.name for s in candidates if s.alias_when is None), candidates[0].name if candidates else None)
