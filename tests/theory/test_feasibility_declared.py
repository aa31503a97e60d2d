"""Feasibility is declared, not hand-coded (issue 11).

* A new theorem costs a declaration: a textbook one (the proximal gradient method's O(1/T) rate on convex
  composite problems) is declared here, registered through the public API, and answered by the generic
  solver, with no code of its own.
"""

from __future__ import annotations

import pytest
import sympy as sp
from fedbounds.theory.core.feasibility import (
    Condition,
    GuaranteeSpec,
    Param,
    TermSpec,
    TheoremSpec,
    Unknown,
)
from fedbounds.theory.feasibility import THEOREMS, declarations, feasibility, register_theorem, unregister_theorem

# ---------------------------------------------------------------------------------------------------------
# a textbook theorem, declared in the test (Beck, First-Order Methods in Optimization, Thm 10.21):
# proximal gradient with step eta <= 1/L on F = f + g, f convex and L-smooth, g convex:
#     F(x_T) - F* <= ||x_0 - x*||^2 / (2 eta T)    =>  at eta = 1/L,  T >= L R_0^2 / (2 epsilon)
# ---------------------------------------------------------------------------------------------------------

L_, R0, eta_, T_ = sp.symbols("L_pg R_0 eta_pg T_pg", positive=True)

PROX_GRAD = TheoremSpec(
    name="textbook.prox_grad",
    title="Proximal gradient (convex composite, O(1/T))",
    constants=(
        Param("L", L_, "positive", required=True, help="smoothness of f"),
        Param("R0", R0, "nonnegative", help="||x_0 - x*||, if known"),
    ),
    params=(Param("eta", eta_, "positive", help="step size"), Param("T", T_, "integer", horizon=True, help="rounds")),
    conditions=(Condition("step", "eta <= 1/L", "verbatim", "eta", bound=1 / L_),),
    guarantee=GuaranteeSpec(
        claim="textbook.prox_grad",
        quantity="F(x_T) - F*",
        relation="<=",
        horizon=T_,
        terms=(TermSpec("initial distance ||x_0 - x*||^2/(2 eta T)", R0**2 / (2 * eta_ * T_)),),
        floor=sp.S.Zero,
    ),
    unknowns=(Unknown(R0, "R0", "||x_0 - x*|| is rarely known"),),
)


@pytest.fixture
def prox_grad():
    register_theorem(PROX_GRAD)
    try:
        yield PROX_GRAD
    finally:
        unregister_theorem(PROX_GRAD.name)


def test_a_new_theorem_is_only_a_declaration(prox_grad) -> None:
    assert "textbook.prox_grad" in [d.name for d in declarations()]
    res = feasibility("textbook.prox_grad", {"L": 2.0, "R0": 3.0}, target=0.007)
    # the largest admissible step: eta = 1/L (rounded inward), and it is the binding condition
    assert res.step_sizes["eta_max"] == pytest.approx(0.5, rel=1e-9) and res.step_sizes["eta_max"] <= 0.5
    assert res.chosen["eta"] == res.step_sizes["eta_max"]
    assert res.admissible and res.binding == ("step",)
    # T >= L R_0^2/(2 epsilon) = 2 * 9 / 0.014 = 1285.7...: the smallest horizon is 1286
    rn = res.rounds_needed
    assert rn.flag == "exact" and rn.rounds == 1286
    # a given step past 1/L fails the condition
    bad = feasibility("textbook.prox_grad", {"L": 2.0, "R0": 3.0}, {"eta": 0.6})
    assert not bad.admissible and bad.condition("step").meets is False
    # with R_0 unknown, the rounds are exact but symbolic in R_0
    sym = feasibility("textbook.prox_grad", {"L": 2.0}, target=0.007).rounds_needed
    assert sym.flag == "symbolic" and sym.rounds is None
    assert {s.name for s in sym.expression.free_symbols} == {"R_0"}
    assert float(sym.expression.subs(R0, 3.0)) == pytest.approx(2 * 9 / (2 * 0.007), rel=1e-9)
    # and at a horizon, the guarantee's one term is a number
    at = feasibility("textbook.prox_grad", {"L": 2.0, "R0": 3.0}, {"T": 100})
    assert at.guarantee.total == pytest.approx(9 / (2 * 0.5 * 100), rel=1e-9)
    # inputs are validated from the declaration alone
    with pytest.raises(ValueError, match="L must be > 0"):
        feasibility("textbook.prox_grad", {"L": -1.0})
    with pytest.raises(ValueError, match="L is required"):
        feasibility("textbook.prox_grad", {})
    with pytest.raises(ValueError, match="T must be an integer >= 1"):
        feasibility("textbook.prox_grad", {"L": 1.0}, {"T": 0.5})


def test_registration_is_checked_and_reversible(prox_grad) -> None:
    with pytest.raises(ValueError, match="already registered"):
        register_theorem(PROX_GRAD)
    unregister_theorem(PROX_GRAD.name)
    with pytest.raises(ValueError, match="theorem must be one of"):
        feasibility("textbook.prox_grad", {"L": 1.0})
    register_theorem(PROX_GRAD)
    assert set(THEOREMS) == {"fednmap.theorem5", "fednmap.theorem8", "ds.theorem5_3", "ds.corollary_ii"}


def test_the_papers_theorems_are_declarations() -> None:
    names = {d.name for d in declarations()}
    assert set(THEOREMS) <= names
    for d in declarations():
        assert isinstance(d, TheoremSpec)
        assert d.conditions and d.guarantee is not None
