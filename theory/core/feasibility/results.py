"""The calculator's result types (a condition's outcome, the guarantee, the rounds needed, Table 1 rows, the
whole answer) and how they print: text, LaTeX, JSON."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import sympy as sp
from fedbounds.theory.core.feasibility.intervals import (
    ParamBound,
)
from fedbounds.theory.core.feasibility.numeric import (
    evaluate,
    latex,
    meets_upper,
)

# ---------------------------------------------------------------------------------------------------------
# result types
# ---------------------------------------------------------------------------------------------------------


def _num(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


@dataclass(frozen=True)
class ConditionResult:
    """One hypothesis of a theorem, evaluated at the chosen point.

    ``relation`` is the theory's sympy relation (``parameter <= bound``), ``bound`` its right-hand side at
    the given constants and the other parameters, ``value`` the parameter's chosen value. ``margin`` is
    ``bound - value`` and ``ratio`` is ``bound / value`` (>= 1 iff met) for an upper bound. ``implied``
    lists the bound the same condition places on each other parameter, the rest held fixed.
    ``required`` is False for a condition that need only hold eventually (DS FedProxGrad's absorption
    threshold under a decaying schedule).
    """

    name: str
    label: str
    status: str
    parameter: str
    relation: sp.Basic
    bound: float
    value: float | None
    meets: bool | None
    margin: float | None
    ratio: float | None
    implied: tuple[ParamBound, ...] = ()
    required: bool = True
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": self.label,
            "status": self.status,
            "parameter": self.parameter,
            "relation": str(self.relation),
            "latex": latex(self.relation),
            "bound": _num(self.bound),
            "value": _num(self.value),
            "meets": self.meets,
            "margin": _num(self.margin),
            "ratio": _num(self.ratio),
            "required": self.required,
            "implied": [b.to_dict() for b in self.implied],
            "note": self.note,
        }


def upper_condition(
    name: str,
    label: str,
    status: str,
    parameter: str,
    symbol: sp.Symbol,
    rhs: sp.Basic,
    values: Mapping[sp.Symbol, float],
    value: float | None,
    *,
    implied: tuple[ParamBound, ...] = (),
    required: bool = True,
    note: str = "",
) -> ConditionResult:
    """Evaluate ``symbol <= rhs`` (a theory expression) at ``values``; ``value`` is the parameter's value."""
    bound = evaluate(rhs, values)
    if value is None:
        meets = margin = ratio = None
    else:
        meets = meets_upper(value, bound)
        margin = bound - value
        ratio = bound / value if value > 0 else math.inf
    return ConditionResult(
        name=name,
        label=label,
        status=status,
        parameter=parameter,
        relation=sp.Le(symbol, rhs, evaluate=False),
        bound=bound,
        value=value,
        meets=meets,
        margin=margin,
        ratio=ratio,
        implied=implied,
        required=required,
        note=note,
    )


@dataclass(frozen=True)
class Term:
    """One term of a guarantee: its expression (known constants substituted), and its value if known.

    ``flag`` is ``"exact"`` (every constant known), ``"unknown"`` (the paper leaves a constant unknown;
    ``unknowns`` names it) or ``"O"`` (an O-expression: its constants are lost, the value is indicative).
    """

    name: str
    expression: sp.Basic
    value: float | None
    flag: str = "exact"
    unknowns: tuple[str, ...] = ()
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "expression": str(self.expression),
            "latex": latex(self.expression),
            "value": _num(self.value),
            "flag": self.flag,
            "unknowns": list(self.unknowns),
            "note": self.note,
        }


@dataclass(frozen=True)
class Guarantee:
    """What the theorem promises at the chosen parameters: ``quantity relation sum(terms)``."""

    claim: str
    quantity: str
    relation: str
    horizon_name: str
    horizon: int | None
    terms: tuple[Term, ...]
    total: float | None
    floor: float | None = None
    flag: str = "exact"
    note: str = ""
    extra_terms: tuple[Term, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "claim": self.claim,
            "quantity": self.quantity,
            "relation": self.relation,
            "horizon_name": self.horizon_name,
            "horizon": self.horizon,
            "terms": [t.to_dict() for t in self.terms],
            "total": _num(self.total),
            "floor": _num(self.floor),
            "flag": self.flag,
            "note": self.note,
            "extra_terms": [t.to_dict() for t in self.extra_terms],
        }


