"""Machine-checked proof steps: every algebraic step of the two papers' arguments, decided by sympy.

Each step is a function returning a :class:`StepResult`, a list of :class:`Part` s, each either

* an **identity** (``kind="zero"``): ``residual`` simplifies to 0; or
* an **inequality** reduced to ``residual >= 0`` (``kind="nonnegative"``) whose sign sympy decides from the
  symbols' assumptions (positive / nonnegative), after substituting the step-size conditions through
  positive parameters (``eta = t/(6 L_F)`` with ``t = 1/(1 + s)``, ``s >= 0``, encodes ``0 < eta <= 1/(6 L_F)``); or
* a **quadratic form** (``kind="psd"``): ``residual`` is a homogeneous quadratic whose matrix sympy proves
  positive semidefinite (Young's inequality, ``||a + b + c||^2 <= 3 (...)``, ``(a + b)^2 <= 2a^2 + 2b^2``).

The constants of each step are keyword arguments whose defaults are the paper's; the teeth tests change one
and check that the step then fails and that :func:`counterexample` finds admissible values violating it.
Steps are registered in :data:`STEPS` under their function names, which the claims cite (``Claim.proof``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass

import sympy as sp

__all__ = ["STEPS", "Part", "StepResult", "counterexample", "decide_nonnegative", "decide_psd", "decide_zero", "run_step", "steps"]


# ---------------------------------------------------------------------------------------------------------
# results and deciders
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """One decided sub-claim of a step."""

    name: str
    kind: str  # "zero" | "nonnegative" | "psd" | "true"
    proved: bool
    residual: sp.Basic
    variables: tuple[sp.Symbol, ...] = ()  # for "psd": the variables of the quadratic form


@dataclass(frozen=True)
class StepResult:
    """A proof step: its name, where it sits in the paper, and its decided parts."""

    name: str
    label: str
    parts: tuple[Part, ...]

    @property
    def proved(self) -> bool:
        return all(p.proved for p in self.parts)

    def __bool__(self) -> bool:
        return self.proved

    def failed(self) -> tuple[Part, ...]:
        return tuple(p for p in self.parts if not p.proved)


def decide_zero(expr: sp.Basic) -> tuple[bool, sp.Basic]:
    """Is ``expr`` identically 0? Cheap forms first (expand, cancel), simplify only if needed."""
    e = sp.expand(sp.sympify(expr))
    if e == 0:
        return True, e
    e = sp.cancel(sp.together(e))
    if e == 0:
        return True, e
    e = sp.simplify(e)
    return e == 0, e


def decide_nonnegative(expr: sp.Basic) -> tuple[bool, sp.Basic]:
    """Does sympy's assumption system prove ``expr >= 0``? Tries the expression, its expansion and
    factorisation, and numerator / denominator of its rational form."""
    e = sp.sympify(expr)
    if e.is_nonnegative:
        return True, e
    num, den = sp.fraction(sp.together(e))
    den_forms = [den] if den.is_positive else [sp.expand(den), sp.factor(den)]
    if any(d.is_positive for d in den_forms):
        for form in (num, sp.expand(num), sp.factor(num)):
            if form.is_nonnegative:
                return True, form / den
    for form in (sp.expand(e), sp.factor(e)):
        if form.is_nonnegative:
            return True, form
    return False, sp.factor(sp.together(e))


def decide_psd(expr: sp.Basic, variables: tuple[sp.Symbol, ...]) -> tuple[bool, sp.Basic]:
    """Is the homogeneous quadratic ``expr`` in ``variables`` >= 0 for all real values (matrix PSD)?"""
    e = sp.expand(expr)
    poly = sp.Poly(e, *variables)
    if any(sum(mon) != 2 for mon in poly.monoms()):
        return False, e
    hess = sp.hessian(e, variables) / 2
    psd = hess.is_positive_semidefinite
    return bool(psd), e


def _zero(name: str, expr: sp.Basic) -> Part:
    ok, res = decide_zero(expr)
    return Part(name, "zero", ok, res)


def _nonneg(name: str, expr: sp.Basic) -> Part:
    ok, res = decide_nonnegative(expr)
    return Part(name, "nonnegative", ok, res)


def _psd(name: str, expr: sp.Basic, variables: tuple[sp.Symbol, ...]) -> Part:
    ok, res = decide_psd(expr, variables)
    return Part(name, "psd", ok, res, variables)


def _true(name: str, value: bool | sp.Basic, residual: sp.Basic = sp.S.Zero) -> Part:
    return Part(name, "true", bool(value is True or value == sp.true), residual)


def _unit(name: str) -> tuple[sp.Expr, sp.Symbol]:
    """A parameter in (0, 1]: 1/(1 + s) with s >= 0."""
    s = sp.Symbol(name, nonnegative=True)
    return 1 / (1 + s), s


def _unit_open(name: str) -> tuple[sp.Expr, sp.Symbol]:
    """A parameter in [0, 1): s/(1 + s) with s >= 0."""
    s = sp.Symbol(name, nonnegative=True)
    return s / (1 + s), s


def _slack(name: str) -> sp.Symbol:
    return sp.Symbol(name, nonnegative=True)


def _vec(name: str, p: int) -> sp.Matrix:
    return sp.Matrix([sp.Symbol(f"{name}_{k}", real=True) for k in range(p)])


def _dot(a: sp.Matrix, b: sp.Matrix) -> sp.Expr:
    return (a.T * b)[0, 0]


def _expect(expr: sp.Expr, noise: sp.Matrix, cov: sp.Matrix) -> sp.Expr:
    """E[expr] over a mean-zero random vector ``noise`` with covariance ``cov`` (expr of degree <= 2 in it)."""
    poly = sp.Poly(sp.expand(expr), *list(noise))
    out = sp.S.Zero
    for monom, coeff in poly.terms():
        deg = sum(monom)
        if deg == 0:
            out += coeff
        elif deg == 2:
            idx = [k for k, e in enumerate(monom) for _ in range(e)]
            out += coeff * cov[idx[0], idx[1]]
        elif deg > 2:
            raise ValueError("expectation of a term of degree > 2 in the noise")
    return out


# the papers' constants, as defaults of the steps' keyword arguments
HALF = sp.Rational(1, 2)
QUARTER = sp.Rational(1, 4)
FIVE_QUARTERS = sp.Rational(5, 4)
SIX_FIFTHS = sp.Rational(6, 5)
FOUR_FIFTHS = sp.Rational(4, 5)
SQRT10 = sp.sqrt(10)

STEPS: dict[str, Callable[..., StepResult]] = {}
_LABELS: dict[str, str] = {}


def _step(label: str) -> Callable[[Callable[..., tuple[Part, ...]]], Callable[..., StepResult]]:
    def wrap(fn_: Callable[..., tuple[Part, ...]]) -> Callable[..., StepResult]:
        def run(**kwargs: object) -> StepResult:
            return StepResult(fn_.__name__, label, tuple(fn_(**kwargs)))

        run.__name__ = fn_.__name__
        run.__doc__ = fn_.__doc__
        run.__wrapped__ = fn_  # type: ignore[attr-defined]
        STEPS[fn_.__name__] = run
        _LABELS[fn_.__name__] = label
        return run

    return wrap


def steps() -> dict[str, Callable[..., StepResult]]:
    """Every registered step, by name: the proof modules of the papers in the registry are imported first."""
    from fedbounds.theory.registry import load_papers

    load_papers()
    return STEPS


def run_step(name: str, **kwargs: object) -> StepResult:
    """Run the registered step ``name``; ValueError listing the steps for an unknown name."""
    known = steps()
    if name not in known:
        raise ValueError(f"unknown proof step {name!r}; known steps: {', '.join(sorted(known))}")
    return known[name](**kwargs)


def counterexample(result: StepResult, *, tries: int = 3000, seed: int = 0) -> dict[str, float] | None:
    """Admissible values (every free symbol drawn from a small grid respecting its assumptions) at which a
    failed part of ``result`` is violated: negative for an inequality, non-zero for an identity. None if none
    is found."""
    rng = random.Random(seed)
    pos = [sp.Rational(1, 10), sp.Rational(1, 2), 1, 2, 10]
    for part in result.failed():
        expr = part.residual
        syms = sorted(expr.free_symbols, key=lambda s: s.name)
        if not syms:
            value = float(sp.N(expr))
            if (part.kind == "zero" and value != 0) or value < 0:
                return {}
            continue

        def grid(s: sp.Symbol) -> list:
            if s.is_integer:
                return [1, 2, 3, 10]
            if s.is_positive:
                return pos
            if s.is_nonnegative:
                return [0, *pos]
            return [-2, -1, sp.Rational(-1, 2), 0, *pos]

        f = sp.lambdify(syms, expr, modules="math")
        grids = [grid(s) for s in syms]
        for _ in range(tries):
            point = [rng.choice(g_) for g_ in grids]
            try:
                value = float(f(*[float(v) for v in point]))
            except (ZeroDivisionError, ValueError, OverflowError):
                continue
            if math.isnan(value):
                continue
            violated = abs(value) > 1e-12 if part.kind == "zero" else value < -1e-12
            if violated:
                return {s.name: float(v) for s, v in zip(syms, point)}
    return None


