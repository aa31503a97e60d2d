"""Proofs that reach their claims (issue 12, item 5; docs/provenance.md §1.2).

Every ``derived`` claim names in ``Claim.reaches`` the proof steps that take its own expression (its conclusion, or an
expression of ``extra`` it states) as a keyword argument. For each such entry: the step, fed the claim's expression,
is proved; fed the expression multiplied by 2 and divided by 2, at least one of the two runs is NOT proved. A proof that
still passes with both perturbations does not check the expression it is cited for.
"""

from __future__ import annotations

import pytest
import sympy as sp
from fedbounds.theory.core import proofs
from fedbounds.theory.core.claims import Status
from fedbounds.theory.registry import all_claims

DERIVED = [c for c in all_claims() if c.status is Status.DERIVED]
REACHES = [(c, step, kw, key) for c in DERIVED for step, kw, key in c.reaches]


def test_every_derived_claim_reaches_a_nonzero_expression() -> None:
    assert DERIVED
    for claim in DERIVED:
        assert claim.reaches, f"{claim.id}: derived but names no step that takes its expression"
        exprs = [claim.expression(key) for _, _, key in claim.reaches]
        assert any(isinstance(e, sp.Basic) and e != 0 for e in exprs), f"{claim.id}: only zero expressions reached (x2, /2 are no-ops)"


def test_every_reached_step_defaults_to_the_claims_expression() -> None:
    """The keyword's default is the claim's own expression (the step proves the stored formula, not a copy), or None
    (the step then builds that very expression from the formula module)."""
    import inspect

    for claim, step, kw, key in REACHES:
        fn = proofs.steps()[step].__wrapped__
        params = inspect.signature(fn).parameters
        assert kw in params, f"{claim.id}: step {step} has no keyword {kw!r}"
        default = params[kw].default
        if default is None:
            continue
        assert sp.simplify(sp.sympify(default) - sp.sympify(claim.expression(key))) == 0, \
            f"{claim.id}: {step}({kw}=...) defaults to {default}, not to the claim's {key}"


@pytest.mark.parametrize(("claim", "step", "kw", "key"), REACHES, ids=[f"{r[0].id}:{r[1]}:{r[2]}" for r in REACHES])
def test_perturbing_the_claim_breaks_its_proof(claim, step: str, kw: str, key: str) -> None:
    expr = claim.expression(key)
    assert proofs.run_step(step, **{kw: expr}).proved, f"{claim.id}: {step} fails on the claim's own {key}"
    outcomes = {factor: proofs.run_step(step, **{kw: expr * factor}).proved for factor in (sp.Integer(2), sp.Rational(1, 2))}
    assert not all(outcomes.values()), f"{claim.id}: {step} still proved with {key} x2 and /2: it does not reach the claim"


def test_every_derived_claim_has_a_reach_covering_its_conclusion_or_states_why() -> None:
    """A derived claim's conclusion is reached, unless it is zero (then an expression of extra is)."""
    for claim in DERIVED:
        keys = {key for _, _, key in claim.reaches}
        if claim.conclusion is not None and claim.conclusion != 0:
            assert "conclusion" in keys, f"{claim.id}: its conclusion is not reached by any proof step"