@dataclass(frozen=True)
class RoundsNeeded:
    """Rounds needed to reach ``epsilon``.

    ``flag``: ``"exact"`` (``rounds`` is the smallest horizon whose bound is <= epsilon), ``"symbolic"``
    (exact but in terms of constants the paper leaves unknown: ``expression``), ``"O"`` (an O-expression,
    its constants lost) or ``"unreachable"`` (the bound's floor exceeds epsilon).
    """

    epsilon: float
    horizon_name: str
    rounds: int | None
    flag: str
    expression: sp.Basic | None = None
    message: str = ""
    o_expression: sp.Basic | None = None
    #: where ``flag == "unreachable"``: step sizes (and window) at which the bound's floor is below epsilon
    suggestion: dict[str, float] | None = None
    #: where ``flag == "symbolic"``: the rounds at stated reference values of the unknown constants
    #: (``reference``, each named with where it comes from in ``reference_note``)
    reference_rounds: int | None = None
    reference: dict[str, float] | None = None
    reference_note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "reference_rounds": self.reference_rounds,
            "reference": self.reference,
            "reference_note": self.reference_note,
            "suggestion": self.suggestion,
            "epsilon": self.epsilon,
            "horizon_name": self.horizon_name,
            "rounds": self.rounds,
            "flag": self.flag,
            "expression": None if self.expression is None else str(self.expression),
            "o_expression": None if self.o_expression is None else str(self.o_expression),
            "message": self.message,
        }


@dataclass(frozen=True)
class Table1Row:
    """A Table 1 method and whether the problem meets its assumptions (``applies``: True/False/None)."""

    method: str
    reference: str
    objective: str
    regularizer: str
    assumptions: str
    rate: str
    applies: bool | None
    reasons: tuple[str, ...] = ()
    rate_value: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "reference": self.reference,
            "objective": self.objective,
            "regularizer": self.regularizer,
            "assumptions": self.assumptions,
            "rate": self.rate,
            "applies": self.applies,
            "reasons": list(self.reasons),
            "rate_value": _num(self.rate_value),
        }


@dataclass(frozen=True)
class FeasibilityResult:
    """The calculator's answer for one theorem (see :func:`fedbounds.theory.feasibility.feasibility`).

    ``chosen`` is the point evaluated: the given parameters, the missing ones set to their largest
    admissible values. ``binding`` names the condition(s) with the least slack (smallest ratio) there;
    ``binding_by_parameter`` the condition giving each parameter its smallest upper bound. ``region``
    maps each condition name to its margin (bound - value, >= 0 iff met) as a sympy expression in the
    parameter symbols ``region_symbols``, the constants substituted (for plots of the feasible region);
    ``region_links`` says which symbol a derived parameter replaces when it is an axis of such a plot
    (FedNMap: plotting ``eta_s`` replaces etahat by eta_s eta_a Q).
    """

    theorem: str
    title: str
    constants: dict[str, float]
    chosen: dict[str, float]
    given: tuple[str, ...]
    conditions: tuple[ConditionResult, ...]
    admissible: bool
    binding: tuple[str, ...]
    binding_by_parameter: dict[str, str]
    step_sizes: dict[str, Any]
    guarantee: Guarantee
    rounds_needed: RoundsNeeded | None
    table1: tuple[Table1Row, ...] = ()
    problem_class: dict[str, bool | None] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    #: what the answer stands on where it is not the theorem's own text (``TheoremSpec.footing``)
    footing: str = ""
    region: dict[str, sp.Basic] = field(default_factory=dict, compare=False)
    region_symbols: dict[str, sp.Symbol] = field(default_factory=dict, compare=False)
    region_links: dict[str, tuple[sp.Symbol, sp.Basic]] = field(default_factory=dict, compare=False)

    def footing_line(self) -> str:
        """One line: which conditions stand in for which (``footing``) and which reference values of the
        unknown constants the rounds assume; empty when the answer stands on the theorem alone."""
        parts = [self.footing] if self.footing else []
        rn = self.rounds_needed
        if rn is not None and rn.reference:
            flags = ", ".join(f"--{k.replace('_', '')}" for k in rn.reference if k.isidentifier())
            parts.append(f"{rn.horizon_name} assumes {reference_text(rn.reference)}" + (f" ({flags} set yours)" if flags else ""))
        return "Footing: " + "; ".join(parts) if parts else ""

    def condition(self, name: str) -> ConditionResult:
        """The condition called ``name`` (ValueError listing the names otherwise)."""
        for c in self.conditions:
            if c.name == name:
                return c
        raise ValueError(f"no condition {name!r}; conditions: {', '.join(c.name for c in self.conditions)}")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (sympy expressions as strings, with LaTeX beside them)."""
        return {
            "theorem": self.theorem,
            "title": self.title,
            "constants": {k: _num(v) for k, v in self.constants.items()},
            "chosen": {k: _num(v) for k, v in self.chosen.items()},
            "given": list(self.given),
            "admissible": self.admissible,
            "conditions": [c.to_dict() for c in self.conditions],
            "binding": list(self.binding),
            "binding_by_parameter": dict(self.binding_by_parameter),
            "step_sizes": {k: _num(v) for k, v in self.step_sizes.items()},
            "guarantee": self.guarantee.to_dict(),
            "rounds_needed": None if self.rounds_needed is None else self.rounds_needed.to_dict(),
            "table1": [r.to_dict() for r in self.table1],
            "problem_class": dict(self.problem_class),
            "notes": list(self.notes),
            "footing": self.footing_line(),
        }

    def to_latex(self) -> str:
        """The conditions (with their values here), the guarantee's terms and the rounds, as a LaTeX fragment a paper
        can ``\\input``: one ``align*`` (amsmath), its packages named in a comment at the top, numbers as
        ``6.74 \\times 10^{-5}``, symbols in the papers' notation."""
        lines = [
            f"% fedbounds feasible: {self.theorem} ({self.title})",
            "% a fragment for \\input; it needs \\usepackage{amsmath,amssymb} (align*, \\checkmark, \\mathbb)",
            r"\begin{align*}",
        ]
        for c in self.conditions:
            mark = r"\checkmark" if c.meets else (r"\times" if c.meets is False else "?")
            lhs = latex(c.relation.lhs) if isinstance(c.relation, sp.Rel) else latex(sp.Symbol(c.parameter))
            val = "" if c.value is None else rf"\quad {lhs} = {tex_number(c.value)}"
            bound = f" = {tex_number(c.bound)}" if isinstance(c.relation, sp.Rel) else ""
            lines.append(rf"&{latex(c.relation)}{bound} && {mark}{val} \\  % {c.name}")
        g = self.guarantee
        rel = {"<=": r"\le", "O": r"= \mathcal{O}", "->": r"\to"}.get(g.relation, g.relation)
        body = " + ".join(latex(_rounded(t.expression)) for t in g.terms) if g.terms else "0"
        if g.relation == "O":
            body = r"\left(" + body + r"\right)"
        lines.append(rf"&{quantity_latex(g.quantity)} {rel} {body} \\  % {g.claim}")
        if g.floor is not None:
            lines.append(rf"&\text{{floor}} \le {tex_number(g.floor)} \\")
        if self.rounds_needed is not None:
            rn = self.rounds_needed
            eps = rf"\quad (\varepsilon = {tex_number(rn.epsilon)})"
            horizon = latex(sp.Symbol(rn.horizon_name)) if rn.horizon_name else "T"
            if rn.rounds is not None:
                at = rf",\ \text{{at }} {_reference_latex(rn.reference)}" if rn.reference else ""
                lines.append(rf"&{horizon} \ge {tex_number(rn.rounds)}{eps}{at} \\")
            if isinstance(rn.expression, sp.Rel):
                lines.append(rf"&{latex(_rounded(rn.expression))}{eps} \\")
            elif rn.expression is not None:
                op = r"= \mathcal{O}" if rn.flag == "O" else r"\ge"
                lines.append(rf"&{horizon} {op}\left({latex(_rounded(rn.expression))}\right){eps} \\")
            elif rn.rounds is None:
                lines.append(rf"&{_tex_text(rn.message)} \\")
        lines.append(r"\end{align*}")
        return "\n".join(lines)


def tex_number(x: float | int, digits: int = 3) -> str:
    """A number for LaTeX maths: ``6.74 \\times 10^{-5}``, ``0.0976``, ``165\\,492`` (integers exact)."""
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) < 1e15):
        k = int(x)
        return f"{k:,}".replace(",", r"\,")
    if not math.isfinite(x):
        return r"\infty" if x > 0 else (r"-\infty" if x < 0 else r"\text{nan}")
    mant, _, exp = f"{x:.{digits}g}".partition("e")
    return mant if not exp else rf"{mant} \times 10^{{{int(exp)}}}"


def _rounded(expr: sp.Basic, digits: int = 4) -> sp.Basic:
    """``expr`` with its floats to ``digits`` significant digits (LaTeX shows them as ``4.438 \\cdot 10^{-5}``)."""
    return expr.xreplace({f: sp.Float(f, digits) for f in expr.atoms(sp.Float)})


#: the guarantees' quantities in the papers' notation (a quantity not listed prints as text)
QUANTITY_LATEX = {
    "E[psi(x_T)] - psi*": r"\mathbb{E}[\psi(x_T)] - \psi^{\star}",
    "(1/T) sum_t E||F_nor^gamma(z_t)||^2 (reconstructed reading)":
        r"\frac{1}{T}\sum_{t} \mathbb{E}\|F^{\gamma}_{\mathrm{nor}}(z_t)\|^2",
    "liminf_{r->oo} E||grad F(x^r)||^2": r"\liminf_{r\to\infty} \mathbb{E}\|\nabla F(x^r)\|^2",
    "(1/R) sum_{r<R} E||grad F(x^r)||^2": r"\frac{1}{R}\sum_{r<R} \mathbb{E}\|\nabla F(x^r)\|^2",
    "psi(x_T) - psi*": r"\psi(x_T) - \psi^{\star}",
}


def quantity_latex(quantity: str) -> str:
    """A guarantee's quantity in the papers' notation (:data:`QUANTITY_LATEX`), else as text."""
    return QUANTITY_LATEX.get(quantity, _tex_text(quantity))


def _reference_latex(reference: Mapping[str, float]) -> str:
    from fedbounds.theory.core import symbols as s

    names = {"C_0": latex(s.C_0), "EL_0": latex(s.EL_0), "Delta_r0 + Xi_sum": latex(s.Delta_r0 + s.Xi_sum)}
    return ",\\ ".join(f"{names.get(k, _tex_text(k))} = {tex_number(v)}" for k, v in reference.items())


#: how the reference constants print (the papers' notation)
_REFERENCE_NAMES = {"EL_0": "E[L_0]"}

def reference_text(reference: Mapping[str, float]) -> str:
    """``C_0 = 1, E[L_0] = 1``: reference values of unknown constants, in the papers' notation."""
    return ", ".join(f"{_REFERENCE_NAMES.get(k, k)} = {v:g}" for k, v in reference.items())


_TEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "_": r"\_",
    "^": r"\^{}",
    "{": r"\{",
    "}": r"\}",
    "%": r"\%",
    "&": r"\&",
    "#": r"\#",
    "~": r"\~{}",
    "$": r"\$",
}


def _tex_text(text: str) -> str:
    """``\\text{...}`` with LaTeX's text-mode specials escaped."""
    return r"\text{" + "".join(_TEX_SPECIALS.get(ch, ch) for ch in text) + "}"


def binding_of(conditions: Iterable[ConditionResult], tol: float = 1e-9) -> tuple[str, ...]:
    """The required condition(s) with the smallest ratio bound / value (least slack), ties within ``tol``."""
    rated = [c for c in conditions if c.required and c.ratio is not None and math.isfinite(c.ratio)]
    if not rated:
        return ()
    best = min(c.ratio for c in rated)  # type: ignore[type-var]
    return tuple(c.name for c in rated if c.ratio <= best * (1 + tol))  # type: ignore[operator]
